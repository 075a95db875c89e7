"""Compile speed of a large template against Lark's own LALR parse of the same text.

Generates a realistic 2,000-line car template (many images, inputs, rules, checks and verdict
lines), then measures in interleaved rounds (CPU time of the process, the fastest round):

- raw parse: a plain `Lark(grammar, parser="lalr")` of the same `grammar.lark`, with the same
  indentation postlexer (the grammar needs it) and no callbacks, so it builds a Lark Tree, run
  by Lark's own loop (ours runs `inspectlang.parse_loop`: the `lark_loop` variant below);
- our full compile: `inspectlang.compiler.compile_source` (parse, check, manifest), or only
  `inspectlang.parser.parse` when the compiler is not there (the output says which);
- tokens per second of the full compile;
- cold start: fresh `python -c` processes timing their own `import` plus the first compile of the
  built-in `car_easy.insp` (median of 7 after one warm-up run; the interpreter's own start-up
  is not counted), with bytecode caching on (PYTHONDONTWRITEBYTECODE removed for them), so
  they also find inspectlang's cache directory filled (see docs/operations.md);
- the dependencies' share of that cold start: fresh processes importing only pydantic and lark
  (`dependencies_import_ms`), the floor inspectlang's own code cannot go below, each run beside
  one cold start; the median of their differences (`cold_start_ours_ms`) is what our own code
  costs, the figure to compare across machines (this floor was 85-92 ms on one, 98-113 on
  another, which moves `cold_start_ms` as much);
- custom machinery against what it replaces, in the same run: fresh processes, interleaved, each
  timing the cold start above and then the fastest of a few compiles of the large template, once
  with the package as it is and once per variant where a module of ours is swapped for the plain
  tool before anything imports it (`VARIANTS`). The ratios are variant / as-is: above 1.10 the
  machinery pays for itself (it saves more than 10%), below it should go.

Targets (issue 26): compile within 1.3x of the raw parse; cold start at most 120 ms (figures
in docs/design/changes.md). The last line printed is ONE JSON object:
`{"compile_vs_parse": ..., "tokens_per_s": ..., "cold_start_ms": ...}`.
"""

from __future__ import annotations

import importlib.util
import io
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lark import Lark, Token

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from inspectlang import parser as insp_parser  # noqa: E402

TARGET_LINES = 2000
ROUNDS = 15
COLD_RUNS = 7
VALIDATIONS = ("recaptured", "date", "distance", "complete", "color", "damage", "plate")


def header() -> list[str]:
    return [
        "# A large generated car template for the compile benchmark.",
        'template "Benchmark fleet inspection"',
        "    type: car",
        "    locales: en_US, es_AR, pt_BR",
        "",
        "settings",
        "    max attempts: 3",
        "    link expires after: 48 hours",
        "    inspection expires after: 7 days",
        "    minimum confidence: 80",
        "    photo age limit: 24 hours",
        "    photo distance limit: 500 meters",
        "    minimum photo size: 800 x 600",
        "",
        "variable score: numeric = 100",
        'variable risk: text = "low"',
        "",
        "product",
        "    require plate, year",
        "",
    ]


def image(index: int) -> list[str]:
    name = f"photo_{index}"
    lines = [
        f"# Photo {index} of the fleet walk-around.",
        f"image {name}",
        f'    label: "Photo {index} of the car"',
        f'    label es_AR: "Foto {index} del auto"',
        f'    label pt_BR: "Foto {index} do carro"',
        "    validate recaptured",
        "    validate date, within 12 hours",
        "    validate distance, optional, within 300 meters",
        "    validate complete, minimum size 1280 x 720",
        "    validate damage, optional",
    ]
    if index % 4 == 0:
        lines.append("    validate plate, required, minimum confidence 85")
    lines.append("    feature damage_declaration")
    return [*lines, ""]


def numeric_input(index: int) -> list[str]:
    return [
        f"input reading_{index}",
        "    type: numeric",
        f'    label: "Reading {index}"',
        f'    label es_AR: "Lectura {index}"',
        f'    help: "Meter {index}, as shown on the dashboard"  # what the driver sees',
        "    asked at: create, update",
        "    minimum: 0",
        f"    maximum: {1000 * (index + 1)}",
        "    whole number",
        "",
    ]


def select_input(index: int) -> list[str]:
    return [
        f"input use_{index}",
        "    type: select",
        f'    label: "Use of vehicle {index}"',
        "    asked at: update",
        '    option private: "Private"',
        '    option private es_AR: "Particular"',
        '    option commercial: "Commercial"',
        '    option commercial es_AR: "Comercial"',
        "",
    ]


def variable(index: int) -> list[str]:
    return [f"variable total_{index}: numeric = {index}"]


