"""The consumer's flow on a bad network, in Chromium at a 390 px phone (docs/consumer.md,
"Offline"): the outbox in IndexedDB, the server's idempotency by client id, the retries without
a reload and the service worker.

Each scenario counts, from the API, the photos lost (a slot with no image) and duplicated (an
image stored more than once: a slot's `attempt` above 1, or more images than photos taken),
and both must be 0. The suite runs each scenario once; `benchmarks/bench_offline.py` runs them
20 times each (`OFFLINE_REPEAT`) and reports the counts and the time from the network's return
to the last photo stored (`OFFLINE_RESULTS`, one JSON line per run).

Also, once each: answers given offline (kept across an offline reload, each item run once by
the server, the verdict reached with no reload) with the Send button that a second press
cannot make send twice; and each state of a photo and of the send in es_AR at 390 px, for a
person to look at (screenshots) and for axe-core.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from PIL import Image, ImageDraw

from server.db import Database
from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS, submit

TEMPLATE = Path(__file__).with_name("offline_flow.insp")
ANSWERS = Path(__file__).with_name("offline_answers.insp")
PHONE = {"width": 390, "height": 844}
REPEAT = int(os.environ.get("OFFLINE_REPEAT", "1"))
RESULTS = os.environ.get("OFFLINE_RESULTS")
#: A photo kept on the phone: tried and waiting for a network, or queued behind one that is.
PENDING = "[data-queue] li:is(.state-waiting, .state-saved)"
SLOTS = ("Front of the boxes", "Back of the boxes", "The shipping label", "The seal")


@dataclass
class Outcome:
    scenario: str
    photos: int
    lost: int
    duplicated: int
    #: From the network's return (or the first try) to the last photo stored, in seconds.
    seconds: float


@pytest.fixture(scope="module")
def api(live_server: str, db: Database) -> Any:
    from server.auth import create_company

    company = create_company(db, "Offline Boxes", ["member-1"])
    headers = {"x-api-key": company["testKey"]}
    with httpx.Client(base_url=live_server, headers=headers, timeout=30) as client:
        made = {}
        for name, source in (("template", TEMPLATE), ("answers", ANSWERS)):
            answer = client.post("/v1/inspection/template", json={"source": source.read_text()})
            assert answer.status_code == 201, answer.text
            made[name] = answer.json()["_id"]
        yield {"client": client, "base": live_server, **made}


@pytest.fixture(scope="module")
def camera(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Four phone photos (2400x1800: the page downscales them), one colour each."""
    folder = tmp_path_factory.mktemp("offline-camera")
    made = []
    for index, colour in enumerate(((180, 120, 60), (90, 140, 200), (60, 160, 90), (200, 60, 60))):
        image = Image.new("RGB", (2400, 1800), colour)
        draw = ImageDraw.Draw(image)
        for step in range(0, 2400, 120):
            draw.line([(step, 0), (2400 - step, 1800)], fill=(250, 250, 250), width=10)
        path = folder / f"photo-{index}.jpg"
        image.save(path, "JPEG", quality=90)
        made.append(path)
    return made


def create(
    api: dict[str, Any], template: str = "template", locale: str = "en_US"
) -> tuple[str, str]:
    body = {
        "templateId": api[template],
        "locale": locale,
        "delivery": {"channel": "email", "destination": "ana@example.com"},
        "goods": {"description": "Four boxes", "quantity": 4},
    }
    answer = api["client"].post("/v1/inspection/goods", json=body)
    assert answer.status_code == 201, answer.text
    return answer.json()["inspectionId"], answer.json()["magicLink"]


def images_of(api: dict[str, Any], inspection_id: str) -> list[dict[str, Any]]:
    document = api["client"].get(f"/v1/inspection/{inspection_id}").json()
    return list(document["products"][0]["images"])


