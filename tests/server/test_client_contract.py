"""Contract tests: the bodies the public client libraries (autoinspector-node and
autoinspector-php) send, byte for byte as they build them, and what the service stores.

Each body below is copied from the clients' types and test stubs (numeric strings, arrays, PHP's
`[]` for an empty map); each test checks the stored inspection, not only the status code.
"""

from __future__ import annotations

import hashlib
import hmac
import io
import json
from typing import Any

import httpx
from PIL import Image as PILImage

from server import tokens
from server.auth import add_member
from server.db import Database
from server.inspections.tables import InspectionRecord
from server.settings import Settings
from server.webhooks import service as webhooks

DELIVERY = {"channel": "email", "destination": "driver@example.com"}
CONSUMER = {
    "firstName": "Luciano",
    "lastName": "Alvarez",
    "email": "lucianoalvarez1212@gmail.com",
    "identification": "3213232",
}


def create(
    client: httpx.Client, headers: dict[str, str], kind: str, body: dict[str, Any]
) -> dict[str, Any]:
    full = {
        "templateId": "easy",
        "locale": "es_AR",
        "consumer": CONSUMER,
        "delivery": DELIVERY,
        **body,
    }
    response = client.post(f"/v1/inspection/{kind}", json=full, headers=headers)
    assert response.status_code == 201, response.text
    created: dict[str, Any] = response.json()
    return created


def read(client: httpx.Client, headers: dict[str, str], inspection_id: str) -> dict[str, Any]:
    response = client.get(f"/v1/inspection/{inspection_id}", headers=headers)
    assert response.status_code == 200, response.text
    found: dict[str, Any] = response.json()
    return found


def product_data(inspection: dict[str, Any], kind: str, index: int = 0) -> dict[str, Any]:
    data: dict[str, Any] = inspection["products"][index][kind]
    return data


def test_car_and_moto_shapes_with_numeric_strings(
    client: httpx.Client, test_headers: dict[str, str]
) -> None:
    car = {
        "plate": "AB705SU",
        "color": "black",
        "milage": "15000",
        "use": "particular",
        "year": "2020",
        "make": "JEEP",
        "model": "RENEGADE",
        "chassis": "8AJFB8CD1K1234567",
    }
    for kind in ("car", "moto"):
        created = create(client, test_headers, kind, {kind: car})
        stored = product_data(read(client, test_headers, created["inspectionId"]), kind)
        assert stored == {**car, "milage": 15000, "year": 2020}


def test_bike_and_cellphone_shapes(client: httpx.Client, test_headers: dict[str, str]) -> None:
    for kind in ("bike", "cellphone"):
        item = {"make": "Trek", "model": "Marlin 5", "price": 1200.5, "serialNumber": "WTU123"}
        created = create(client, test_headers, kind, {kind: item})
        assert product_data(read(client, test_headers, created["inspectionId"]), kind) == item
        string_price = create(client, test_headers, kind, {kind: {**item, "price": "14400"}})
        stored = product_data(read(client, test_headers, string_price["inspectionId"]), kind)
        assert stored["price"] == 14400


def test_machinery_shape_and_vocabularies(
    client: httpx.Client, test_headers: dict[str, str]
) -> None:
    machinery = {
        "make": "JOHN DEERE",
        "model": "V2",
        "year": "2019",
        "color": "black",
        "purpose": "Agrícola",
        "use": "PRIVADO",
        "type": "backhoe",
    }
    created = create(client, test_headers, "machinery", {"machinery": machinery})
    stored = product_data(read(client, test_headers, created["inspectionId"]), "machinery")
    assert stored == {**machinery, "year": 2019}
    for field, bad in (("type", "spaceship"), ("purpose", "Lunar")):
        response = client.post(
            "/v1/inspection/machinery",
            json={
                "templateId": "easy",
                "locale": "es_AR",
                "delivery": DELIVERY,
                "machinery": {field: bad},
            },
            headers=test_headers,
        )
        assert response.status_code == 400, response.text
        assert response.json()["errors"][0]["field"] == f"machinery.{field}"


