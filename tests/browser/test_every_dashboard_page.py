"""Every dashboard page in a real Chromium, found from the app's own routes, not a list.

The crawl takes every GET route of the running app under `/dashboard/` and `/share/` (a new
page is in it the moment its module's `ROUTES` is mounted), fills each path parameter from one
seeded company (an inspection in review with a photo, a template, a shared file, an invitation,
a reset link, a share link) and opens it signed in as the owner, in each locale, at 360 px and
at a desktop width. Each page must answer 200 (no redirect away from it), pass axe-core (no
serious or critical violation), fit the width, and, in es_AR and pt_BR, show no English text
left where the catalogs hold a translation; a full-page screenshot of each is saved under
tests/artifacts/test_every_dashboard_page/ to look at. A route that is not a page (a CSV, a
photo) must answer 200 too, and so must every same-origin link the pages show (once per
address). A route whose parameter nothing here can fill fails the test with its name: add the
value to `seeded` (never a skip).

"English left" finds a text shown whole (a text node, a title, an `aria-label`...) that is the
English of a catalog message the locale translates otherwise: a word that went around the
catalog (a service's sentence, a string literal in a template). It cannot see English that no
catalog holds, nor a message whose translation was copied from the English.
"""

from __future__ import annotations

import re
import secrets
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from litestar.response import Redirect

from server.dashboard import accounts
from server.dashboard.accounts import Actor
from server.dashboard.mail import Mail
from server.dashboard.web import PREFIX
from server.inspections import shares
from server.oauth import service as oauth
from server.web import catalogs, i18n
from tests.browser.test_dashboard_browser import PASSWORD, png
from tests.browser.test_review_browser import TEMPLATE

#: The parts of the app this test crawls: the dashboard and its share pages.
PREFIXES = (PREFIX, shares.PAGE_PATH)
WIDTHS = {"phone": 360, "desktop": 1280}
LOCALES = {"en_US": "en-US", "es_AR": "es-AR", "pt_BR": "pt-BR"}
PARAMETER = re.compile(r"{(\w+)(?::\w+)?}")
#: Text a reader sees as data, not as the page's words.
DATA_ELEMENTS = "script, style, pre, code, textarea, select, option, input, [translate=no]"
SHARED_FILE = "common_checks"
SHARED_SOURCE = 'check plate_present\n    valid when: product.plate != ""\n'


def page_routes(app: Any) -> list[tuple[str, bool]]:
    """`(path, is_redirect)` of every GET route under `PREFIXES`, as the app mounts them."""
    found = []
    for route in app.routes:
        if not route.path.startswith(PREFIXES):
            continue
        for handler in getattr(route, "route_handlers", []):
            if "GET" not in (handler.http_methods or ()):
                continue
            returns = handler.parsed_fn_signature.return_type.annotation
            found.append((route.path, returns is Redirect))
    return sorted(set(found))


def fill(path: str, values: dict[str, str]) -> str | None:
    """`path` with its parameters replaced by `values`; None when one has no value."""
    names = PARAMETER.findall(path)
    if any(name not in values for name in names):
        return None
    return PARAMETER.sub(lambda match: values[match.group(1)], path)


def english_left(locale: str) -> list[re.Pattern[str]]:
    """The English texts of every catalog message that `locale` translates differently, as
    patterns a whole text on the page matches (`%(name)s` stands for anything)."""
    patterns = []
    for domain in i18n.domains():
        po = i18n.LOCALE_DIRECTORY / locale / "LC_MESSAGES" / f"{domain}.po"
        for message in catalogs.read_catalog(po):
            if not isinstance(message.id, str) or not message.id or message.string == message.id:
                continue
            english = " ".join(message.id.split())
            if len(english) < 4:  # "OK", "PDF": the same in many languages
                continue
            pieces = re.split(r"%\(\w+\)[sdf]|%[sdf]", english)
            patterns.append(re.compile(".+?".join(re.escape(piece) for piece in pieces)))
    return patterns


#: Every visible text of the page outside data elements, and the texts read aloud or shown as
#: attributes, whitespace collapsed.
VISIBLE_TEXTS = """(skip) => {
    const texts = [document.title];
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        const parent = node.parentElement;
        if (parent && !parent.closest(skip) && parent.checkVisibility()) {
            texts.push(node.textContent);
        }
    }
    const named = '[aria-label], [alt], [title], [placeholder]';
    for (const element of document.querySelectorAll(named)) {
        for (const name of ['aria-label', 'alt', 'title', 'placeholder']) {
            if (element.hasAttribute(name)) texts.push(element.getAttribute(name));
        }
    }
    for (const button of document.querySelectorAll('input[type=submit], input[type=button]')) {
        texts.push(button.value);
    }
    return texts.map(t => t.split(/\\s+/).join(' ').trim()).filter(Boolean);
}"""


