"""`inspectlang verify TEMPLATE.insp [--format json] [--counterexamples DIR]`: prove what a
template decides (`runtime.proofs.properties`).

Text output: one line per property (`holds`, `FAILS`, `unknown`), and under a failing one the
events file of its counterexample, which `inspectlang simulate TEMPLATE EVENTS` replays to the
same verdict. `--counterexamples DIR` writes each as `DIR/<property>.events.json`. Exit code 0
when every property holds, 1 when one fails or the template does not compile, 2 when none fails
but one is unknown.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "verify",
        help="prove properties of a template, with counterexamples simulate replays",
        description="Prove what a template decides: approval and disapproval reachable, no "
        "approval without the required photos and validations or on a missing value, no rule "
        "error, every verdict line and rule branch reachable. A failing property prints an "
        "events file that `inspectlang simulate` replays to the same verdict.",
    )
    parser.add_argument("template", type=Path, help="the .insp template")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.add_argument(
        "--counterexamples", type=Path, help="write each counterexample's events file here"
    )
    parser.add_argument(
        "--write-tests",
        type=Path,
        metavar="FILE",
        help="write the inspections the proofs found as cases (NAME.tests.json format), each "
        "expecting what simulate made of it: a start for the template's tests",
    )
    parser.set_defaults(handler=run)


def load(path: Path) -> Any:
    """The template's program, or None after printing why it cannot be had."""
    from inspectlang.compiler import compile_source
    from inspectlang.diagnostics import TemplateError
    from inspectlang.includes import DirectoryResolver
    from runtime.errors import InvalidProgram
    from runtime.program import load_program

    try:
        source = path.read_text(encoding="utf-8")
        manifest = compile_source(source, str(path), includes=DirectoryResolver(path.parent))
        return load_program(manifest)
    except TemplateError as error:
        print(error.render(), file=sys.stderr)
    except (OSError, UnicodeDecodeError, InvalidProgram) as error:
        print(f"{path}: {error}", file=sys.stderr)
    return None


def run(args: argparse.Namespace) -> int:
    from runtime.proofs.properties import timed_verify

    program = load(args.template)
    if program is None:
        return 1
    results, seconds = timed_verify(program)
    if args.counterexamples is not None:
        args.counterexamples.mkdir(parents=True, exist_ok=True)
        for result in results:
            if result.answer == "fails" and result.events is not None:
                target = args.counterexamples / f"{result.name}.events.json"
                target.write_text(json.dumps(result.events, indent=2, ensure_ascii=False) + "\n")
    if args.write_tests is not None:
        args.write_tests.write_text(
            json.dumps({"cases": found_cases(results)}, indent=2, ensure_ascii=False) + "\n"
        )
    if args.format == "json":
        document = {
            "template": str(args.template),
            "seconds": round(seconds, 3),
            "properties": [result.to_json() for result in results],
        }
        print(json.dumps(document, indent=2, ensure_ascii=False))
    else:
        for result in results:
            mark = {"holds": "holds  ", "fails": "FAILS  ", "unknown": "unknown"}[result.answer]
            print(f"{mark} {result.name}: {result.description}")
            if result.answer != "holds" and result.detail:
                print(f"        {result.detail}")
            if result.answer == "fails" and result.events is not None:
                if result.replayed is not None:
                    shown = result.replayed
                    print(f"        simulate ends {shown['status']}, {shown['veredict']}")
                print("        counterexample (an events file for inspectlang simulate):")
                for line in json.dumps(result.events, ensure_ascii=False).splitlines():
                    print(f"        {line}")
        held = sum(result.answer == "holds" for result in results)
        print(f"{held} of {len(results)} properties hold ({seconds:.2f} s)")
    if any(result.answer == "fails" for result in results):
        return 1
    return 2 if any(result.answer == "unknown" for result in results) else 0


