"""Browser fixtures: Debian's Chromium driven by Playwright, screenshots, axe-core checks.

- `browser`: one headless Chromium for this package's tests (`/usr/bin/chromium`; Playwright's own
  browser download cannot run here, `make system-deps` installs Debian's package).
- `phone`: a fresh browser context at a phone viewport (412x915, touch) and its page. Every
  Content-Security-Policy violation the page reports fails the test (pages must load only
  same-origin files, no inline script or style), and so does an uncaught JavaScript error.
- `screenshot(page, name)`: a full-page PNG under `tests/artifacts/<test module>/`
  (git-ignored), for a person to look at.
- `axe_check(page, name)`: runs axe-core (the npm package, installed by `make browser-deps`
  from `tests/browser/package-lock.json` into `tests/browser/node_modules`) in the page and fails
  on any serious or critical violation.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
PHONE_VIEWPORT = {"width": 412, "height": 915}
BROWSER_DIR = Path(__file__).parent
ARTIFACTS = BROWSER_DIR.parent / "artifacts"
AXE_SOURCE = BROWSER_DIR / "node_modules" / "axe-core" / "axe.min.js"
#: axe's impacts that fail a test.
BLOCKING_IMPACTS = {"serious", "critical"}


@pytest.fixture(scope="package")
def browser() -> Iterator[Any]:
    """One Chromium for the browser tests (each test opens its own contexts, which share
    nothing), closed when they are done: Playwright's sync API keeps an event loop running while
    it is open, which must not outlive them (asyncio tests in other packages)."""
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: run `make system-deps` (Debian's chromium package)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@dataclass
class PageLog:
    """What a page said on its console: CSP violations and other errors."""

    csp_violations: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def _watch(page: Any, log: PageLog) -> None:
    def on_console(message: Any) -> None:
        if message.type != "error":
            return
        text = message.text
        if "Content Security Policy" in text or "Content-Security-Policy" in text:
            log.csp_violations.append(text)
        else:
            log.errors.append(text)

    page.on("console", on_console)
    page.on("pageerror", lambda error: log.errors.append(f"uncaught: {error}"))


@pytest.fixture
def new_phone(browser: Any) -> Iterator[Callable[..., tuple[Any, Any, PageLog]]]:
    """`context, page, log = new_phone(locale="es-AR", width=412)`: a new phone context (no
    cookies shared with any other). Every context is closed and checked for CSP violations at
    the end of the test."""
    opened: list[tuple[Any, PageLog]] = []

    def make(locale: str = "en-US", width: int = 412, **options: Any) -> tuple[Any, Any, PageLog]:
        context = browser.new_context(
            viewport={"width": width, "height": PHONE_VIEWPORT["height"]},
            is_mobile=True,
            has_touch=True,
            locale=locale,
            device_scale_factor=1,
            **options,
        )
        page = context.new_page()
        log = PageLog()
        _watch(page, log)
        opened.append((context, log))
        return context, page, log

    yield make
    violations = [text for _context, log in opened for text in log.csp_violations]
    uncaught = [t for _context, log in opened for t in log.errors if t.startswith("uncaught")]
    for context, _log in opened:
        context.close()
    assert not violations, f"Content-Security-Policy violations: {violations}"
    assert not uncaught, f"uncaught JavaScript errors: {uncaught}"


@pytest.fixture
def phone(new_phone: Callable[..., tuple[Any, Any, PageLog]]) -> Any:
    """A page in a fresh phone-sized context (412x915)."""
    _context, page, _log = new_phone()
    return page


@pytest.fixture
def screenshot(request: pytest.FixtureRequest) -> Callable[[Any, str], Path]:
    """`screenshot(page, "01-welcome")` saves a full-page PNG and returns its path."""
    folder = ARTIFACTS / Path(str(request.node.path)).stem

    def take(page: Any, name: str) -> Path:
        folder.mkdir(parents=True, exist_ok=True)
        safe = re.sub(r"[^A-Za-z0-9_.-]+", "-", name)
        path = folder / f"{safe}.png"
        page.screenshot(path=str(path), full_page=True)
        return path

    return take


def axe_violations(page: Any, impacts: set[str] = BLOCKING_IMPACTS) -> list[dict[str, Any]]:
    """axe-core's violations of the page (WCAG 2.x A and AA rules and best practices) whose
    impact is in `impacts`. axe is evaluated through the DevTools protocol, which the page's
    Content-Security-Policy does not govern, so the page needs no exception for it."""
    if not AXE_SOURCE.exists():
        pytest.fail(f"{AXE_SOURCE} is missing: run `make browser-deps` (npm ci in tests/browser)")
    if not page.evaluate("() => typeof window.axe !== 'undefined'"):
        page.evaluate(AXE_SOURCE.read_text(encoding="utf-8") + "\n;undefined")
    result = page.evaluate(
        """async () => {
            const r = await window.axe.run(document, {resultTypes: ['violations']});
            return r.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
                nodes: v.nodes.map(n => n.target.join(' ')).slice(0, 5)}));
        }"""
    )
    return [violation for violation in result if violation.get("impact") in impacts]


@pytest.fixture
def axe_check() -> Callable[[Any, str], None]:
    """`axe_check(page, "welcome")` fails the test on a serious or critical axe violation."""

    def check(page: Any, name: str) -> None:
        found = axe_violations(page)
        assert not found, f"axe on {name}: {json.dumps(found, indent=1)}"

    return check


def submit(page: Any, selector: str = "button[type=submit]") -> None:
    """Click a form's button and wait for the page it leads to: the consumer's forms go
    through the outbox (`offline.js`), which moves on by script once the server answered.

    The button is waited for, on a loaded page, before the navigation is: a click that just
    followed a link (a photo step's Continue) may still be loading the page with the button,
    and that load would otherwise be taken for the one the button leads to. On a timeout the
    page's address and text are printed, to tell a slow server from a wrong page."""
    try:
        page.wait_for_selector(selector, state="visible", timeout=30_000)
        page.wait_for_load_state("load", timeout=30_000)
        with page.expect_navigation(timeout=30_000):
            page.click(selector)
    except Exception:
        print(f"submit({selector!r}) failed on {page.url}:\n{_page_text(page)}")
        raise


def _page_text(page: Any) -> str:
    try:
        return str(page.inner_text("body", timeout=2_000))[:2_000]
    except Exception as error:  # the page is gone or navigating: say so instead
        return f"(no text: {error})"