#: The same-origin links a page shows (not the sign-out form, a form's button is no link).
LINKS = "a[href^='/'], a[href^='?'], a[href^='http://127.0.0.1']"
#: The outermost elements that reach past the viewport's right edge.
WIDEST = """(limit) => [...document.querySelectorAll('body *')]
    .filter(e => e.getBoundingClientRect().right > limit + 1
        && !(e.parentElement && e.parentElement.getBoundingClientRect().right > limit + 1))
    .slice(0, 5).map(e => e.tagName.toLowerCase() + '.' + e.className)"""


@pytest.fixture(scope="module")
def app(settings: Any, db: Any) -> Any:
    from server.app import create_app

    return create_app(settings, db=db)


@pytest.fixture(scope="module")
def live_server(app: Any, server_socket: Any, serve_app: Any) -> Iterator[str]:
    """The same app the crawl reads its routes from, served (on the settings' port)."""
    with serve_app(app, server_socket) as base:
        yield base


@pytest.fixture(scope="module")
def seeded(db: Any, settings: Any, live_server: str) -> dict[str, Any]:
    """One company with something on every page: the path parameters (by name) and the query
    a page needs to show its content (a link's token), by route path."""
    from server.auth import AuthContext, create_company

    company = create_company(db, f"Crawl Insurance {secrets.token_hex(2)}", ["agent-1"])
    owner = f"owner-{secrets.token_hex(3)}@crawl.example.com"
    account = accounts.create_account(db, company["companyId"], owner, "owner", PASSWORD)
    actor = Actor(account["id"], company["companyId"], owner, "owner")
    sent: list[Mail] = []

    def keep(mail: Mail) -> None:
        sent.append(mail)

    invited = f"new-{secrets.token_hex(3)}@crawl.example.com"
    accounts.invite(db, actor, invited, "viewer", live_server, keep)
    accounts.request_reset(db, owner, live_server, keep)
    token = {
        kind: re.search(rf"/dashboard/{kind}\?token=(\S+)", "\n".join(m.text for m in sent))
        for kind in ("accept", "reset")
    }
    with httpx.Client(
        base_url=live_server, headers={"x-api-key": company["testKey"]}, timeout=60
    ) as api:
        assert api.put(
            f"/v1/inspection/shared/{SHARED_FILE}", json={"source": SHARED_SOURCE}
        ).status_code in (200, 201)
        saved = api.post("/v1/inspection/template", json={"source": TEMPLATE})
        assert saved.status_code == 201, saved.text
        template_id = saved.json()["_id"]
        created = api.post(
            "/v1/inspection/car",
            json={
                "templateId": template_id,
                "locale": "es_AR",
                "delivery": {"channel": "email", "destination": "ana@example.com"},
                "car": {"plate": "AB123CD", "make": "Fiat", "model": "Cronos", "year": 2021},
                "consumer": {"firstName": "Ana", "lastName": "Paz", "identification": "2011"},
                "metadata": {"poliza": "POL-7788"},
            },
        )
        assert created.status_code == 201, created.text
        body = created.json()
        assert api.post(f"/v1/inspection/{body['inspectionId']}/start").status_code == 200
        image_id = ""
        for side in ("front", "back"):
            uploaded = api.post(
                f"/v1/inspection/image/{body['productId']}",
                files={"image": (f"{side}.png", png(), "image/png"),
                       "data": (None, f'{{"side": "{side}"}}')},
            )  # fmt: skip
            assert uploaded.status_code in (200, 201), uploaded.text
            image_id = image_id or uploaded.json()["_id"]
        assert api.post(f"/v1/inspection/finish/{body['inspectionId']}").status_code == 200
    auth = AuthContext(company_id=company["companyId"], mode="test", key_id="")
    share = shares.create(
        db, settings, auth, body["inspectionId"], account["id"], datetime.now(UTC)
    )
    share_token = share.url.split("token=", 1)[1]
    # A partner application the owner registered and allowed: the consent page asks for it,
    # the applications and authorizations pages list it.
    registered, _secret = oauth.register_app(
        db, actor, "test", "Crawl Broker", ["https://broker.example/cb"], ["inspections:read"]
    )
    consent = {"response_type": "code", "client_id": registered.id}
    oauth.decide(db, live_server, actor, consent, True, datetime.now(UTC))
    return {
        "owner": owner,
        "path": {
            "inspection_id": body["inspectionId"],
            "template_id": template_id,
            "image_id": image_id,
        },
        "query": {
            f"{PREFIX}/accept": {"token": token["accept"].group(1)},  # type: ignore[union-attr]
            f"{PREFIX}/reset": {"token": token["reset"].group(1)},  # type: ignore[union-attr]
            f"{PREFIX}/templates/shared": {"name": SHARED_FILE},
            f"{shares.PAGE_PATH}/{{inspection_id:str}}": {"token": share_token},
            f"{PREFIX}/oauth/authorize": consent,
        },
    }