def rule(index: int, images: int, inputs: int) -> list[str]:
    photo = f"photo_{(index * 4) % images}"
    reading = f"reading_{index % inputs}"
    return [
        f"on validation failed plate of {photo}",
        '    set risk to "high"',
        "",
        f"on input set {reading}",
        f'    if inputs.{reading} > {500 * (index + 1)} and risk != "high"',
        f"        set total_{index} to total_{index} + inputs.{reading} / 1000",
        f"    else if inputs.{reading} < {index}",
        f"        set total_{index} to 0",
        "    else",
        "        # unremarkable",
        f"        set total_{index} to total_{index} - 1",
        "",
    ]


def check(index: int, images: int) -> list[str]:
    photo = f"photo_{index % images}"
    return [
        f"check photo_{index}_fine",
        f'    name: "Photo {index} is fine"',
        f'    description: "Photo {index} was uploaded, approved and not recaptured"',
        f"    valid when: images.{photo}.uploaded and images.{photo}.approved"
        f" and not (images.{photo}.recaptured.ran and not images.{photo}.recaptured.valid)",
        "",
    ]


def verdict(checks: int) -> list[str]:
    lines = ["verdict"]
    for index in range(checks):
        lines.append(
            f'    disapprove "Photo {index} is not acceptable" when not checks.photo_{index}_fine'
        )
    lines += [
        '    disapprove "Too much damage" when score < 60',
        "    approve when all(i in images where i.approved) and count(i in images where"
        " i.damage.valid) < 3",
        '    otherwise "Some photos were not approved"',
    ]
    return lines


def generate(target_lines: int = TARGET_LINES) -> str:
    """A valid car template of about `target_lines` lines."""
    images, inputs, selects, rules, checks = 40, 48, 20, 38, 58
    while True:
        lines = header()
        for index in range(rules):
            lines += variable(index)
        lines.append("")
        for index in range(images):
            lines += image(index)
        for index in range(inputs):
            lines += numeric_input(index)
        for index in range(selects):
            lines += select_input(index)
        lines += ["feature damage_declaration: on", ""]
        for index in range(rules):
            lines += rule(index, images, inputs)
        for index in range(checks):
            lines += check(index, images)
        lines += verdict(checks)
        if len(lines) >= target_lines:
            return "\n".join(lines) + "\n"
        rules += 5
        checks += 5


class CountingIndentation(insp_parser.Indentation):
    """The parser's own postlexer, counting the tokens it passes on (used once, untimed)."""

    count = 0

    def process(self, stream: Iterator[Token]) -> Iterator[Token]:
        for token in super().process(stream):
            CountingIndentation.count += 1
            yield token


def raw_parser(postlex: insp_parser.Indentation | None = None) -> Lark:
    """Lark's plain LALR parser of the same grammar: no callbacks, so it builds a Tree. Passed
    through Lark's own save and load, as every parser Lark's cache gives is (and ours is,
    `inspectlang.parser_cache`): a parser just built keys its parse table with the grammar's
    `Token`s, whose `__eq__` is Python code, and parses ~8% slower, which would flatter the
    ratio."""
    built = Lark.open_from_package(
        "inspectlang",
        "grammar.lark",
        parser="lalr",
        lexer="contextual",
        postlex=postlex or insp_parser.Indentation(),
        maybe_placeholders=True,
    )
    data = io.BytesIO()
    built.save(data)
    data.seek(0)
    return Lark.load(data)


def count_tokens(text: str) -> int:
    CountingIndentation.count = 0
    raw_parser(CountingIndentation()).parse(text)
    return CountingIndentation.count


def full_compile() -> tuple[str, Callable[[str], Any]]:
    if importlib.util.find_spec("inspectlang.compiler") is not None:
        from inspectlang.compiler import compile_source

        return "compile_source (parse + check + manifest)", lambda text: compile_source(
            text, "bench.insp"
        )
    return "parse only (inspectlang.compiler is missing)", lambda text: insp_parser.parse(
        text, "bench.insp"
    )


def timed(function: Callable[[], Any]) -> float:
    """CPU seconds of this process: steadier than wall time on a shared, busy machine."""
    start = time.process_time()
    function()
    return time.process_time() - start


COLD_CODE = """
import time, sys
start, cpu = time.perf_counter(), time.process_time()
from inspectlang.compiler import compile_source
imported, imported_cpu = time.perf_counter(), time.process_time()
source = open(sys.argv[1], encoding="utf-8").read()
compile_source(source, sys.argv[1])
end, end_cpu = time.perf_counter(), time.process_time()
print((end - start) * 1000, (end_cpu - cpu) * 1000, (imported_cpu - cpu) * 1000)
"""


@dataclass(frozen=True)
class ColdStart:
    """Medians over fresh processes (the interpreter's own start-up is not counted)."""

    template: str
    wall_ms: float  # import + first compile
    cpu_ms: float
    import_cpu_ms: float  # the import alone
    dependencies_ms: float  # a process importing only pydantic and Lark (`DEPENDENCIES_CODE`)
    ours_ms: float  # per round, the cold start less the dependencies' import just beside it