def counted(
    api: dict[str, Any], inspection_id: str, scenario: str, taken: int, since: float
) -> Outcome:
    """Waits (60 s at most) for the photos taken to be stored, then counts."""
    deadline = time.monotonic() + 60
    images = images_of(api, inspection_id)
    while len(images) < taken and time.monotonic() < deadline:
        time.sleep(0.1)
        images = images_of(api, inspection_id)
    seconds = time.monotonic() - since
    sides = {image["side"] for image in images}
    duplicated = max(0, len(images) - taken) + sum(image["attempt"] - 1 for image in images)
    outcome = Outcome(scenario, taken, taken - len(sides), duplicated, round(seconds, 2))
    if RESULTS:
        with open(RESULTS, "a", encoding="utf-8") as out:
            out.write(json.dumps(asdict(outcome)) + "\n")
    return outcome


def new_context(browser: Any, locale: str = "en-US") -> tuple[Any, Any]:
    context = browser.new_context(
        viewport=PHONE, is_mobile=True, has_touch=True, device_scale_factor=1, locale=locale
    )
    return context, watched(context.new_page())


def watched(page: Any) -> Any:
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.errors = errors
    return page


def heading(page: Any) -> str:
    return str(page.locator("h1").first.inner_text())


def open_flow(page: Any, link: str, first: str = SLOTS[0]) -> None:
    page.goto(link)
    page.check("input[name=consent]")
    submit(page)
    assert heading(page) == first
    # The service worker controls the page before the network may go. A page whose navigation
    # began before the worker activated stays uncontrolled (`clients.claim()` takes the pages
    # there are); the next page is controlled, as the consumer's next step would be.
    page.evaluate("async () => { await navigator.serviceWorker.ready; }")
    if not page.evaluate("() => navigator.serviceWorker.controller !== null"):
        page.reload()
    page.wait_for_function("() => navigator.serviceWorker.controller !== null", timeout=20_000)


def take(page: Any, path: Path, *, sent: bool) -> None:
    """A photo: kept on the phone at once; `sent` waits for the server's answer too."""
    page.set_input_files("[data-camera]", str(path))
    wanted = "[data-notice].ok" if sent else PENDING
    try:
        page.wait_for_selector(wanted, timeout=30_000)
    except Exception:
        items = page.evaluate("""async () => {
            const id = document.querySelector('[data-consumer]').dataset.inspection;
            const items = await new InspectlangOutbox.Outbox(id).all();
            return items.map(i => [i.kind, i.state, i.why]);
        }""")
        print("the photo's box:", page.inner_text("[data-photo]"), page.errors, items)
        raise


def wait_kept(page: Any, step_count: int) -> None:
    """Every step of the flow kept by the service worker (it fetches them after the first
    page): what lets the consumer go on offline to steps not seen yet."""
    page.wait_for_function(
        """async (count) => {
            const names = await caches.keys();
            let pages = 0;
            for (const name of names) {
                const keys = await (await caches.open(name)).keys();
                pages += keys.filter(r => /\\/step\\//.test(r.url)).length;
            }
            return pages >= count;
        }""",
        arg=step_count,
        timeout=20_000,
    )


# --- the scenarios --------------------------------------------------------------------------


