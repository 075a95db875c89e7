"""Multipart bodies over real HTTP: any JSON body may come as a `data` part; file inputs come
as parts named by their input identifier, are stored, and are checked by the template's rules."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

SOURCE = """\
template "Paperwork"
    type: machinery

input invoice
    type: file
    label: "Invoice"
    asked at: create, update
    required
    accepts: "application/pdf"
    maximum size: 1 KB

input hours
    type: numeric
    label: "Hours"
    asked at: create

verdict
    approve when true
"""

PDF = b"%PDF-1.4\n% tiny test file\n%%EOF\n"


@pytest.fixture
def paperwork(client: httpx.Client, test_headers: dict[str, str]) -> dict[str, Any]:
    response = client.post(
        "/v1/inspection/template",
        content=SOURCE.encode(),
        headers={**test_headers, "content-type": "text/plain"},
    )
    assert response.status_code == 201, response.text
    template: dict[str, Any] = response.json()
    return template


def ids(template: dict[str, Any]) -> dict[str, str]:
    return {i["label"]: i["identifier"] for i in template["inputs"]}


def data_part(template: dict[str, Any], **extra: Any) -> str:
    body = {
        "templateId": template["_id"],
        "locale": "en_US",
        "delivery": {"channel": "email", "destination": "a@example.com"},
        "inputs": [{"identifier": ids(template)["Hours"], "value": 1200}],
        **extra,
    }
    return json.dumps(body)


def error_of(response: httpx.Response) -> tuple[int, str]:
    return response.status_code, response.json()["code"]


def test_create_with_a_file_input(
    client: httpx.Client,
    live_server: str,
    test_headers: dict[str, str],
    paperwork: dict[str, Any],
) -> None:
    invoice = ids(paperwork)["Invoice"]
    response = client.post(
        "/v1/inspection/machinery",
        files={
            "data": (None, data_part(paperwork)),
            invoice: ("invoice.pdf", PDF, "application/pdf"),
        },
        headers=test_headers,
    )
    assert response.status_code == 201, response.text
    inspection_id = response.json()["inspectionId"]
    document = client.get(f"/v1/inspection/{inspection_id}", headers=test_headers).json()
    values = {i["identifier"]: i["value"] for i in document["template"]["inputs"]}
    assert values[ids(paperwork)["Hours"]] == 1200
    link = values[invoice]
    assert link.startswith(f"{live_server}/v1/inspection/image/")
    assert "/content?token=" in link
    stored = httpx.get(link)
    assert stored.status_code == 200
    assert stored.content == PDF
    assert stored.headers["content-type"] == "application/pdf"


def test_file_input_rules(
    client: httpx.Client, test_headers: dict[str, str], paperwork: dict[str, Any]
) -> None:
    invoice = ids(paperwork)["Invoice"]

    def post(files: dict[str, Any]) -> httpx.Response:
        return client.post("/v1/inspection/machinery", files=files, headers=test_headers)

    wrong_type = post(
        {"data": (None, data_part(paperwork)), invoice: ("a.png", b"\x89PNG....", "image/png")}
    )
    assert error_of(wrong_type) == (400, "invalid_input_value")
    too_big = post(
        {
            "data": (None, data_part(paperwork)),
            invoice: ("a.pdf", PDF + b"x" * 2000, "application/pdf"),
        }
    )
    assert error_of(too_big) == (400, "invalid_input_value")
    missing = post({"data": (None, data_part(paperwork))})
    assert error_of(missing) == (400, "input_value_not_provided")
    unknown = post(
        {
            "data": (None, data_part(paperwork)),
            invoice: ("a.pdf", PDF, "application/pdf"),
            "input_unknown": ("b.pdf", PDF, "application/pdf"),
        }
    )
    assert error_of(unknown) == (400, "unknown_file_input")
    hours = post(
        {
            "data": (None, data_part(paperwork)),
            ids(paperwork)["Hours"]: ("h.txt", b"12", "text/plain"),
        }
    )
    assert error_of(hours) == (400, "unknown_file_input")


def test_data_part_forms(client: httpx.Client, test_headers: dict[str, str]) -> None:
    body = json.dumps(
        {
            "templateId": "easy",
            "locale": "en_US",
            "delivery": {"channel": "email", "destination": "a@example.com"},
        }
    )
    as_field = client.post("/v1/inspection/car", files={"data": (None, body)}, headers=test_headers)
    assert as_field.status_code == 201, as_field.text
    as_file = client.post(
        "/v1/inspection/car",
        files={"data": ("data.json", body.encode(), "application/json")},
        headers=test_headers,
    )
    assert as_file.status_code == 201, as_file.text
    update = client.put(
        f"/v1/inspection/{as_field.json()['inspectionId']}",
        files={"data": (None, json.dumps({"metadata": {"via": "multipart"}}))},
        headers=test_headers,
    )
    assert update.status_code == 200, update.text
    read = client.get(f"/v1/inspection/{as_field.json()['inspectionId']}", headers=test_headers)
    assert read.json()["metadata"] == {"via": "multipart"}


def test_bad_multipart_bodies(client: httpx.Client, test_headers: dict[str, str]) -> None:
    def post(**kwargs: Any) -> tuple[int, str]:
        return error_of(client.post("/v1/inspection/car", headers=test_headers, **kwargs))

    assert post(files={"data": (None, "{oops")}) == (400, "malformed_json")
    assert post(files={"data": (None, "[]")}) == (400, "invalid_body")
    assert post(files={"other": (None, "x")}) == (400, "invalid_multipart")
    truncated = client.post(
        "/v1/inspection/car",
        content=b'--b\r\nContent-Disposition: form-data; name="data"\r\n\r\n{}',
        headers={**test_headers, "content-type": "multipart/form-data; boundary=b"},
    )
    assert error_of(truncated) == (400, "invalid_multipart")
    no_boundary = client.post(
        "/v1/inspection/car",
        content=b"whatever",
        headers={**test_headers, "content-type": "multipart/form-data"},
    )
    assert error_of(no_boundary)[0] == 400
    twice = client.post(
        "/v1/inspection/car",
        files=[("data", (None, "{}")), ("data", (None, "{}"))],
        headers=test_headers,
    )
    assert error_of(twice) == (400, "invalid_multipart")
    latin = client.post(
        "/v1/inspection/car",
        content=(
            b'--b\r\nContent-Disposition: form-data; name="data"\r\n'
            b"Content-Type: text/plain; charset=nope\r\n\r\n{}\r\n--b--\r\n"
        ),
        headers={**test_headers, "content-type": "multipart/form-data; boundary=b"},
    )
    assert error_of(latin)[0] == 400


def test_other_media_types(client: httpx.Client, test_headers: dict[str, str]) -> None:
    xml = client.post(
        "/v1/inspection/car",
        content=b"<inspection/>",
        headers={**test_headers, "content-type": "application/xml"},
    )
    assert error_of(xml) == (415, "unsupported_media_type")
    text = client.post(
        "/v1/inspection/car",
        content=b"templateId=easy",
        headers={**test_headers, "content-type": "text/plain"},
    )
    assert error_of(text) == (415, "unsupported_media_type")
    empty = client.post("/v1/inspection/car", headers=test_headers)
    assert error_of(empty) == (400, "invalid_body")
    nested = client.post(
        "/v1/inspection/car",
        content=b"[" * 100 + b"]" * 100,
        headers={**test_headers, "content-type": "application/json"},
    )
    assert error_of(nested) == (400, "malformed_json")
    nan = client.post(
        "/v1/inspection/car",
        content=b'{"templateId": NaN}',
        headers={**test_headers, "content-type": "application/json"},
    )
    assert error_of(nan) == (400, "malformed_json")


# --- file inputs on PUT /v1/inspection/:id -----------------------------------------------------

PROOF_SOURCE = """\
template "Proof of delivery"
    type: goods