def cold_start() -> ColdStart:
    """Import + first compile in fresh processes, each beside one that imports only the
    dependencies: their difference, round by round, is what inspectlang's own code costs, a
    figure that does not move with the machine's speed as the absolute one does."""
    template = ROOT / "inspectlang" / "builtins" / "car_easy.insp"
    if not template.exists():  # before the built-ins exist: the example of syntax.md
        template = Path(tempfile.gettempdir()) / "inspectlang-syntax-example.insp"
        text = (ROOT / "docs" / "design" / "syntax.md").read_text(encoding="utf-8")
        template.write_text(text.split("```\n", 2)[1].split("```")[0], encoding="utf-8")
    code = COLD_CODE
    if importlib.util.find_spec("inspectlang.compiler") is None:
        code = code.replace(
            "from inspectlang.compiler import compile_source",
            "from inspectlang.parser import parse as compile_source",
        )
    command = [sys.executable, "-c", code, str(template)]
    dependencies = [sys.executable, "-c", DEPENDENCIES_CODE]
    # Bytecode caching on, as in any deployment (this environment sets PYTHONDONTWRITEBYTECODE,
    # which would make every fresh process recompile every module from source).
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    # The warm-up run writes the .pyc files and inspectlang's cache (the parser, the records'
    # initializers), as the first run of a deployment would.
    subprocess.run(command, check=True, capture_output=True, cwd=ROOT, env=env)
    runs: list[list[float]] = []
    floors: list[float] = []
    for _ in range(COLD_RUNS):
        done = subprocess.run(
            command, check=True, capture_output=True, text=True, cwd=ROOT, env=env
        )
        runs.append([float(part) for part in done.stdout.split()])
        floor = subprocess.run(
            dependencies, check=True, capture_output=True, text=True, cwd=ROOT, env=env
        )
        floors.append(float(floor.stdout))
    wall, cpu, import_cpu = (statistics.median(run[i] for run in runs) for i in range(3))
    ours = statistics.median(run[1] - floor for run, floor in zip(runs, floors, strict=True))
    return ColdStart(template.name, wall, cpu, import_cpu, statistics.median(floors), ours)


DEPENDENCIES_CODE = """
import time
cpu = time.process_time()
from pydantic import BaseModel, Field  # what the manifest models need (pydantic.fields too)
import lark
print((time.process_time() - cpu) * 1000)
"""


def interpreter_start_ms() -> float:
    """Median wall ms of a bare `python -c pass` (what the cold start figure leaves out)."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    times = []
    for _ in range(COLD_RUNS):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True, env=env)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


#: Code run before the package is imported, per variant: it puts a plain stand-in for one of our
#: modules in `sys.modules`, so the modules that import it get the plain tool instead.
VARIANTS: dict[str, str] = {
    "as_is": "",
    # A module of ours that replaces a plain tool for speed adds a variant here: setup code that
    # puts the plain tool in `sys.modules` under the module's name, so every importer gets it.
    # `inspectlang.records` (initializers written at first use and kept between processes) and
    # `inspectlang.collector` (the cyclic collector paused during a compile) and
    # `inspectlang.parser_cache`'s pickle of the built parser with its lexers compiled were
    # measured this way and removed (issue 38): plain `dataclass` cost 7.5% more instructions of
    # a cold start, Lark's own cache 2.7%, the pause about 2.5%, each under the 10% a person
    # could notice.
    # `inspectlang.parse_loop` runs the parse table in one function (issue 26) and lexes in one
    # generator (issue 33); the plain tool is Lark's own loop and lexer (`Lark.parse`):
    "lark_loop": """
import sys, types
stub = types.ModuleType("inspectlang.parse_loop")
class NotParsed(Exception):
    pass
class ParseLoop:
    def __init__(self, parser):
        self.parse = parser.parse
stub.NotParsed, stub.ParseLoop = NotParsed, ParseLoop
sys.modules["inspectlang.parse_loop"] = stub
""",
}

VARIANT_CODE = """
import time, sys
{setup}
cpu = time.process_time()
from inspectlang.compiler import compile_source
compile_source(open(sys.argv[1], encoding="utf-8").read(), sys.argv[1])
cold = time.process_time() - cpu
large = open(sys.argv[2], encoding="utf-8").read()
rounds = []
for _ in range(5):
    start = time.process_time()
    compile_source(large, "bench.insp")
    rounds.append(time.process_time() - start)