GOODS = [
    {
        "category": "electronics",
        "type": "camera",
        "make": "GO PRO",
        "model": "PRO",
        "price": "14400",
        "serialNumber": "A23r",
    },
    {"category": "sports", "type": "kayak", "make": "Rainbow", "model": "Oasis", "price": "900"},
]


def test_goods_array_answers_product_ids(
    client: httpx.Client, test_headers: dict[str, str]
) -> None:
    created = create(client, test_headers, "goods", {"goods": GOODS})
    assert len(created["productIds"]) == 2 and created["productId"] == created["productIds"][0]
    inspection = read(client, test_headers, created["inspectionId"])
    assert [p["_id"] for p in inspection["products"]] == created["productIds"]
    assert product_data(inspection, "goods", 0) == {**GOODS[0], "price": 14400}
    assert product_data(inspection, "goods", 1) == {**GOODS[1], "price": 900}
    one = create(client, test_headers, "goods", {"goods": GOODS[:1]})
    assert one["productIds"] == [one["productId"]]
    bad = client.post(
        "/v1/inspection/goods",
        json={
            "templateId": "easy",
            "locale": "es_AR",
            "delivery": DELIVERY,
            "goods": [{**GOODS[0], "category": "x"}],
        },
        headers=test_headers,
    )
    assert bad.status_code == 400 and bad.json()["errors"][0]["field"] == "goods.0.category"


def test_add_goods_then_update_one_with_post(
    client: httpx.Client, test_headers: dict[str, str]
) -> None:
    created = create(client, test_headers, "goods", {"goods": GOODS[:1]})
    inspection_id = created["inspectionId"]
    added = client.post(
        f"/v1/inspection/goods/{inspection_id}", json={"goods": GOODS[1:]}, headers=test_headers
    )
    assert added.status_code == 201, added.text
    (new_id,) = added.json()["productIds"]
    inspection = read(client, test_headers, inspection_id)
    assert [p["_id"] for p in inspection["products"]] == [created["productId"], new_id]
    assert product_data(inspection, "goods", 1)["make"] == "Rainbow"
    updated = client.post(
        f"/v1/inspection/goods/{new_id}",
        json={"good": {"price": "950", "serialNumber": "K-9"}},
        headers=test_headers,
    )
    assert updated.status_code == 200, updated.text
    stored = product_data(read(client, test_headers, inspection_id), "goods", 1)
    assert stored["price"] == 950 and stored["serialNumber"] == "K-9"
    unknown = client.post(
        "/v1/inspection/goods/0123456789abcdef01234567", json={"good": {}}, headers=test_headers
    )
    assert unknown.status_code == 404


def test_consumer_sex_as_number_or_word(client: httpx.Client, test_headers: dict[str, str]) -> None:
    """The clients' words are stored as the spec's number (ISO/IEC 5218 codes)."""
    for sent, stored in (("male", 1), ("female", 2), ("not_applicable", 9), (0, 0), ("2", 2)):
        created = create(
            client, test_headers, "people", {"consumer": {**CONSUMER, "sex": sent}, "people": {}}
        )
        identity = read(client, test_headers, created["inspectionId"])["identity"]
        assert identity["sex"] == stored, sent
    response = client.post(
        "/v1/inspection/people",
        json={
            "templateId": "easy",
            "locale": "es_AR",
            "delivery": DELIVERY,
            "consumer": {"sex": "unknown"},
        },
        headers=test_headers,
    )
    assert response.status_code == 400 and response.json()["errors"][0]["field"] == "consumer.sex"


def test_php_empty_array_for_empty_maps(client: httpx.Client, test_headers: dict[str, str]) -> None:
    created = create(client, test_headers, "people", {"people": [], "metadata": [], "inputs": []})
    inspection = read(client, test_headers, created["inspectionId"])
    assert inspection["metadata"] == {}


