"""`inspectlang simulate TEMPLATE.insp EVENTS.json [--format json]`: a scripted inspection.

The events file is `{"events": [...]}` (optionally `"start"`, the clock of the first event, and
`"inspectionType"`). Each event is one of `create`, `update`, `update_product`, `start`,
`image`, `validation`, `damage`, `finish`, `expire`, with the request body of the runtime call.
Inputs may be named by their template name (`{"input": "mileage", "value": 1}`) and images by
name or side; a `create` without `locale` gets the template's default locale. `image` events
build a real JPEG (size, EXIF date, GPS as given) and may carry `validations` results recorded
right after the upload. The state is printed after each event,
then the verdict and its explanation.
"""

from __future__ import annotations

import argparse
import datetime as dt
import io
import json
import sys
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw

from runtime import engine
from runtime.api_view import to_api
from runtime.errors import InspectionError, InspectionRuntimeError, InvalidProgram
from runtime.explain import explain, render_text, shown
from runtime.program import Program, load_program
from runtime.state import InspectionState
from runtime.validators import ImageUpload

DEFAULT_START = "2024-05-01T12:00:00Z"


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "simulate",
        help="run a scripted inspection and explain its verdict",
        description="Run a scripted inspection: print the state after each event, then the "
        "verdict and its explanation. Events: create, update, update_product, start, image "
        "(with validation results), validation, damage, finish, expire. Examples: "
        "examples/*.events.json.",
    )
    parser.add_argument("template", type=Path, help="the .insp template")
    parser.add_argument("events", type=Path, help="the events JSON file")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.set_defaults(handler=run)