def offline_after_the_second_photo(
    browser: Any, api: dict[str, Any], camera: list[Path], look: Callable[..., Any] | None
) -> Outcome:
    inspection_id, link = create(api)
    context, page = new_context(browser)
    try:
        open_flow(page, link)
        wait_kept(page, 6)  # welcome, four photos, review
        take(page, camera[0], sent=True)
        page.click("[data-next]")
        take(page, camera[1], sent=True)
        context.set_offline(True)
        page.click("[data-next]")  # a step not seen yet, from the service worker's cache
        assert heading(page) == SLOTS[2]
        take(page, camera[2], sent=False)
        if look:
            look(page, "01-offline-photo-saved-on-the-phone")
        page.click("[data-next]")
        take(page, camera[3], sent=False)
        page.reload()  # offline: the page comes back with its pending photo
        assert heading(page) == SLOTS[3]
        page.wait_for_selector(PENDING + " img")
        assert "2 photos not sent yet." in page.inner_text("[data-outbox-status]")
        if look:
            look(page, "02-reloaded-offline-pending-photo")
        page.click("[data-next]")
        assert heading(page) == "Review and send"
        page.click("button:has-text('Send inspection')")
        page.wait_for_selector("[data-form-notice].ok")
        status = page.inner_text("[data-outbox-status]")
        assert "2 photos not sent yet. Your inspection is not sent yet." in status, status
        if look:
            look(page, "03-review-send-queued-offline")
        assert len(images_of(api, inspection_id)) == 2  # nothing left the phone meanwhile
        back = time.monotonic()
        context.set_offline(False)
        outcome = counted(api, inspection_id, "offline after the second photo", 4, back)
        page.wait_for_url("**/done", timeout=30_000)  # the send went out after the photos
        assert heading(page) == "Thank you!"
        if look:
            look(page, "04-sent-by-itself")
        document = api["client"].get(f"/v1/inspection/{inspection_id}").json()
        assert document["status"] == "completed" and document["completedBy"] == "consumer"
        assert document["veredict"] == "approved", document["reasons"]
        assert not page.errors, page.errors
        return outcome
    finally:
        context.close()


def aborted_first_tries(
    browser: Any, api: dict[str, Any], camera: list[Path], tries: int = 3
) -> Outcome:
    """The first `tries` uploads die on the way (the connection reset): the page tries again
    by itself (its timer's backoff), and the photo is stored once."""
    inspection_id, link = create(api)
    context, page = new_context(browser)
    try:
        open_flow(page, link)
        aborted: list[str] = []

        def flaky(route: Any) -> None:
            if len(aborted) < tries:
                aborted.append(route.request.url)
                route.abort("connectionreset")
            else:
                route.continue_()

        context.route("**/photo", flaky)
        started = time.monotonic()
        take(page, camera[0], sent=True)
        name = f"first {tries} uploads aborted" if tries else "online (baseline)"
        outcome = counted(api, inspection_id, name, 1, started)
        assert len(aborted) == tries
        assert not page.errors, page.errors
        return outcome
    finally:
        context.close()


def slow_network(browser: Any, api: dict[str, Any], camera: list[Path]) -> Outcome:
    """A slow, distant network (CDP `Network.emulateNetworkConditions`: 400 ms, 64 KB/s up)."""
    inspection_id, link = create(api)
    context, page = new_context(browser)
    try:
        open_flow(page, link)
        cdp = context.new_cdp_session(page)
        cdp.send("Network.enable")
        cdp.send(
            "Network.emulateNetworkConditions",
            {
                "offline": False,
                "latency": 400,
                "downloadThroughput": 128 * 1024,
                "uploadThroughput": 64 * 1024,
            },
        )
        started = time.monotonic()
        take(page, camera[0], sent=True)
        page.click("[data-next]")
        take(page, camera[1], sent=True)
        outcome = counted(api, inspection_id, "slow network", 2, started)
        assert not page.errors, page.errors
        return outcome
    finally:
        context.close()


SENT_AND_SHOWN = """() => {
  const preview = document.querySelector("[data-preview]");
  const items = [...document.querySelectorAll("[data-queue] li")];
  return preview && !preview.hidden && preview.getAttribute("src")
    && items.every((li) => li.classList.contains("state-sent"));
}"""


