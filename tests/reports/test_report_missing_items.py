"""Regression: an inspection finished with a template photo never uploaded looked complete
(`approved`, no reason, and a PDF that said nothing about the gap). Over HTTP: the finish
answer, GET and the PDF name the missing photo, and the verdict is `disapproved`."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import httpx
import pypdf

from .conftest import Drain
from .samples import photo

#: Where the PDFs are kept to be looked at (`pdftoppm`), as the browser tests keep screenshots.
ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts" / "reports"
ARTIFACTS.mkdir(parents=True, exist_ok=True)

#: The verdict approves whatever happened: only the runtime's evidence check can disapprove.
LENIENT = """\
template "Two photos, lenient"
    type: car

image front
    label: "Front of the car"

image back
    label: "Back of the car"

input notes
    type: text
    label: "Notes"
    asked at: update

verdict
    approve when true
"""


def test_missing_photo_in_reasons_and_pdf(
    client: httpx.Client, headers: dict[str, str], drain: Drain
) -> None:
    inspection_id = _with_front_photo(client, headers, LENIENT, "en_US")

    finished = client.post(f"/v1/inspection/finish/{inspection_id}", json={}, headers=headers)
    assert finished.status_code == 200, finished.text
    read = client.get(f"/v1/inspection/{inspection_id}", headers=headers).json()
    for document in (finished.json(), read):
        assert document["status"] == "completed"
        assert document["veredict"] == "disapproved"
        # Only the photo never uploaded; `notes` is optional, so it is not named.
        assert document["reasons"] == ["Required photo not uploaded: Back of the car"]

    request, pdf = _report(client, headers, drain, inspection_id)
    assert request["status"] == "completed", request
    assert pdf.status_code == 200
    reader = pypdf.PdfReader(io.BytesIO(pdf.content))
    text = "\n".join(page.extract_text() for page in reader.pages)
    assert "DISAPPROVED" in text
    # Under the verdict (its reason) and in the explanation's list of missing items.
    assert text.count("Required photo not uploaded: Back of the car") == 1
    assert "Missing photo" in text and "Back of the car" in text
    assert "Front of the car" in text  # the uploaded one is shown as an image, not as missing


TRANSLATED = """\
template "Two photos, translated"
    type: car
    locales: en_US, es_AR, pt_BR

image front
    label: "Front of the car"
    label pt_BR: "Frente do carro"

image back
    label: "Back of the car"
    label pt_BR: "Traseira do carro"

let not_approved = join(map(i in filter(i in images where not i.approved) of i.label), ", ")

verdict
    approve when all(i in images where i.approved)
    otherwise "Photos not approved: {not_approved}"
        reason pt_BR: "Fotos não aprovadas: {not_approved}"
"""


def test_reasons_in_the_reports_language(
    client: httpx.Client, headers: dict[str, str], drain: Drain
) -> None:
    """Issue 25: a pt_BR inspection's verdict, the runtime's missing photo and the template's
    translated reason (with `i.label`), is stated in Portuguese by the API and the PDF."""
    inspection_id = _with_front_photo(client, headers, TRANSLATED, "pt_BR")
    finished = client.post(f"/v1/inspection/finish/{inspection_id}", json={}, headers=headers)
    assert finished.json()["reasons"] == [
        "Foto obrigatória não enviada: Traseira do carro",
        "Fotos não aprovadas: Traseira do carro",
    ]
    _request, pdf = _report(client, headers, drain, inspection_id)
    text = "\n".join(page.extract_text() for page in pypdf.PdfReader(io.BytesIO(pdf.content)).pages)
    assert "Foto obrigatória não enviada: Traseira do carro" in text
    assert "Fotos não aprovadas: Traseira do carro" in text
    assert "Required photo" not in text and "Photos not approved" not in text
    (ARTIFACTS / "reasons-pt_BR.pdf").write_bytes(pdf.content)


def _with_front_photo(
    client: httpx.Client, headers: dict[str, str], source: str, locale: str
) -> str:
    """An inspection of the template `source` in `locale` with only its front photo sent."""
    template = client.post(
        "/v1/inspection/template",
        content=source.encode(),
        headers={**headers, "content-type": "text/plain"},
    )
    assert template.status_code == 201, template.text
    created = client.post(
        "/v1/inspection/car",
        json={
            "templateId": template.json()["_id"],
            "locale": locale,
            "delivery": {"channel": "email", "destination": "ana@example.com"},
        },
        headers=headers,
    )
    assert created.status_code == 201, created.text
    uploaded = client.post(
        f"/v1/inspection/image/{created.json()['productId']}",
        files={
            "image": ("front.jpg", photo(3, size=(640, 480)), "image/jpeg"),
            "data": (None, json.dumps({"side": "front"}), "application/json"),
        },
        headers=headers,
    )
    assert uploaded.status_code == 201, uploaded.text
    return str(created.json()["inspectionId"])


def _report(
    client: httpx.Client, headers: dict[str, str], drain: Drain, inspection_id: str
) -> tuple[dict[str, Any], httpx.Response]:
    """The report request of `inspection_id` once the worker ran it, and its PDF."""
    report = client.post(f"/v1/inspection/{inspection_id}/report/request", json={}, headers=headers)
    assert report.status_code == 201, report.text
    drain()
    request = client.get(
        f"/v1/inspection/{inspection_id}/report/request/{report.json()['_id']}", headers=headers
    ).json()
    return request, httpx.get(request["result"]["url"], timeout=30)
