"""Time of `inspectlang verify` on every built-in and example against the compile of the same
template in the same run.

For each template: its compile (`compile_source` + `load_program`, the baseline), and the
verification (`runtime.proofs.properties.verify`: the formula, every solver question and every
replay through simulate), each the fastest of `ROUNDS` rounds of process CPU time; plus z3's own
import, once, in a fresh process (paid once per `verify` command, never by check or compile).
Target (issue 33): verify of each built-in and example within 2 s on this machine. The last
line printed is ONE JSON object: `{"max_verify_s", "z3_import_s", "templates": {name:
{"verify_s", "compile_s", "verify_vs_compile", "properties", "hold"}}}`.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from inspectlang.compiler import compile_source
from inspectlang.includes import DirectoryResolver
from runtime.program import build_program
from runtime.proofs.properties import verify

ROOT = Path(__file__).resolve().parents[1]
ROUNDS = 2


def templates() -> list[Path]:
    return [
        *sorted((ROOT / "inspectlang" / "builtins").glob("*.insp")),
        *sorted((ROOT / "examples").glob("*.insp")),
        ROOT / "examples" / "fleet" / "fleet_check.insp",
    ]


def fastest(work: object, rounds: int = ROUNDS) -> tuple[float, object]:
    best, result = float("inf"), None
    for _ in range(rounds):
        start = time.process_time()
        result = work()  # type: ignore[operator]
        best = min(best, time.process_time() - start)
    return best, result


def z3_import_seconds() -> float:
    probe = "import time; s = time.perf_counter(); import z3; print(time.perf_counter() - s)"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return float(done.stdout.strip())


def main() -> None:
    figures: dict[str, dict[str, object]] = {}
    for path in templates():
        source = path.read_text(encoding="utf-8")

        def compiled(path: Path = path, source: str = source) -> object:
            manifest = compile_source(source, str(path), includes=DirectoryResolver(path.parent))
            return build_program(manifest)

        compile_s, program = fastest(compiled)
        verify_s, results = fastest(lambda program=program: verify(program))
        answers = [r.answer for r in results]  # type: ignore[attr-defined]
        name = path.relative_to(ROOT).as_posix()
        figures[name] = {
            "verify_s": round(verify_s, 3),
            "compile_s": round(compile_s, 3),
            "verify_vs_compile": round(verify_s / compile_s, 1),
            "properties": len(answers),
            "hold": answers.count("holds"),
            "fail": answers.count("fails"),
            "unknown": answers.count("unknown"),
        }
        print(
            f"{name:48} verify {verify_s:6.2f} s  compile {compile_s:5.3f} s  "
            f"{answers.count('holds')}/{len(answers)} hold",
            flush=True,
        )
    worst = max(float(f["verify_s"]) for f in figures.values())  # type: ignore[arg-type]
    print(
        json.dumps(
            {
                "max_verify_s": round(worst, 3),
                "z3_import_s": round(z3_import_seconds(), 3),
                "templates": figures,
            }
        )
    )


if __name__ == "__main__":
    main()