def found_cases(results: list[Any]) -> list[dict[str, Any]]:
    """One case per distinct inspection the proofs replayed, named after what it shows and
    expecting the status, veredict and reasons simulate gave it."""
    cases: list[dict[str, Any]] = []
    seen: set[str] = set()
    for result in results:
        if result.events is None or result.replayed is None:
            continue
        key = json.dumps(result.events, sort_keys=True)
        if key in seen:
            continue
        seen.add(key)
        ends = result.replayed
        expect = {"status": ends["status"], "veredict": ends["veredict"]}
        if ends["status"] == "completed":
            expect["reasons"] = ends.get("reasons", [])
        name = result.description if result.answer == "holds" else f"FAILS: {result.description}"
        cases.append({"name": name, **result.events, "expect": expect})
    return cases


def register_test(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "test",
        help="run a template's cases (NAME.tests.json) and report decision coverage",
        description="Run the cases written beside a template (NAME.tests.json: events and the "
        "expected status, veredict and reasons) through simulate, and report which verdict "
        "lines, rule branches and check outcomes they exercised.",
    )
    parser.add_argument("template", type=Path, help="the .insp template")
    parser.add_argument("--tests", type=Path, help="the cases (default: NAME.tests.json beside)")
    parser.add_argument("--min-coverage", type=float, default=0.0, metavar="N")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.set_defaults(handler=run_test)


def run_test(args: argparse.Namespace) -> int:
    from runtime.proofs.cases import CasesError, load_cases, run_cases, tests_path

    program = load(args.template)
    if program is None:
        return 1
    path = args.tests or tests_path(args.template)
    try:
        cases = load_cases(path)
    except CasesError as error:
        print(error, file=sys.stderr)
        return 1
    report = run_cases(program, cases)
    enough = report.coverage >= args.min_coverage
    if args.format == "json":
        print(json.dumps(report.to_json(), indent=2, ensure_ascii=False))
    else:
        for case in report.cases:
            print(f"{'ok  ' if case.passed else 'FAIL'} {case.name}")
            for problem in case.texts:
                print(f"     {problem}")
        passed = sum(case.passed for case in report.cases)
        print(f"{passed} of {len(report.cases)} cases pass")
        total = len(report.covered) + len(report.uncovered)
        print(f"decision coverage {report.coverage:.1f}% ({len(report.covered)} of {total})")
        for text in report.uncovered:
            print(f"  not exercised: {text}")
        if not enough:
            print(f"coverage {report.coverage:.1f}% is under --min-coverage {args.min_coverage:g}")
    return 0 if report.passed and enough else 1


def register_diff(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "diff",
        help="what a new revision of a template approves differently, with examples",
        description="The semantic difference of two revisions: an inspection approved by NEW "
        "and not by OLD, and the reverse, each as events files simulate replays; or "
        "'equivalent'.",
    )
    parser.add_argument("old", type=Path, help="the old revision (.insp)")
    parser.add_argument("new", type=Path, help="the new revision (.insp)")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.set_defaults(handler=run_diff)


def run_diff(args: argparse.Namespace) -> int:
    from runtime.proofs.diff import difference

    old, new = load(args.old), load(args.new)
    if old is None or new is None:
        return 1
    found = difference(old, new)
    if args.format == "json":
        print(json.dumps(found.to_json(), indent=2, ensure_ascii=False))
    elif found.equivalent:
        print("equivalent: no inspection is approved by one revision and not by the other")
    else:
        for direction in found.directions:
            if direction.answer == "same":
                print(f"nothing is {direction.description}")
                continue
            if direction.answer == "unknown":
                print(f"unknown whether anything is {direction.description}: {direction.detail}")
                continue
            old_end, new_end = direction.old_end or {}, direction.new_end or {}
            print(f"{direction.description}: for example (events for NEW)")
            print(f"    {json.dumps(direction.new_events, ensure_ascii=False)}")
            print(
                f"    OLD ends {old_end.get('status')}, {old_end.get('veredict')}"
                f"{_why(old_end)}; NEW ends {new_end.get('status')}, {new_end.get('veredict')}"
                f"{_why(new_end)}"
            )
    return 0 if found.equivalent else 1


def _why(end: dict[str, Any]) -> str:
    reasons = end.get("reasons") or end.get("review") or []
    return f" ({'; '.join(map(str, reasons))})" if reasons else ""