def test_errors_carry_detail(client: httpx.Client, test_headers: dict[str, str]) -> None:
    response = client.get("/v1/inspection/0123456789abcdef01234567", headers=test_headers)
    body = response.json()
    assert response.status_code == 404 and body["detail"] == body["description"]


def test_template_preview_answers_the_list(
    client: httpx.Client, test_headers: dict[str, str]
) -> None:
    listed = client.get(
        "/v1/inspection/template", params={"inspectionType": "car"}, headers=test_headers
    )
    preview = client.get(
        "/v1/inspection/template/preview", params={"inspectionType": "car"}, headers=test_headers
    )
    assert preview.status_code == 200 and preview.json() == listed.json()


def test_veredict_not_provided_filter(client: httpx.Client, test_headers: dict[str, str]) -> None:
    created = create(client, test_headers, "car", {"car": {"plate": "NP123AB"}})
    response = client.get(
        "/v1/inspection",
        params={"veredict": "not_provided", "plate": "NP123AB"},
        headers=test_headers,
    )
    assert response.status_code == 200, response.text
    assert [i["_id"] for i in response.json()["inspections"]] == [created["inspectionId"]]


def _png() -> bytes:
    buffer = io.BytesIO()
    PILImage.new("RGB", (4, 3), (200, 30, 30)).save(buffer, format="PNG")
    return buffer.getvalue()


def test_people_configuration_overrides_the_template_for_this_inspection_only(
    client: httpx.Client, test_headers: dict[str, str], db: Database
) -> None:
    configuration = {
        "sex": {"run": False, "required": False},
        "dni": {"run": True, "required": False},
        "date": [],
    }
    configured = create(
        client, test_headers, "people", {"people": {"configuration": configuration}}
    )
    plain = create(client, test_headers, "people", {"people": {}})
    settings = {}
    for created in (configured, plain):
        response = client.post(
            f"/v1/inspection/image/{created['productId']}",
            files={"image": ("dni.png", _png(), "image/png"), "data": (None, '{"side": "dni"}')},
            headers=test_headers,
        )
        assert response.status_code == 201, response.text
        with db.session() as session:
            record = session.get(InspectionRecord, created["inspectionId"])
            assert record is not None
            (image,) = record.state["products"][0]["images"]
        settings[created["inspectionId"]] = {
            v["validation"]: (v["run"], v["required"]) for v in image["validations"]
        }
    assert settings[configured["inspectionId"]]["sex"] == (False, False)
    assert settings[configured["inspectionId"]]["dni"] == (True, False)
    assert settings[plain["inspectionId"]]["dni"] == (True, True)  # the template's, untouched
    assert settings[plain["inspectionId"]]["sex"] == (True, False)


def test_configuration_of_a_validation_the_template_does_not_have_is_refused(
    client: httpx.Client, test_headers: dict[str, str]
) -> None:
    response = client.post(
        "/v1/inspection/machinery",
        json={
            "templateId": "easy",
            "locale": "es_AR",
            "delivery": DELIVERY,
            "machinery": {"type": "tractor", "configuration": {"wings": {"run": True}}},
        },
        headers=test_headers,
    )
    body = response.json()
    assert response.status_code == 400 and body["code"] == "unknown_validation"
    assert "wings" in body["description"]
    assert body["errors"][0]["field"] == "machinery.configuration.wings"
    bad = client.post(
        "/v1/inspection/people",
        json={
            "templateId": "easy",
            "locale": "es_AR",
            "delivery": DELIVERY,
            "people": {"configuration": {"dni": {"run": "yes"}}},
        },
        headers=test_headers,
    )
    # A wrong type is refused at the door (`server.bodies.decode_shape`), naming the setting.
    refused = bad.json()
    assert (bad.status_code, refused["code"], refused["errors"][0]["field"]) == (
        400,
        "invalid_body",
        "people.configuration.dni.run",
    )