print(cold * 1000, min(rounds) * 1000)
"""


def variants_ms(text: str, runs: int = COLD_RUNS) -> dict[str, tuple[float, float]]:
    """Per variant, medians over fresh processes (interleaved, so a busy moment of the machine
    hits all of them alike): CPU ms of import + first compile of car_easy.insp, and CPU ms of the
    fastest of 5 compiles of the large template."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    template = ROOT / "inspectlang" / "builtins" / "car_easy.insp"
    with tempfile.TemporaryDirectory() as directory:
        large = Path(directory) / "bench.insp"
        large.write_text(text, encoding="utf-8")
        commands = {
            name: [
                sys.executable,
                "-c",
                VARIANT_CODE.format(setup=setup),
                str(template),
                str(large),
            ]
            for name, setup in VARIANTS.items()
        }
        results: dict[str, list[list[float]]] = {name: [] for name in VARIANTS}
        for command in commands.values():  # warm-up: .pyc files and the cache directory
            subprocess.run(command, check=True, capture_output=True, cwd=ROOT, env=env)
        for _ in range(runs):
            for name, command in commands.items():
                done = subprocess.run(
                    command, check=True, capture_output=True, text=True, cwd=ROOT, env=env
                )
                results[name].append([float(part) for part in done.stdout.split()])
    return {
        name: (statistics.median(run[0] for run in rows), statistics.median(run[1] for run in rows))
        for name, rows in results.items()
    }


def main() -> None:
    text = generate()
    line_count = text.count("\n")
    raw = raw_parser()
    label, compile_text = full_compile()
    insp_parser.parse(text)  # warm both: Lark compiles its lexer regexes on first use
    compile_text(text)
    raw.parse(text)
    tokens = count_tokens(text)

    raw_times: list[float] = []
    ours_times: list[float] = []
    parse_times: list[float] = []
    for _ in range(ROUNDS):
        raw_times.append(timed(lambda: raw.parse(text)))
        ours_times.append(timed(lambda: compile_text(text)))
        parse_times.append(timed(lambda: insp_parser.parse(text)))
    # The fastest of the interleaved rounds: the run least disturbed by other processes.
    raw_s, ours_s, parse_s = min(raw_times), min(ours_times), min(parse_times)
    startup = cold_start()
    bare_start = interpreter_start_ms()
    variants = variants_ms(text)
    base_cold, base_compile = variants["as_is"]
    ratios = {
        name: {
            "cold_start": round(cold / base_cold, 3),
            "compile": round(compiled / base_compile, 3),
        }
        for name, (cold, compiled) in variants.items()
        if name != "as_is"
    }

    print(f"template: {line_count} lines, {len(text)} bytes, {tokens} tokens")
    print(f"times: CPU time of this process, fastest of {ROUNDS} interleaved rounds")
    print(f"raw Lark LALR parse (Tree):  {raw_s * 1000:8.1f} ms")
    print(f"our parse (AST + comments):  {parse_s * 1000:8.1f} ms  ({parse_s / raw_s:.2f}x raw)")
    print(f"our full compile:            {ours_s * 1000:8.1f} ms  ({ours_s / raw_s:.2f}x raw)")
    print(f"  [{label}]")
    print(f"tokens per second (compile): {tokens / ours_s:10.0f}")
    print(
        f"cold start ({startup.template}), median of {COLD_RUNS} fresh processes: import + first "
        f"compile {startup.cpu_ms:.1f} ms CPU ({startup.import_cpu_ms:.1f} ms of it importing), "
        f"{startup.wall_ms:.1f} ms wall (the interpreter's own start-up excluded; bytecode caching "
        "on, warmed once)"
    )
    print(f"interpreter start-up alone (python -c pass), median wall: {bare_start:.1f} ms")
    print(
        f"importing pydantic and lark alone (part of the cold start), median: "
        f"{startup.dependencies_ms:.1f} ms CPU; the cold start less that, round by round: "
        f"{startup.ours_ms:.1f} ms"
    )
    print(f"custom machinery, median of {COLD_RUNS} fresh processes per variant (CPU ms):")
    for name, (cold, compiled) in variants.items():
        print(
            f"  {name:18} cold start {cold:6.1f}  large compile {compiled:6.1f}"
            + (
                f"  (x{ratios[name]['cold_start']:.3f}, x{ratios[name]['compile']:.3f} of as_is)"
                if name in ratios
                else ""
            )
        )
    print(
        json.dumps(
            {
                "compile_vs_parse": round(ours_s / raw_s, 3),
                "tokens_per_s": round(tokens / ours_s),
                "cold_start_ms": round(startup.cpu_ms, 1),
                "cold_start_wall_ms": round(startup.wall_ms, 1),
                "interpreter_start_ms": round(bare_start, 1),
                "dependencies_import_ms": round(startup.dependencies_ms, 1),
                "cold_start_ours_ms": round(startup.ours_ms, 1),
                "parse_vs_raw_parse": round(parse_s / raw_s, 3),
                "machinery_ratios": ratios,
            }
        )
    )


if __name__ == "__main__":
    main()