def closed_with_photos_pending(
    browser: Any,
    api: dict[str, Any],
    camera: list[Path],
    profile: Path,
    look: Callable[[Any, str], Any] | None = None,
) -> Outcome:
    """Photos taken offline, the browser closed; opened again online (the same profile): they
    go out at the page's load."""
    inspection_id, link = create(api)
    options = {"viewport": PHONE, "is_mobile": True, "has_touch": True, "locale": "en-US"}
    launch = browser.browser_type.launch_persistent_context
    context = launch(str(profile), executable_path=CHROMIUM, args=CHROMIUM_ARGS, **options)
    try:
        page = watched(context.pages[0] if context.pages else context.new_page())
        open_flow(page, link)
        context.set_offline(True)
        take(page, camera[0], sent=False)
        page.click("[data-next]")
        take(page, camera[1], sent=False)
        step = page.url
    finally:
        context.close()
    assert images_of(api, inspection_id) == []
    context = launch(str(profile), executable_path=CHROMIUM, args=CHROMIUM_ARGS, **options)
    try:
        page = watched(context.pages[0] if context.pages else context.new_page())
        started = time.monotonic()
        page.goto(step)
        outcome = counted(api, inspection_id, "browser closed with photos pending", 2, started)
        # What the consumer sees: the photo, and nothing left waiting on the phone. The page
        # or the service worker (Background Sync, which may run while the page loads) sent
        # them; a photo sent after the page was asked for shows in the list as sent.
        page.wait_for_function(SENT_AND_SHOWN, timeout=30_000)
        if look:
            look(page, "reopened-photos-sent")
        assert not page.errors, page.errors
        return outcome
    finally:
        context.close()


# --- the tests: each scenario once (REPEAT times under the benchmark) ------------------------


def check(outcome: Outcome) -> None:
    assert (outcome.lost, outcome.duplicated) == (0, 0), outcome


def test_offline_after_the_second_photo_every_photo_arrives_once_and_the_verdict_follows(
    browser: Any, api: dict[str, Any], camera: list[Path], screenshot: Any, axe_check: Any
) -> None:
    def look(page: Any, name: str) -> None:
        """Each state on the phone: a screenshot to look at, and axe-core."""
        screenshot(page, name)
        axe_check(page, name)

    for run in range(REPEAT):
        check(offline_after_the_second_photo(browser, api, camera, look if run == 0 else None))


def test_uploads_aborted_for_the_first_tries_are_sent_once(
    browser: Any, api: dict[str, Any], camera: list[Path]
) -> None:
    for _run in range(REPEAT):
        check(aborted_first_tries(browser, api, camera))
        if RESULTS:  # the benchmark's baseline, in the same run: the same photo, nothing aborted
            check(aborted_first_tries(browser, api, camera, tries=0))


def test_a_slow_network_sends_every_photo_once(
    browser: Any, api: dict[str, Any], camera: list[Path]
) -> None:
    for _run in range(REPEAT):
        check(slow_network(browser, api, camera))


def test_photos_pending_when_the_browser_closed_go_out_when_it_opens_again(
    browser: Any, api: dict[str, Any], camera: list[Path], tmp_path: Path, screenshot: Any
) -> None:
    for run in range(REPEAT):
        look = screenshot if run == 0 else None
        check(closed_with_photos_pending(browser, api, camera, tmp_path / f"profile-{run}", look))


# --- answers given offline, and the Send button -------------------------------------------------


def outbox_items(page: Any) -> list[dict[str, Any]]:
    """The items of this inspection's outbox on the phone: kind and state."""
    return list(
        page.evaluate("""async () => {
            const id = document.querySelector('[data-consumer]').dataset.inspection;
            const items = await new InspectlangOutbox.Outbox(id).all();
            return items.map(i => ({kind: i.kind, state: i.state, clientId: i.clientId}));
        }""")
    )


def claimed_keys(db: Database, inspection_id: str) -> list[str]:
    """The client ids the server ran a request of this inspection's outbox for (each one is
    claimed once, before its handler runs: server/consumer/outbox.py)."""
    from sqlmodel import col, select

    from server.tables import IdempotencyRecord

    with db.session() as session:
        query = select(IdempotencyRecord.key).where(
            col(IdempotencyRecord.key).startswith(f"consumer/{inspection_id}/")
        )
        return [key.rsplit("/", 1)[-1] for key in session.exec(query)]


SEND = "form[data-outbox=finish] button[type=submit]"


def says(page: Any, text: str) -> None:
    """Waits for the page's outbox line to say `text` (it is drawn from IndexedDB)."""
    page.wait_for_function(
        "(t) => document.querySelector('[data-outbox-status]').textContent.includes(t)",
        arg=text,
        timeout=10_000,
    )


