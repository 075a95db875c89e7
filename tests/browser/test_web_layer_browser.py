"""The web layer in a real Chromium: a probe page area (a form and a same-origin script) passes
axe-core, runs its external script under the page's Content-Security-Policy, refuses an inline
one, and posts its form through Litestar's CSRF check with the browser's own cookie."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import pytest
from litestar import Request, get, post
from litestar.enums import RequestEncodingType
from litestar.params import Body
from litestar.response import Template

from server.app import PAGE_AREAS, create_app
from server.db import Database
from server.settings import Settings
from server.web.routes import PageArea
from server.web.security import page_router
from server.web.templating import page

FORM = """{% extends "web/base.html" %}
{% block header %}<span class="brand">Probe</span>{% endblock %}
{% block main %}
<h1>{{ _("Inspection") }}</h1>
<form method="post" action="/probe/form" class="card">{{ csrf_input | safe }}
<div class="field"><label for="name">Name</label><input id="name" name="name" type="text"></div>
<div class="actions"><button type="submit">Send</button></div></form>
<p id="inline-result">inline did not run</p>
<script>document.getElementById('inline-result').textContent = 'inline ran';</script>
{% endblock %}
{% block scripts %}<script src="{{ static('probe/probe.js') }}"></script>{% endblock %}
"""


@pytest.fixture(scope="module")
def probe_server(
    settings: Settings, db: Database, tmp_path_factory: pytest.TempPathFactory, serve_app: Any
) -> Iterator[str]:
    folder: Path = tmp_path_factory.mktemp("probe")
    (folder / "t").mkdir()
    (folder / "t" / "form.html").write_text(FORM)
    (folder / "s").mkdir()
    (folder / "s" / "probe.js").write_text("document.documentElement.dataset.probe = 'ran';\n")

    @get("/form", sync_to_thread=False)
    def show(request: Request[Any, Any, Any]) -> Template:
        return page("probe/form.html", locale=request.query_params.get("locale", "en_US"))

    @post("/form", sync_to_thread=False, status_code=200)
    def submit(
        data: Annotated[dict[str, str], Body(media_type=RequestEncodingType.URL_ENCODED)],
    ) -> Template:
        return page(
            "web/message.html", locale="en_US", context={"heading": "Thanks", "text": data["name"]}
        )

    area = PageArea(
        name="probe",
        templates=folder / "t",
        static=folder / "s",
        routes=[page_router("/probe", [show, submit])],
    )
    with serve_app(create_app(settings, db=db, page_areas=[*PAGE_AREAS, area])) as base_url:
        yield base_url


def test_probe_page_in_chromium(
    probe_server: str, new_phone: Any, screenshot: Any, axe_check: Any
) -> None:
    _context, page, log = new_phone(locale="pt-BR")
    page.goto(f"{probe_server}/probe/form?locale=pt_BR")
    assert page.locator("h1").inner_text() == "Vistoria"
    assert page.evaluate("() => document.documentElement.dataset.probe") == "ran"
    assert page.locator("#inline-result").inner_text() == "inline did not run"
    assert any("Content Security Policy" in text for text in log.csp_violations)
    log.csp_violations.clear()  # that refusal was the point of this check
    axe_check(page, "probe form")
    screenshot(page, "probe-form")
    page.fill("#name", "Ana")
    page.click("button[type=submit]")
    assert page.locator("h1").inner_text() == "Thanks"
    assert page.locator("main p").first.inner_text() == "Ana"
    axe_check(page, "probe message")
    screenshot(page, "probe-message")