input proof
    type: file
    label: "Proof"
    asked at: update
    accepts: "application/pdf"
    maximum size: 1 KB

input clip
    type: video
    label: "Clip"
    asked at: update

input note
    type: text
    label: "Note"
    asked at: update

verdict
    approve when true
"""


@pytest.fixture
def proof(client: httpx.Client, test_headers: dict[str, str]) -> dict[str, Any]:
    response = client.post(
        "/v1/inspection/template",
        content=PROOF_SOURCE.encode(),
        headers={**test_headers, "content-type": "text/plain"},
    )
    assert response.status_code == 201, response.text
    template: dict[str, Any] = response.json()
    return template


def new_inspection(
    client: httpx.Client, headers: dict[str, str], template: dict[str, Any], **extra: Any
) -> str:
    body = {
        "templateId": template["_id"],
        "locale": "en_US",
        "delivery": {"channel": "email", "destination": "a@example.com"},
        **extra,
    }
    created = client.post("/v1/inspection/goods", json=body, headers=headers)
    assert created.status_code == 201, created.text
    return str(created.json()["inspectionId"])


def input_values(client: httpx.Client, headers: dict[str, str], inspection_id: str) -> Any:
    document = client.get(f"/v1/inspection/{inspection_id}", headers=headers).json()
    values = {i["identifier"]: i["value"] for i in document["template"]["inputs"]}
    return values, document["metadata"]


def stored_files(db: Any, inspection_id: str) -> list[Any]:
    from sqlalchemy import select

    from server.inspections.tables import ImageRecord

    with db.session() as session:
        return list(
            session.execute(select(ImageRecord).where(ImageRecord.inspection_id == inspection_id))
            .scalars()
            .all()
        )


def test_update_stores_file_inputs_like_creation(
    client: httpx.Client,
    live_server: str,
    db: Any,
    test_headers: dict[str, str],
    proof: dict[str, Any],
) -> None:
    """Regression: file parts on PUT were dropped and the answer was 200."""
    inspection_id = new_inspection(client, test_headers, proof)
    names = ids(proof)
    update = client.put(
        f"/v1/inspection/{inspection_id}",
        files={
            "data": (None, json.dumps({"metadata": {"via": "multipart"}})),
            names["Proof"]: ("proof.pdf", PDF, "application/pdf"),
            names["Clip"]: ("clip.mp4", b"\x00\x00\x00\x18ftypmp42", "video/mp4"),
        },
        headers=test_headers,
    )
    assert update.status_code == 200, update.text
    values, metadata = input_values(client, test_headers, inspection_id)
    assert metadata == {"via": "multipart"}
    for label, content in (("Proof", PDF), ("Clip", b"\x00\x00\x00\x18ftypmp42")):
        link = values[names[label]]
        assert link.startswith(f"{live_server}/v1/inspection/image/"), label
        served = httpx.get(link)
        assert (served.status_code, served.content) == (200, content), label
    # Served with the type found in the bytes (the clip is too short to be recognised).
    assert httpx.get(values[names["Proof"]]).headers["content-type"] == "application/pdf"
    rows = stored_files(db, inspection_id)
    assert sorted((row.kind, row.filename) for row in rows) == [
        ("input", "clip.mp4"),
        ("input", "proof.pdf"),
    ]
    # Defined values are kept (the spec's PUT): a second file for `proof` is ignored, not stored.
    again = client.put(
        f"/v1/inspection/{inspection_id}",
        files={names["Proof"]: ("other.pdf", PDF + b"%2", "application/pdf")},
        headers=test_headers,
    )
    assert again.status_code == 200, again.text
    unsigned = {key: str(value).split("?")[0] for key, value in values.items()}
    after = input_values(client, test_headers, inspection_id)[0]
    assert {key: str(value).split("?")[0] for key, value in after.items()} == unsigned
    assert len(stored_files(db, inspection_id)) == 2


def test_update_refuses_bad_file_parts_and_keeps_nothing(
    client: httpx.Client,
    db: Any,
    settings: Any,
    test_headers: dict[str, str],
    proof: dict[str, Any],
) -> None:
    inspection_id = new_inspection(client, test_headers, proof)
    names = ids(proof)
    url = f"/v1/inspection/{inspection_id}"
    blobs = settings.data_dir / "blobs"
    blobs_before = sorted(path for path in blobs.rglob("*") if path.is_file())

    def put(files: dict[str, Any]) -> tuple[int, str]:
        data = {"data": (None, json.dumps({"metadata": {"k": "v"}}))}
        return error_of(client.put(url, files={**data, **files}, headers=test_headers))

    # A part named after no input of the template (200 before the fix), or after a non-file one.
    assert put({"input_unknown": ("a.pdf", PDF, "application/pdf")}) == (400, "unknown_file_input")
    assert put({names["Note"]: ("n.txt", b"hi", "text/plain")}) == (400, "unknown_file_input")
    # The file breaks the input's rules: nothing stored either.
    assert put({names["Proof"]: ("a.png", b"\x89PNG", "image/png")}) == (400, "invalid_input_value")
    big = PDF + b"x" * 2000
    assert put({names["Proof"]: ("a.pdf", big, "application/pdf")}) == (400, "invalid_input_value")
    values, metadata = input_values(client, test_headers, inspection_id)
    assert metadata == {} and values[names["Proof"]] is None
    assert stored_files(db, inspection_id) == []
    assert sorted(path for path in blobs.rglob("*") if path.is_file()) == blobs_before


@pytest.mark.parametrize(
    "value",
    [
        "proof.pdf",
        "https://attacker.example/proof.pdf",
        {"name": "proof.pdf", "contentType": "application/pdf", "size": 10},
    ],
)
def test_a_file_input_value_without_a_file_is_refused(
    client: httpx.Client, test_headers: dict[str, str], proof: dict[str, Any], value: Any
) -> None:
    """A JSON value for a file or video input has no file behind it: 400 `invalid_input_value`
    with `errors[].code` `file_part_required`, on update and on creation alike."""
    names = ids(proof)
    inspection_id = new_inspection(client, test_headers, proof)
    body = {"inputs": [{"identifier": names["Proof"], "value": value}]}
    for response in (
        client.put(f"/v1/inspection/{inspection_id}", json=body, headers=test_headers),
        client.put(
            f"/v1/inspection/{inspection_id}",
            files={"data": (None, json.dumps(body))},
            headers=test_headers,
        ),
        client.post(
            "/v1/inspection/goods",
            json={
                "templateId": proof["_id"],
                "locale": "en_US",
                "delivery": {"channel": "email", "destination": "a@example.com"},
                **body,
            },
            headers=test_headers,
        ),
    ):
        assert error_of(response) == (400, "invalid_input_value")
        assert response.json()["errors"] == [
            {
                "field": names["Proof"],
                "code": "file_part_required",
                "message": f"send the file as a multipart part named {names['Proof']}",
            }
        ]
    assert input_values(client, test_headers, inspection_id)[0][names["Proof"]] is None
