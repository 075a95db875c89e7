"""The demo company of `inspectlang serve --demo`: created once, reused on every later run.

Its keys are shown once by the admin service, so they are kept in `<data_dir>/demo-keys.json`
(mode 0600) to be printed again on the next start. When the stored company is gone (another
database) it is created again; when a stored key no longer works (revoked), a new one is issued.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from server.auth import AuthContext, CompanyKeys, authenticate_key, create_company, revoke_key
from server.db import Database
from server.errors import ApiError
from server.tables import Company

DEMO_COMPANY_NAME = "Demo Company"
DEMO_MEMBER = "demo-user"
DEMO_KEYS_FILE = "demo-keys.json"
#: The demo owner's dashboard login, printed beside the keys (a demo, not a secret).
DEMO_OWNER_EMAIL = "owner@demo.example.com"
DEMO_OWNER_PASSWORD = "demo-owner-password"


def demo_keys_path(data_dir: Path) -> Path:
    return data_dir / DEMO_KEYS_FILE


def ensure_demo_company(db: Database, data_dir: Path) -> CompanyKeys:
    """The demo company's id and working test and live keys, creating what is missing."""
    path = demo_keys_path(data_dir)
    stored = _read_keys(path)
    if stored is not None and _company_exists(db, stored["companyId"]):
        keys: CompanyKeys = {**stored}
        company_id = keys["companyId"]
        if not _key_works(db, keys["testKey"], company_id):
            keys["testKey"] = revoke_key(db, company_id, "test")
        if not _key_works(db, keys["liveKey"], company_id):
            keys["liveKey"] = revoke_key(db, company_id, "live")
    else:
        keys = create_company(db, DEMO_COMPANY_NAME, [DEMO_MEMBER])
    if keys != stored:
        _write_keys(path, keys)
    ensure_demo_owner(db, keys["companyId"])
    return keys


def ensure_demo_owner(db: Database, company_id: str) -> None:
    """The demo company's dashboard owner; an account of that address elsewhere (an older demo
    company) is moved to this one with the demo password again."""
    from server.dashboard.accounts import create_account, find_account, reset_demo_account

    found = find_account(db, DEMO_OWNER_EMAIL)
    if found is None:
        create_account(db, company_id, DEMO_OWNER_EMAIL, "owner", DEMO_OWNER_PASSWORD)
    elif found["companyId"] != company_id or found["role"] != "owner":
        reset_demo_account(db, found["id"], company_id, DEMO_OWNER_PASSWORD)


def _company_exists(db: Database, company_id: str) -> bool:
    with db.session() as session:
        return session.get(Company, company_id) is not None


def _key_works(db: Database, key: str, company_id: str) -> bool:
    try:
        context: AuthContext = authenticate_key(db, key)
    except ApiError:
        return False
    return context.company_id == company_id


def _read_keys(path: Path) -> CompanyKeys | None:
    try:
        data: Any = json.loads(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        return None
    if not isinstance(data, dict) or not all(
        isinstance(data.get(field), str) for field in ("companyId", "testKey", "liveKey")
    ):
        return None
    return {"companyId": data["companyId"], "testKey": data["testKey"], "liveKey": data["liveKey"]}


def _write_keys(path: Path, keys: CompanyKeys) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(".tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump(keys, handle, indent=2)
        handle.write("\n")
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, path)


def describe(keys: CompanyKeys, base_url: str) -> str:
    """The text `serve --demo` prints before serving."""
    return "\n".join(
        [
            f"Demo company ({DEMO_COMPANY_NAME}, member {DEMO_MEMBER!r}):",
            f"  companyId: {keys['companyId']}",
            f"  test key:  {keys['testKey']}",
            f"  live key:  {keys['liveKey']}",
            f"  try: curl -H 'x-api-key: {keys['testKey']}' {base_url}/v1/inspection/template",
            f"  dashboard: {base_url}/dashboard/  (sign in as {DEMO_OWNER_EMAIL}"
            f" / {DEMO_OWNER_PASSWORD})",
            f"  API docs:  {base_url}/schema",
            "Delivered messages (no email/SMS/WhatsApp provider configured, docs/delivery.md):",
            f"  outbox:    {base_url}/dev/outbox  (or: inspectlang outbox)",
        ]
    )