def test_the_crawl_fills_what_it_finds() -> None:
    assert fill("/a/{inspection_id:str}/b/{image_id:str}", {"inspection_id": "1", "image_id": "2"})
    assert fill("/a/{share_id:str}", {"inspection_id": "1"}) is None
    patterns = english_left("es_AR")
    assert any(pattern.fullmatch("Inspections") for pattern in patterns)
    assert not any(pattern.fullmatch("Inspecciones") for pattern in patterns)


# The crawl grows with every page (each one opened in 3 languages at 2 widths): past the
# suite's 300 s per test on a loaded machine (it took 262 s once with the partner applications'
# pages, and more under load), so it gets its own bound.
@pytest.mark.timeout(900)
def test_every_dashboard_page(
    app: Any,
    live_server: str,
    seeded: dict[str, Any],
    new_phone: Any,
    screenshot: Any,
    axe_check: Any,
) -> None:
    started = time.monotonic()
    routes = page_routes(app)
    assert f"{PREFIX}/inspections" in {path for path, _redirect in routes}
    unfilled = [path for path, _redirect in routes if fill(path, seeded["path"]) is None]
    assert not unfilled, (
        f"no value for the parameters of {unfilled}: add one to `seeded` in {Path(__file__).name}"
    )
    targets = []
    for path, redirects in routes:
        query = seeded["query"].get(path, {})
        url = fill(path, seeded["path"]) or path
        if query:
            url += "?" + "&".join(f"{key}={value}" for key, value in query.items())
        targets.append((path, url, redirects))
    problems: list[str] = []
    visited = 0
    links: dict[str, str] = {}
    checked: set[str] = set()
    #: Per page language (`es-AR`), what would be English left in it.
    english = {
        tag: english_left(locale) if locale != i18n.DEFAULT_LOCALE else []
        for locale, tag in LOCALES.items()
    }
    for locale, browser_locale in LOCALES.items():
        _context, page, _log = new_phone(locale=browser_locale, width=WIDTHS["phone"])
        page.goto(f"{live_server}{PREFIX}/sign-in")
        page.locator("#email").fill(seeded["owner"])
        page.locator("#password").fill(PASSWORD)
        page.locator("form.stack button[type=submit]").click()
        page.wait_for_url(f"**{PREFIX}/inspections")
        pages = []
        for path, url, redirects in targets:
            answer = page.request.get(f"{live_server}{url}", max_redirects=0)
            if redirects:
                if answer.status not in (302, 303, 307):
                    problems.append(f"{path}: a redirect answered {answer.status}")
            elif answer.status != 200:
                problems.append(f"{path} ({locale}): HTTP {answer.status}")
            elif answer.headers.get("content-type", "").startswith("text/html"):
                pages.append((path, url))
        for size, width in WIDTHS.items():
            page.set_viewport_size({"width": width, "height": 900})
            for path, url in pages:
                page.goto(f"{live_server}{url}")
                visited += 1
                name = f"{locale}-{size}-{PARAMETER.sub(lambda m: m.group(1), path).strip('/')}"
                if not page.url.endswith(url):
                    problems.append(f"{path}: went to {page.url}")
                    continue
                # The member's language; a share page speaks its inspection's.
                lang = page.locator("html").get_attribute("lang") or ""
                assert lang in english, f"{name}: lang={lang!r}"
                scroll = page.evaluate("() => document.documentElement.scrollWidth")
                if scroll > width + 1:
                    wide = page.evaluate(WIDEST, width)
                    problems.append(f"{name}: {scroll}px wide at {width}px: {wide}")
                axe_check(page, name)
                if english[lang] and size == "phone":
                    texts = page.evaluate(VISIBLE_TEXTS, DATA_ELEMENTS)
                    left = sorted(
                        {text for text in texts if any(p.fullmatch(text) for p in english[lang])}
                    )
                    if left:
                        problems.append(f"{name}: English left: {left}")
                screenshot(page, name)
                for link in page.eval_on_selector_all(LINKS, "links => links.map(a => a.href)"):
                    links.setdefault(link.split("#", 1)[0], name)
        # Every link the pages show answers (after its redirects) 200: a number of the overview
        # or a sort header that builds a bad query fails here, once per address.
        for link, where in sorted(links.items()):
            if link in checked:
                continue
            checked.add(link)
            answer = page.request.get(link)
            if answer.status != 200:
                problems.append(f"{where}: its link {link} answered {answer.status}")
    elapsed = time.monotonic() - started
    print(f"{len(targets)} routes, {visited} page views in {elapsed:.1f} s")
    assert not problems, "\n".join(problems)
