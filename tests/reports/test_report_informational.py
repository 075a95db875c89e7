"""Issue 33: the PDF report tells a check kept `for information` (the manifest's
`logic.checks[].informational`) from one that decides: the informational check's name carries
the mark in the report's language, the deciding one's does not. The page holding the global
validations is rendered to PNG under tests/artifacts/test_report_informational/ to be looked at."""

from __future__ import annotations

import io
import shutil
import subprocess
from dataclasses import replace
from pathlib import Path

import pypdf
import pytest
from PIL import Image

from server.reports.renderer import default_renderer

from .samples import car_report

ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts" / "test_report_informational"


@pytest.mark.parametrize(
    ("locale", "marked", "english"),
    [
        ("es_AR", "plate_matches (informativo)", "for information"),
        ("pt_BR", "plate_matches (informativo)", "for information"),
        ("en_US", "plate_matches (for information)", "informativo"),
    ],
)
def test_the_pdf_marks_a_check_kept_for_information(
    locale: str, marked: str, english: str, tmp_path: Path
) -> None:
    sample = car_report(images=1, validations=2)
    # `plate_matches` (g1, failed) is for information; `photos_recent` (g2) decides.
    logic = {
        **sample.template["logic"],
        "checks": [{"_id": "g1", "key": "plate_matches", "informational": True}, {"_id": "g2"}],
    }
    inspection = {**sample.inspection, "locale": locale}
    report = replace(sample, inspection=inspection, template={**sample.template, "logic": logic})
    pdf = default_renderer().render(report)
    reader = pypdf.PdfReader(io.BytesIO(pdf))
    # a cell's text may wrap: words are compared with single spaces
    texts = [" ".join(page.extract_text().split()) for page in reader.pages]
    found = [number for number, text in enumerate(texts, start=1) if marked in text]
    assert len(found) == 1, (locale, texts)
    page_text = texts[found[0] - 1]
    assert "photos_recent" in page_text
    assert "photos_recent (" not in page_text  # the deciding check is not marked
    assert english not in "\n".join(texts)

    pdftoppm = shutil.which("pdftoppm")
    assert pdftoppm is not None, "pdftoppm is missing: install poppler-utils"
    source = tmp_path / "report.pdf"
    source.write_bytes(pdf)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    target = ARTIFACTS / f"{locale}-checks-page"
    page = str(found[0])
    subprocess.run(
        [pdftoppm, "-png", "-r", "80", "-f", page, "-l", page, "-singlefile", str(source), target],
        check=True,
        timeout=120,
    )
    # The mark is on the page rendered: pdftotext reads the same page's text back.
    pdftotext = shutil.which("pdftotext")
    assert pdftotext is not None, "pdftotext is missing: install poppler-utils"
    read = subprocess.run(
        [pdftotext, "-f", page, "-l", page, "-raw", str(source), "-"],
        check=True,
        timeout=120,
        capture_output=True,
        text=True,
    ).stdout
    assert marked in " ".join(read.split()), read
    with Image.open(target.with_suffix(".png")) as picture:
        assert picture.convert("L").getextrema()[0] < 100, "the rendered page looks blank"