def test_legacy_webhook_signature_verifies_as_the_clients_do() -> None:
    """Node: `createHmac('sha256', webhookSecret).update(body).digest('hex')`; PHP likewise."""
    secret = webhooks.new_secret()
    body = b'{"event":"inspection_created","payload":{"_id":"x"}}'
    headers = webhooks.signed_headers(secret, "msg_1", 1_700_000_000, body)
    expected = hmac.new(secret.encode("utf-8"), body, hashlib.sha256).hexdigest()
    assert hmac.compare_digest(headers["autoinspector-signature"], expected)


def test_explanation_over_the_api(client: httpx.Client, test_headers: dict[str, str]) -> None:
    created = create(client, test_headers, "car", {"car": {"plate": "EX123AB"}})
    inspection_id = created["inspectionId"]
    finished = client.post(f"/v1/inspection/finish/{inspection_id}", headers=test_headers)
    assert finished.status_code == 200, finished.text
    response = client.get(f"/v1/inspection/{inspection_id}/explanation", headers=test_headers)
    assert response.status_code == 200, response.text
    explanation = response.json()
    assert explanation["veredict"] == finished.json()["veredict"]
    assert explanation["missing"], "no photo was taken: each missing one is explained"
    for condition in explanation["verdict"]:
        assert condition["line"] == condition["span"][0] >= 1
        assert "holds" in condition and "values" in condition
    inline = client.get(
        f"/v1/inspection/{inspection_id}", params={"explain": "true"}, headers=test_headers
    )
    assert inline.json()["explanation"] == explanation
    assert (
        "explanation"
        not in client.get(f"/v1/inspection/{inspection_id}", headers=test_headers).json()
    )
    bad = client.get(
        f"/v1/inspection/{inspection_id}", params={"explain": "maybe"}, headers=test_headers
    )
    assert bad.status_code == 400
    unknown = client.get(
        "/v1/inspection/0123456789abcdef01234567/explanation", headers=test_headers
    )
    assert unknown.status_code == 404


#: Every validation the client libraries' configuration types name, per product.
CLIENT_CONFIGURATIONS = {
    "people": (
        "full_name",
        "sex",
        "age",
        "dni",
        "birthdate",
        "face_comparison",
        "date",
        "distance",
        "recaptured",
    ),
    "goods": ("serialNumber", "date", "distance", "recaptured"),
    "machinery": ("type", "purpose", "use", "plate", "date", "distance", "recaptured"),
}


def test_builtin_templates_accept_every_configuration_the_clients_send(
    client: httpx.Client, test_headers: dict[str, str], db: Database
) -> None:
    for kind, names in CLIENT_CONFIGURATIONS.items():
        configuration = {name: {"run": True, "required": False} for name in names}
        product: Any = {"configuration": configuration}
        created = create(
            client, test_headers, kind, {kind: [product] if kind == "goods" else product}
        )
        with db.session() as session:
            record = session.get(InspectionRecord, created["inspectionId"])
            assert record is not None
            assert record.state["configuration"] == configuration


def test_builtin_templates_ask_for_the_client_fields(
    client: httpx.Client, test_headers: dict[str, str]
) -> None:
    """The built-in templates' schemas list the fields and their photos validate them."""
    expected = {
        "car": ({"plate", "make", "model", "color"}, {"plate", "make", "model", "color"}),
        "moto": ({"plate", "make", "model", "color"}, {"plate", "make", "model", "color"}),
        "bike": ({"serialNumber", "price"}, {"serialNumber"}),
        "cellphone": ({"serialNumber", "price"}, {"serialNumber"}),
        "goods": ({"serialNumber", "price", "category"}, {"serialNumber"}),
        "machinery": ({"type", "purpose", "use"}, {"type", "purpose", "use", "plate"}),
    }
    for kind, (fields, validations) in expected.items():
        (template,) = client.get(
            "/v1/inspection/template",
            params={"inspectionType": kind, "type": "built-in"},
            headers=test_headers,
        ).json()[:1]
        found = client.get(
            f"/v1/inspection/template/{template['_id']}", headers=test_headers
        ).json()
        asked = set(found["schema"]["properties"][kind]["properties"])
        validated = {v["validation"] for image in found["images"] for v in image["validations"]}
        assert fields <= asked, kind
        assert validations <= validated, kind


