"""autoinspector-node, unmodified, against the live service: the library's own calls (car,
moto, bike, cellphone, machinery, people, goods creation, goods add/update, the flat machinery
update, presign with an identity, finish and its `message`, a report request without a body,
template preview, the `not_provided` filter, an error's `detail`), and what the service stored.

Needs `node` and the library built by `make node-client` (build/clients/autoinspector-node,
or INSPECTLANG_NODE_CLIENT): nothing is downloaded while the tests run.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
from pathlib import Path
from typing import Any

import httpx
import pytest

from server.auth import create_company
from server.dashboard import accounts
from server.db import Database
from tests.server.test_dashboard_pages import PASSWORD, Browserish

ROOT = Path(__file__).resolve().parents[2]
CLIENT = Path(os.environ.get("INSPECTLANG_NODE_CLIENT", ROOT / "build/clients/autoinspector-node"))
SCRIPT = Path(__file__).with_name("node_client_calls.js")

pytestmark = pytest.mark.skipif(
    shutil.which("node") is None or not (CLIENT / "dist" / "index.js").exists(),
    reason="node or the built client is missing: run `make node-client`",
)


def run_client(base_url: str, api_key: str) -> dict[str, Any]:
    done = subprocess.run(
        ["node", str(SCRIPT), str(CLIENT), api_key],
        env={**os.environ, "AUTOINSPECTOR_API_BASE_URL": base_url},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    results: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return results


def test_node_client_calls_work_unmodified(
    live_server: str, client: httpx.Client, company: dict[str, Any]
) -> None:
    headers = {"x-api-key": company["testKey"]}
    results = run_client(live_server, company["testKey"])
    refused = {name: r["error"] for name, r in results.items() if not r["ok"]}
    assert set(refused) == {"inspections.retrieve.missing"}, refused
    missing = refused["inspections.retrieve.missing"]
    assert missing["code"] == "inspection_not_found" and missing["detail"] == missing["description"]
    value = {name: r["value"] for name, r in results.items() if r["ok"]}
    assert value["templates.preview"] == value["templates.list"]

    def stored(name: str) -> dict[str, Any]:
        found = client.get(f"/v1/inspection/{value[name]['inspectionId']}", headers=headers)
        assert found.status_code == 200, found.text
        inspection: dict[str, Any] = found.json()
        return inspection

    assert stored("car.create")["metadata"] == {"claim": "C-991"}  # inspections.update
    car = stored("car.create")["products"][0]["car"]
    assert car["year"] == 2020 and car["make"] == "FIAT" and car["chassis"] == "8AJFB8CD1K1234567"
    assert stored("moto.create")["products"][0]["moto"]["year"] == 2020
    assert stored("bike.create")["products"][0]["bike"]["serialNumber"] == "WTU1"
    assert stored("cellphone.create")["products"][0]["cellphone"]["price"] == 900
    machinery = stored("machinery.create")["products"][0]["machinery"]
    assert machinery["type"] == "backhoe" and machinery["year"] == 2019
    assert machinery["make"] == "CAT" and machinery["purpose"] == "Vial"  # the flat update
    presigned = value["inspections.presignDetail"]
    assert presigned["identity"]["type"] == "internalId" and presigned["identity"]["userId"]
    assert httpx.get(presigned["url"]).status_code == 200
    assert value["inspections.finish"]["message"] == "Inspection finished"
    assert value["inspections.finish"]["status"] == "completed"
    assert value["inspections.createReportRequest"]["_id"]
    assert stored("people.create")["identity"]["sex"] == 1
    goods = value["inspections.retrieve"]["products"]
    assert [p["_id"] for p in goods] == [
        *value["goods.create"]["productIds"],
        *value["goods.addGoods"]["productIds"],
    ]
    assert goods[0]["goods"]["price"] == 15000 and goods[0]["goods"]["serialNumber"] == "A23r-2"
    assert goods[1]["goods"]["make"] == "Rainbow"
    listed = [i["_id"] for i in value["inspections.list"]["inspections"]]
    assert listed == [value["car.create"]["inspectionId"], value["moto.create"]["inspectionId"]]


OAUTH_SCRIPT = Path(__file__).with_name("node_oauth_calls.js")


def test_node_client_oauth_calls_work_unmodified(
    live_server: str, client: httpx.Client, db: Database
) -> None:
    """Issue 36: the library's partner-application calls (`OAuth.ts`, `User.ts`,
    `Memberships.ts`, `Template.ts`, `Inspections.retrieve`, the products' `create` with
    `access_token`), after a member of another company approved the application."""
    from tests.server.test_partner_apps import authorize, register

    partner = create_company(db, f"Broker {secrets.token_hex(3)}")
    dealer = create_company(db, f"Dealer {secrets.token_hex(3)}")
    owner, member = (f"{who}-{secrets.token_hex(3)}@example.com" for who in ("owner", "member"))
    accounts.create_account(db, partner["companyId"], owner, "owner", PASSWORD)
    accounts.create_account(db, dealer["companyId"], member, "editor", PASSWORD)
    browsers = [Browserish(live_server), Browserish(live_server)]
    for browser, email in zip(browsers, (owner, member), strict=True):
        assert browser.sign_in(email).status_code == 303
    credentials = register(browsers[0], "Node partner")
    code = authorize(browsers[1], credentials["client_app_id"])["code"][0]
    for browser in browsers:
        browser.http.close()
    done = subprocess.run(
        ["node", str(OAUTH_SCRIPT), str(CLIENT), partner["testKey"],
         credentials["client_app_id"], credentials["client_secret"], code],
        env={**os.environ, "AUTOINSPECTOR_API_BASE_URL": live_server},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    results: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    refused = {name: r["error"] for name, r in results.items() if not r["ok"]}
    assert set(refused) == {"oauth.refreshAccessToken.reused"}, refused
    assert refused["oauth.refreshAccessToken.reused"]["code"] == "refresh_token_reused"
    value = {name: r["value"] for name, r in results.items() if r["ok"]}
    assert len(value) == 11
    assert value["oauth.user.memberships.list"][0]["company"]["_id"] == dealer["companyId"]
    made = {value[kind]["inspectionId"] for kind in ("car.create", "people.create", "goods.create")}
    listed = value["oauth.user.inspections.list.all"]
    assert {item["_id"] for item in listed["inspections"]} == made
    assert listed["pagination"]["totalDocs"] == 3
    assert value["oauth.user.inspections.list.me"]["pagination"]["totalDocs"] == 3
    assert value["inspections.retrieve"]["producer"]["internalId"] == member
    dealer_templates = client.get(
        "/v1/inspection/template", headers={"x-api-key": dealer["testKey"]}
    )
    assert value["templates.listWithOAuth"] == dealer_templates.json()
    # What the member's company's own key sees: the inspections the token made.
    for inspection_id in made:
        found = client.get(
            f"/v1/inspection/{inspection_id}", headers={"x-api-key": dealer["testKey"]}
        )
        assert found.status_code == 200