def test_answers_given_offline_are_kept_across_a_reload_and_arrive_once(
    browser: Any, api: dict[str, Any], camera: list[Path], db: Database
) -> None:
    """The questions answered offline (their own step and the one beside the photo), the photo
    taken, the page reloaded offline: the answers are still there, on the phone and on the
    pages. Send pressed twice offline queues one send, and the button says it waits. The
    network back: each answer, the photo and the send run once on the server, and the
    inspection reaches its verdict with no reload."""
    inspection_id, link = create(api, "answers")
    context, page = new_context(browser)
    try:
        open_flow(page, link, first="A few questions")
        wait_kept(page, 4)  # welcome, the questions, the photo, review
        context.set_offline(True)
        page.get_by_label("Number of boxes").fill("4")
        page.get_by_label("State of the boxes").select_option(label="Intact")
        page.click("button[type=submit]")
        page.wait_for_selector("h1:has-text('The seal')")  # from the service worker's copy
        says(page, "Your answers are not sent yet.")
        page.get_by_label("The seal is whole").check()
        page.click("form[data-outbox] button[type=submit]")
        page.wait_for_selector("[data-form-notice].ok")
        take(page, camera[0], sent=False)

        page.reload()  # offline: the answers wait on the phone and show on their pages
        assert heading(page) == "The seal"
        page.wait_for_selector(PENDING + " img")
        says(page, "1 photo not sent yet. Your answers are not sent yet.")
        assert page.get_by_label("The seal is whole").is_checked()
        page.click("a.button.secondary:has-text('Back')")
        assert heading(page) == "A few questions"
        says(page, "1 photo not sent yet. Your answers are not sent yet.")
        assert page.get_by_label("Number of boxes").input_value() == "4"
        chosen = page.get_by_label("State of the boxes").evaluate("s => s.selectedOptions[0].text")
        assert chosen == "Intact"
        page.go_back()
        assert heading(page) == "The seal"
        page.click("[data-next]")
        assert heading(page) == "Review and send"

        page.dblclick(SEND)  # a double tap: one send
        page.wait_for_function(
            "(s) => document.querySelector(s).textContent === 'Waiting for a connection to send'",
            arg=SEND,
        )
        assert page.locator(SEND).is_disabled()
        page.click(SEND, force=True)  # pressed again: the disabled button queues nothing
        page.reload()  # the send queued before the reload still holds the button
        page.wait_for_function(
            "(s) => document.querySelector(s).textContent === 'Waiting for a connection to send'",
            arg=SEND,
        )
        assert page.locator(SEND).is_disabled()
        kinds = sorted(item["kind"] for item in outbox_items(page))
        assert kinds == ["finish", "form", "form", "photo"], kinds
        queued = {item["clientId"] for item in outbox_items(page)}
        assert claimed_keys(db, inspection_id) == []  # nothing left the phone meanwhile

        context.set_offline(False)
        page.wait_for_url("**/done", timeout=60_000)  # no reload: the page moves on by itself
        assert heading(page) == "Thank you!"
        document = api["client"].get(f"/v1/inspection/{inspection_id}").json()
        product = document["products"][0]
        given = document["template"]["inputs"] + product["inputs"]  # general, beside the photo
        values = {item["label"]: item.get("value") for item in given}
        assert values == {
            "Number of boxes": 4,
            "State of the boxes": "Intact",
            "The seal is whole": True,
        }
        assert [image["attempt"] for image in product["images"]] == [1]
        assert document["status"] == "completed" and document["completedBy"] == "consumer"
        assert document["veredict"] == "approved", document["reasons"]
        claimed = claimed_keys(db, inspection_id)
        assert sorted(claimed) == sorted(queued), (claimed, queued)  # each item ran once
        assert not page.errors, page.errors
    finally:
        context.close()


# --- each state on a phone in the street, in es_AR ------------------------------------------------