# --- issue 21 §1: what the libraries send that the service refused -----------------------------


def test_php_readme_phone_destination_takes_its_region_from_the_locale(
    client: httpx.Client, test_headers: dict[str, str]
) -> None:
    """The PHP library's README body: a local WhatsApp number and no `countryISO` (400
    `invalid_delivery_destination` before the fix). The locale's country is the region."""
    body = {
        "delivery": {"channel": "wsp", "destination": "3813635420", "disabled": False},
        "locale": "es_AR",
        "consumer": CONSUMER,
        "inputs": [],
        "car": {"plate": "AB705SU", "year": 2020},
        "templateId": "easy",
        "initialStatus": "started",
    }
    response = client.post("/v1/inspection/car", json=body, headers=test_headers)
    assert response.status_code == 201, response.text
    inspection = read(client, test_headers, response.json()["inspectionId"])
    assert inspection["delivery"]["channel"] == "wsp"
    assert inspection["delivery"]["destination"] == "+54******5420"
    # An explicit countryISO still wins over the locale: the number is not Brazilian.
    brazil = {**body, "delivery": {**body["delivery"], "countryISO": "BR"}}
    refused = client.post("/v1/inspection/car", json=brazil, headers=test_headers)
    assert refused.status_code == 400 and refused.json()["code"] == "invalid_delivery_destination"


POLICY_SOURCE = """\
template "PHP product update {n}"
    type: car

input policy
    type: text
    label: "Policy type"
    asked at: update

input invoice
    type: file
    label: "Invoice"
    asked at: update
    accepts: "application/pdf"
    maximum size: 1 KB

verdict
    approve when true
"""

PDF = b"%PDF-1.4\n% tiny test file\n%%EOF\n"


def _policy_template(client: httpx.Client, headers: dict[str, str]) -> dict[str, Any]:
    response = client.post(
        "/v1/inspection/template",
        content=POLICY_SOURCE.format(
            n=len(client.get("/v1/inspection/template", headers=headers).json())
        ).encode(),
        headers={**headers, "content-type": "text/plain"},
    )
    assert response.status_code == 201, response.text
    template: dict[str, Any] = response.json()
    return template


def test_php_product_update_with_product_id_inputs_and_file_parts(
    client: httpx.Client, test_headers: dict[str, str], live_server: str
) -> None:
    """`$autoinspector->inspections->car->update([...])`: multipart, the `data` part holding
    `{productId, car, inputs}` (file inputs taken out of `inputs`) and one part per file named
    by its input identifier (400 `unknown_field` for `productId` and `inputs` before the fix)."""
    template = _policy_template(client, test_headers)
    names = {i["label"]: i["identifier"] for i in template["inputs"]}
    created = create(
        client,
        test_headers,
        "car",
        {"templateId": template["_id"], "car": {"plate": "AB705SU", "year": 2020}},
    )
    product_id = created["productId"]
    data = {
        "productId": product_id,
        "car": {"color": "black", "make": "JEEP", "model": "RENEGADE"},
        "inputs": [{"identifier": names["Policy type"], "value": "POLIZA A"}],
    }
    response = client.put(
        f"/v1/inspection/car/{product_id}",
        files={
            names["Invoice"]: ("gopher.pdf", PDF, "application/pdf"),
            "data": (None, json.dumps(data)),
        },
        headers=test_headers,
    )
    assert response.status_code == 200, response.text
    assert "message" in response.json()
    inspection = read(client, test_headers, created["inspectionId"])
    assert product_data(inspection, "car") == {
        "plate": "AB705SU",
        "year": 2020,
        "color": "black",
        "make": "JEEP",
        "model": "RENEGADE",
    }
    values = {i["identifier"]: i["value"] for i in inspection["template"]["inputs"]}
    assert values[names["Policy type"]] == "POLIZA A"
    served = httpx.get(values[names["Invoice"]])
    assert (served.status_code, served.content) == (200, PDF)