class ScriptError(InspectionRuntimeError):
    """The events file itself is malformed (not a refused event): a stable `code`
    (`unknown_input`, `unknown_image`, `create_first`, `unknown_event`, `not_an_object`,
    `events_not_list`) and the `name` it could not find, if any."""

    def __init__(self, message: str, code: str, name: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.name = name


def photo(event: dict[str, Any], moment: dt.datetime) -> bytes:
    """A real JPEG for an image event: size, EXIF capture time and GPS as the event says. It
    shows a shape (`complete` refuses blank photos)."""
    width, height = int(event.get("width", 1280)), int(event.get("height", 960))
    image = Image.new("RGB", (width, height), (90, 90, 90))
    ImageDraw.Draw(image).rectangle(
        (width // 4, height // 3, 3 * width // 4, 2 * height // 3), fill=(200, 60, 50)
    )
    exif = Image.Exif()
    taken = event.get("exifDate", moment.isoformat())
    if taken is not None:
        when = dt.datetime.fromisoformat(str(taken).replace("Z", "+00:00"))
        exif.get_ifd(0x8769)[36867] = when.strftime("%Y:%m:%d %H:%M:%S")
    gps = event.get("gps")
    if gps is not None:
        gps_ifd = exif.get_ifd(0x8825)
        for ref, index, value, signs in ((1, 2, gps[0], "NS"), (3, 4, gps[1], "EW")):
            degrees = abs(float(value))
            whole = int(degrees)
            minutes = int((degrees - whole) * 60)
            seconds = round((degrees - whole - minutes / 60) * 3600, 4)
            gps_ifd[ref] = signs[0] if float(value) >= 0 else signs[1]
            gps_ifd[index] = (float(whole), float(minutes), seconds)
    buffer = io.BytesIO()
    image.save(buffer, "JPEG", exif=exif)
    return buffer.getvalue()


class Simulation:
    """Runs the events of a script against one program, keeping the clock and the state."""

    def __init__(self, program: Program, script: dict[str, Any]) -> None:
        self.program = program
        self.now = dt.datetime.fromisoformat(
            str(script.get("start", DEFAULT_START)).replace("Z", "+00:00")
        )
        self.inspection_type = script.get("inspectionType", program.manifest.inspectionType)
        self.state: InspectionState | None = None
        self.counter = 0

    def ids(self) -> str:
        self.counter += 1
        return f"{self.counter:024x}"

    def input_identifier(self, name: str) -> str:
        for identifier, logic in self.program.manifest.logic.inputs.items():
            if logic.name == name:
                return identifier
        raise ScriptError(f"the template has no input named {name!r}", "unknown_input", name)

    def body(self, body: Any) -> Any:
        """Input names -> identifiers in a body's `inputs`."""
        if not isinstance(body, dict) or not isinstance(body.get("inputs"), list):
            return body
        inputs = []
        for item in body["inputs"]:
            if isinstance(item, dict) and "input" in item:
                item = {
                    "identifier": self.input_identifier(item["input"]),
                    "value": item.get("value"),
                }
            inputs.append(item)
        return {**body, "inputs": inputs}

    def creation_body(self, body: Any) -> Any:
        """A `create` body; without a `locale`, the template's default (its first locale). The
        API requires one (the spec); a script need not repeat it."""
        body = self.body(body)
        if isinstance(body, dict) and "locale" not in body:
            body = {**body, "locale": self.program.manifest.logic.locales[0]}
        return body

    def template_image(self, name: str) -> str | None:
        for identifier, logic in self.program.manifest.logic.images.items():
            if logic.name == name:
                return identifier
        spec = self.program.image_by_side(name)
        return spec.identifier if spec is not None else None

    def image_record_id(self, name: str) -> str:
        identifier = self.template_image(name)
        state = self.require_state()
        for product in state.products:
            for image in product.images:
                if image.templateImageIdentifier == identifier or image.id == name:
                    return image.id
        raise ScriptError(f"no uploaded image {name!r}", "unknown_image", name)

    def require_state(self) -> InspectionState:
        if self.state is None:
            raise ScriptError("the first event must be create", "create_first")
        return self.state

    def apply(self, event: dict[str, Any]) -> None:
        kind = event.get("event")
        if "at" in event:
            self.now = dt.datetime.fromisoformat(str(event["at"]).replace("Z", "+00:00"))
        self.now += dt.timedelta(minutes=float(event.get("minutes", 1)))
        program, now = self.program, self.now
        if kind == "create":
            self.state = engine.create(
                program,
                self.creation_body(event.get("body", {})),
                inspection_type=self.inspection_type,
                now=now,
                ids=self.ids,
                company_id=str(event.get("companyId", "simulation")),
                user_id=str(event.get("userId", "simulation")),
                testing=True,
            )
            return
        state = self.require_state()
        product = state.products[0].id
        if kind == "update":
            self.state = engine.update(program, state, self.body(event.get("body", {})), now=now)
        elif kind == "update_product":
            self.state = engine.update_product(
                program, state, product, event.get("body", {}), now=now
            )
        elif kind == "start":
            self.state = engine.start(program, state, now=now)
        elif kind == "image":
            name = event.get("image")
            identifier = self.template_image(name) if isinstance(name, str) else None
            upload = ImageUpload(
                data=photo(event, now),
                content_type="image/jpeg",
                identifier=identifier,
                side=None if identifier else event.get("side", name),
                date=event.get("date"),
                latitude=event.get("latitude"),
                longitude=event.get("longitude"),
            )
            self.state, record = engine.add_image(
                program, state, product, upload, now=now, ids=self.ids
            )
            for result in event.get("validations", []):
                self.state = engine.record_validation(
                    program,
                    self.state,
                    record.id,
                    {k: v for k, v in result.items() if k != "damages"},
                    damages=result.get("damages", []),
                    now=now,
                    ids=self.ids,
                )
        elif kind == "validation":
            image = self.image_record_id(str(event.get("image")))
            result = {k: event[k] for k in ("validation", "confidence", "result") if k in event}
            self.state = engine.record_validation(
                program,
                state,
                image,
                result,
                damages=event.get("damages", []),
                now=now,
                ids=self.ids,
            )
        elif kind == "damage":
            self.state = engine.declare_damage(
                program, state, product, event.get("body", {}), now=now, ids=self.ids
            )
        elif kind == "finish":
            completed_by = str(event.get("completedBy", "client"))
            self.state = engine.finish(program, state, completed_by=completed_by, now=now)
        elif kind == "expire":
            self.state = engine.expire(program, state, now=now)
        else:
            raise ScriptError(f"unknown event {kind!r}", "unknown_event", kind)


def summary(index: int, event: dict[str, Any], state: InspectionState | None) -> dict[str, Any]:
    data: dict[str, Any] = {"step": index, "event": event.get("event")}
    if state is not None:
        data.update(
            status=state.status,
            veredict=state.veredict,
            variables=dict(state.variables),
            checks={g.name: g.valid for g in state.globalValidations},
        )
    return data


def run(args: argparse.Namespace) -> int:
    from inspectlang.compiler import compile_source
    from inspectlang.diagnostics import TemplateError
    from inspectlang.includes import DirectoryResolver

    try:
        source = args.template.read_text(encoding="utf-8")
        # `include "NAME"` reads NAME.insp beside the template, as `inspectlang check` does.
        includes = DirectoryResolver(args.template.parent)
        manifest = compile_source(source, str(args.template), includes=includes)
        program = load_program(manifest)
    except TemplateError as error:
        print(error.render(), file=sys.stderr)
        return 1
    except (OSError, InvalidProgram) as error:
        print(f"{args.template}: {error}", file=sys.stderr)
        return 1
    try:
        script = json.loads(args.events.read_text(encoding="utf-8"))
        events = script["events"]
        if not isinstance(events, list):
            raise ScriptError("events must be a list", "events_not_list")
    except (OSError, ValueError, KeyError, TypeError, ScriptError) as error:
        print(f"{args.events}: not an events file: {error}", file=sys.stderr)
        return 1
    simulation = Simulation(program, script)
    steps: list[dict[str, Any]] = []
    for index, event in enumerate(events, start=1):
        step: dict[str, Any]
        try:
            simulation.apply(event)
            step = summary(index, event, simulation.state)
        except InspectionError as error:
            step = {**summary(index, event, simulation.state), "refused": error.to_dict()}
        except (ScriptError, KeyError, TypeError, ValueError) as error:
            print(f"{args.events}: event {index}: {error}", file=sys.stderr)
            return 1
        steps.append(step)
        if args.format == "text":
            print(_line(step))
    state = simulation.state
    if state is None:
        print(f"{args.events}: no inspection was created", file=sys.stderr)
        return 1
    explanation = explain(program, state)
    if args.format == "json":
        document = {
            "steps": steps,
            "inspection": to_api(program, state),
            "explanation": explanation.model_dump(mode="json"),
        }
        print(json.dumps(document, indent=2, ensure_ascii=False))
    else:
        print()
        print(render_text(explanation, source))
    return 0


def _line(step: dict[str, Any]) -> str:
    head = f"#{step['step']:<3} {step['event']:<15}"
    if "refused" in step:
        refused = step["refused"]
        return f"{head} REFUSED {refused['code']}: {refused['description']}"
    if "status" not in step:
        return head
    variables = ", ".join(f"{k}={shown(v)}" for k, v in step["variables"].items())
    return f"{head} status={step['status']} veredict={step['veredict']} {variables}"