def test_each_state_of_a_photo_and_of_the_send_in_es_AR_at_390_px(
    browser: Any,
    api: dict[str, Any],
    camera: list[Path],
    screenshot: Any,
    axe_check: Any,
    tmp_path: Path,
) -> None:
    """Sending, sent, saved on the phone, reloaded offline, refused (a file that is no photo),
    no retake left, the send queued offline and gone out by itself: each one photographed at
    390 px in es_AR, for a person to read as the consumer would, and checked by axe-core. The
    words are the catalog's (server/web/locale/es_AR)."""
    inspection_id, link = create(api, locale="es_AR")
    context, page = new_context(browser, "es-AR")
    broken = tmp_path / "broken.jpg"
    broken.write_bytes(b"not a photo: the camera app wrote half a file")

    def look(name: str) -> None:
        screenshot(page, f"es-AR-{name}")
        axe_check(page, name)

    try:
        open_flow(page, link, first="Frente de las cajas")
        wait_kept(page, 6)
        cdp = context.new_cdp_session(page)
        cdp.send("Network.enable")
        slow = {"offline": False, "latency": 400, "downloadThroughput": 64 * 1024}
        cdp.send("Network.emulateNetworkConditions", {**slow, "uploadThroughput": 8 * 1024})
        page.set_input_files("[data-camera]", str(camera[0]))
        page.wait_for_selector("[data-progress]:not([hidden])")
        assert "Enviando tu foto" in page.inner_text("[data-progress]")
        look("01-sending")
        normal = {"offline": False, "latency": 0, "downloadThroughput": -1}
        cdp.send("Network.emulateNetworkConditions", {**normal, "uploadThroughput": -1})
        page.wait_for_selector("[data-notice].ok", timeout=60_000)
        assert "Foto recibida" in page.inner_text("[data-notice]")
        look("02-sent")

        context.set_offline(True)
        take(page, camera[1], sent=False)
        page.set_input_files("[data-camera]", str(broken))
        says(page, "2 fotos todavía sin enviar. No tenés conexión")
        assert "Guardada en tu teléfono, todavía sin enviar" in page.inner_text("[data-queue]")
        look("03-saved-on-the-phone")
        page.reload()
        assert heading(page) == "Frente de las cajas"
        page.wait_for_selector(PENDING + " img")
        says(page, "2 fotos todavía sin enviar. No tenés conexión")
        assert page.locator("[data-preview]").is_visible()  # the photo waiting, not "No photo"
        no_more = "Esta foto ya no se puede volver a enviar: se guarda la última que enviaste."
        assert page.inner_text("[data-attempts]") == no_more  # 1 sent (its answer said) + 2 here
        look("04-reloaded-offline")

        context.set_offline(False)
        page.wait_for_selector("[data-queue] li.state-failed", timeout=60_000)
        refused = page.inner_text("[data-queue] li.state-failed")
        assert "Ese archivo no es una foto que podamos leer" in refused, refused
        look("05-refused")

        context.set_offline(True)  # the slot takes 3 photos: 2 sent, this one waits
        take(page, camera[2], sent=False)
        assert page.locator("[data-take]").is_hidden()  # no fourth photo to be refused
        assert page.inner_text("[data-attempts]") == no_more
        look("06-no-retake-left")

        page.goto(page.url.rsplit("/step/", 1)[0] + "/step/review")
        assert heading(page) == "Revisá y enviá"
        page.click(SEND)
        page.wait_for_function(
            "(s) => document.querySelector(s).textContent === 'Esperando conexión para enviar'",
            arg=SEND,
        )
        says(page, "1 foto todavía sin enviar. Tu inspección todavía no se envió.")
        look("07-send-queued")
        context.set_offline(False)
        page.wait_for_url("**/done", timeout=60_000)
        look("08-sent-by-itself")
        images = images_of(api, inspection_id)
        assert [image["attempt"] for image in images] == [3], images
        assert not page.errors, page.errors
    finally:
        context.close()