def test_php_product_update_refusals_match_the_inspection_update(
    client: httpx.Client, test_headers: dict[str, str]
) -> None:
    """The same checks and codes as `PUT /v1/inspection/:id`, and a `productId` that is not
    the path's is 400 `product_id_mismatch`; nothing is applied when any part is refused."""
    template = _policy_template(client, test_headers)
    names = {i["label"]: i["identifier"] for i in template["inputs"]}
    created = create(
        client, test_headers, "car", {"templateId": template["_id"], "car": {"plate": "AB705SU"}}
    )
    product_id = created["productId"]
    url = f"/v1/inspection/car/{product_id}"

    def put(data: dict[str, Any], files: dict[str, Any] | None = None) -> tuple[int, str]:
        parts = {"data": (None, json.dumps(data)), **(files or {})}
        answer = client.put(url, files=parts, headers=test_headers)
        return answer.status_code, answer.json().get("code", "")

    other = "0123456789abcdef01234567"
    assert put({"productId": other, "car": {"color": "red"}}) == (400, "product_id_mismatch")
    assert put({"productId": product_id, "inputs": [{"identifier": "input_x", "value": "y"}]}) == (
        400,
        "invalid_input_value",
    )
    assert put(
        {"productId": product_id, "car": {"color": "red"}},
        {"input_unknown": ("a.pdf", PDF, "application/pdf")},
    ) == (400, "unknown_file_input")
    assert put(
        {"productId": product_id, "car": {"color": "red"}},
        {names["Invoice"]: ("a.png", b"\x89PNG", "image/png")},
    ) == (400, "invalid_input_value")
    assert put({"productId": product_id, "car": {"colour": "red"}}) == (400, "unknown_field")
    inspection = read(client, test_headers, created["inspectionId"])
    assert product_data(inspection, "car") == {"plate": "AB705SU"}
    assert all(i["value"] is None for i in inspection["template"]["inputs"])
    # PHP's `inputs: []` (every input was a file) with a JSON body works too.
    plain = client.put(
        url,
        json={"productId": product_id, "car": {"color": "red"}, "inputs": []},
        headers=test_headers,
    )
    assert plain.status_code == 200, plain.text
    assert (
        product_data(read(client, test_headers, created["inspectionId"]), "car")["color"] == "red"
    )


def test_node_flat_machinery_update(client: httpx.Client, test_headers: dict[str, str]) -> None:
    """`machinery.update(productId, {make, model, purpose})` sends the fields without the
    `machinery` wrapper (400 `unknown_field` before)."""
    created = create(client, test_headers, "machinery", {"machinery": {"type": "backhoe"}})
    response = client.put(
        f"/v1/inspection/machinery/{created['productId']}",
        json={"make": "JOHN DEERE", "model": "V2", "purpose": "Agrícola"},
        headers=test_headers,
    )
    assert response.status_code == 200, response.text
    stored = product_data(read(client, test_headers, created["inspectionId"]), "machinery")
    assert stored == {"type": "backhoe", "make": "JOHN DEERE", "model": "V2", "purpose": "Agrícola"}
    # A flat body is read as the product only when every key is one of its fields.
    mixed = client.put(
        f"/v1/inspection/machinery/{created['productId']}",
        json={"make": "X", "wheels": 4},
        headers=test_headers,
    )
    assert mixed.status_code == 400 and mixed.json()["code"] == "unknown_field"


def test_node_presign_with_an_identity(
    client: httpx.Client,
    test_headers: dict[str, str],
    company: dict[str, Any],
    db: Database,
    settings: Settings,
) -> None:
    """`presignDetail(id, {expiresInSeconds, identity: {type, id}})` (400 `unknown_field`
    before): the member must exist (404 `not_found_user`), and the link records who it is for."""
    member = add_member(db, company["companyId"], "agent-77")
    created = create(client, test_headers, "car", {"car": {"plate": "PS123AB"}})
    url = f"/v1/inspection/presign/detail/{created['inspectionId']}"
    for identity in (
        {"type": "internalId", "id": "agent-77"},
        {"type": "user", "id": member["memberId"]},
    ):
        response = client.post(
            url, json={"expiresInSeconds": 600, "identity": identity}, headers=test_headers
        )
        assert response.status_code == 200, response.text
        answer = response.json()
        assert answer["identity"] == {**identity, "userId": member["memberId"]}
        claims = tokens.verify("inspection_detail", answer["accessToken"], secret=settings.secret)
        assert claims.holder == member["memberId"]
        assert httpx.get(answer["url"]).status_code == 200
    for identity in ({"type": "internalId", "id": "nobody"}, {"type": "user", "id": "nobody"}):
        missing = client.post(url, json={"identity": identity}, headers=test_headers)
        assert (missing.status_code, missing.json()["code"]) == (404, "not_found_user")
    bad = client.post(url, json={"identity": {"type": "admin", "id": "x"}}, headers=test_headers)
    assert bad.status_code == 400 and bad.json()["errors"][0]["field"] == "identity.type"


def test_finish_answers_message_beside_the_inspection(
    client: httpx.Client, test_headers: dict[str, str]
) -> None:
    """The Node library types the finish answer `{message}` (absent before the fix)."""
    created = create(client, test_headers, "car", {"car": {"plate": "FM123AB"}})
    finished = client.post(
        f"/v1/inspection/finish/{created['inspectionId']}", json={}, headers=test_headers
    )
    assert finished.status_code == 200, finished.text
    answer = finished.json()
    assert answer["message"] == "Inspection finished"
    assert answer["_id"] == created["inspectionId"] and answer["status"] == "completed"


def test_goods_from_a_single_object_answer_product_ids(
    client: httpx.Client, test_headers: dict[str, str]
) -> None:
    created = create(client, test_headers, "goods", {"goods": GOODS[0]})
    assert created["productIds"] == [created["productId"]]
    car = create(client, test_headers, "car", {"car": {"plate": "PI123AB"}})
    assert car["productIds"] == [car["productId"]]


def test_php_empty_array_body_where_the_body_is_optional(
    client: httpx.Client, test_headers: dict[str, str]
) -> None:
    """PHP's `json_encode([])` is `[]`: read as `{}` on report request, presign, start and
    finish (400 `invalid_body` on report request and presign before the fix)."""
    created = create(client, test_headers, "car", {"car": {"plate": "EA123AB"}})
    inspection_id = created["inspectionId"]
    headers = {**test_headers, "content-type": "application/json"}
    presign = client.post(
        f"/v1/inspection/presign/detail/{inspection_id}", content=b"[]", headers=headers
    )
    assert presign.status_code == 200, presign.text
    start = client.post(f"/v1/inspection/{inspection_id}/start", content=b"[]", headers=headers)
    assert start.status_code == 200, start.text
    finish = client.post(f"/v1/inspection/finish/{inspection_id}", content=b"[]", headers=headers)
    assert finish.status_code == 200, finish.text
    report = client.post(
        f"/v1/inspection/{inspection_id}/report/request", content=b"[]", headers=headers
    )
    assert report.status_code in (200, 201), report.text
    assert "_id" in report.json()
    # A non-empty array is still no object.
    refused = client.post(
        f"/v1/inspection/{inspection_id}/report/request", content=b"[1]", headers=headers
    )
    assert (refused.status_code, refused.json()["code"]) == (400, "invalid_body")
