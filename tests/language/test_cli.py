"""The language commands on real files: check, compile, decompile, fmt; exit codes and output."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from inspectlang.cli import main

GOOD = (
    'template "Good"\n    type: car\n\nvariable s: numeric = 1\n\non finish\n    set s to s + 1\n\n'
    'verdict\n    disapprove "Low" when s < 1\n'
)
BAD = 'template "Bad"\n    type: car\nverdict\n    approve when scor > 1\n    otherwise "x"\n'
UGLY = 'template "Ugly"\n    type: car\nverdict\n    disapprove "Low" when 1>2\n'


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_check_passes_a_good_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "good.insp", GOOD)
    assert main(["check", str(path)]) == 0
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "1 file(s) checked: 0 error(s), 0 warning(s)" in captured.err


def test_check_renders_every_diagnostic_with_caret_and_code(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = write(tmp_path, "bad.insp", BAD)
    good = write(tmp_path, "good.insp", GOOD)
    assert main(["check", str(good), str(bad)]) == 1
    out = capsys.readouterr().out
    assert f"{bad}:4:18: error[E020]: unknown name `scor`" in out
    assert "   4 |     approve when scor > 1\n" in out
    assert "\n" + " " * 24 + "^^^^\n" in out


def test_check_json_lists_diagnostic_dicts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = write(tmp_path, "bad.insp", BAD)
    assert main(["check", "--format", "json", str(bad)]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data == [
        {
            "code": "E020",
            "severity": "error",
            "message": "unknown name `scor`",
            "file": str(bad),
            "line": 4,
            "column": 18,
            "endLine": 4,
            "endColumn": 22,
        }
    ]


def test_check_warnings_alone_exit_zero(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(
        tmp_path, "warn.insp", 'template "W"\n    type: car\nvariable unused: text = ""\nverdict\n'
    )
    assert main(["check", str(path)]) == 0
    assert "warning[W002]" in capsys.readouterr().out


def test_check_a_missing_file_exits_two(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(tmp_path / "nope.insp")]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_compile_prints_the_manifest(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "good.insp", GOOD)
    assert main(["compile", str(path)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["name"] == "Good"
    assert data["inspectionType"] == "car"
    assert data["logic"]["verdict"]["disapprove"][0]["reason"] == "Low"


def test_compile_errors_as_json_and_as_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, "bad.insp", BAD)
    assert main(["compile", "--format", "json", str(path)]) == 1
    assert [d["code"] for d in json.loads(capsys.readouterr().out)] == ["E020"]
    assert main(["compile", str(path)]) == 1
    assert "error[E020]" in capsys.readouterr().out


def test_decompile_a_compiled_manifest(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "good.insp", GOOD)
    assert main(["compile", str(path)]) == 0
    manifest = write(tmp_path, "good.json", capsys.readouterr().out)
    assert main(["decompile", str(manifest)]) == 0
    text = capsys.readouterr().out
    assert text.startswith('template "Good"\n    type: car\n')
    assert 'disapprove "Low" when s < 1' in text


def test_decompile_refuses_what_is_not_a_manifest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for content in ("[1, 2]", "{not json", '{"name": "x"}'):
        path = write(tmp_path, "x.json", content)
        assert main(["decompile", str(path)]) == 1
        assert "is not a template manifest" in capsys.readouterr().err


def test_fmt_check_lists_files_that_would_change_and_changes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ugly = write(tmp_path, "ugly.insp", UGLY)
    good = write(tmp_path, "good.insp", GOOD)
    assert main(["fmt", "--check", str(ugly), str(good)]) == 1
    assert capsys.readouterr().out == f"{ugly}\n"
    assert ugly.read_text(encoding="utf-8") == UGLY


def test_fmt_rewrites_in_place(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ugly = write(tmp_path, "ugly.insp", UGLY)
    assert main(["fmt", str(ugly)]) == 0
    assert 'disapprove "Low" when 1 > 2' in ugly.read_text(encoding="utf-8")
    assert main(["fmt", "--check", str(ugly)]) == 0
    capsys.readouterr()


def test_fmt_reports_syntax_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    broken = write(
        tmp_path, "broken.insp", 'template "B"\n    type: car\nverdict\n    approve when = 1\n'
    )
    assert main(["fmt", str(broken)]) == 1
    assert "error[E001]" in capsys.readouterr().out


def test_the_installed_command_runs_in_a_fresh_process(tmp_path: Path) -> None:
    bad = write(tmp_path, "bad.insp", BAD)
    result = subprocess.run(
        [sys.executable, "-m", "inspectlang.cli", "check", "--format", "json", str(bad)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 1
    assert json.loads(result.stdout)[0]["code"] == "E020"


def test_check_and_fmt_take_directories(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    nested = tmp_path / "templates" / "cars"
    nested.mkdir(parents=True)
    write(nested, "bad.insp", BAD)
    write(tmp_path / "templates", "good.insp", GOOD)
    write(tmp_path / "templates", "notes.txt", "not a template")
    assert main(["check", str(tmp_path / "templates")]) == 1
    captured = capsys.readouterr()
    assert "2 file(s) checked: 1 error(s), 0 warning(s)" in captured.err
    assert main(["fmt", "--check", str(tmp_path / "templates")]) == 1
    assert capsys.readouterr().out == f"{nested / 'bad.insp'}\n"


def test_fmt_refuses_a_number_too_long_to_write_as_check_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A 309-digit `minimum:` is E019 for `check`; `fmt` reports the same code at the same
    place and leaves the file alone (it crashed with `ValueError: inf cannot be written`)."""
    text = (
        'template "Huge"\n    type: car\n\ninput km\n    type: numeric\n'
        f"    minimum: 1{'0' * 309}\n\nverdict\n    approve when inputs.km > 1\n"
    )
    path = tmp_path / "huge.insp"
    path.write_text(text, encoding="utf-8")
    assert main(["check", str(path)]) == 1
    checked = capsys.readouterr().out
    assert main(["fmt", str(path)]) == 1
    formatted = capsys.readouterr()
    assert f"{path}:6:14: error[E019]" in checked
    assert f"{path}:6:14: error[E019]" in formatted.out + formatted.err
    assert "Traceback" not in formatted.err
    assert path.read_text(encoding="utf-8") == text


def test_the_language_command_names_no_other_package(capsys: pytest.CaptureFixture[str]) -> None:
    """`inspectlang.cli` knows the language's commands only; the program with the runtime's and
    the server's commands is composed at the top layer (`server.main`), where import-linter
    sees every package it names."""
    from inspectlang import cli
    from server import main as program

    assert set(cli.LANGUAGE_COMMANDS) == {"check", "compile", "decompile", "fmt", "lsp"}
    assert set(program.COMMANDS) == set(cli.LANGUAGE_COMMANDS) | {
        "simulate",
        "verify",  # the proofs replay through the runtime's simulation (runtime.proofs)
        "test",
        "diff",
        "serve",
        "worker",
        "admin",
        "outbox",
    }
    source = Path(cli.__file__).read_text(encoding="utf-8")
    assert "server.cli" not in source and "runtime.cli" not in source  # named by no string
    with pytest.raises(SystemExit):
        cli.main(["simulate", "x.insp", "events.json"])
    assert "invalid choice: 'simulate'" in capsys.readouterr().err


SHARED = "input km\n    type: numeric\nlet worn = inputs.km > 250000\n"
INCLUDING = (
    'include "shared"\ntemplate "Including"\n    type: car\nverdict\n'
    '    disapprove "Worn" when worn\n'
)


def test_check_and_compile_resolve_includes_next_to_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(tmp_path, "shared.insp", SHARED)
    path = write(tmp_path, "including.insp", INCLUDING)
    assert main(["check", str(path)]) == 0
    # A directory: the shared file is checked through the template that includes it.
    assert main(["check", str(tmp_path)]) == 0
    assert "0 error(s)" in capsys.readouterr().err
    assert main(["compile", str(path)]) == 0
    manifest = json.loads(capsys.readouterr().out)
    assert [i["label"] for i in manifest["inputs"]] == ["km"]
    assert "include" not in json.dumps(manifest["logic"])


def test_a_problem_in_an_included_file_is_shown_in_that_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shared = write(tmp_path, "shared.insp", SHARED.replace("inputs.km >", "inputs.kms >"))
    path = write(tmp_path, "including.insp", INCLUDING)
    assert main(["check", str(path)]) == 1
    out = capsys.readouterr().out
    assert f"{shared}:3:" in out and "let worn = inputs.kms > 250000" in out
    assert main(["compile", str(path)]) == 1
    assert f"{shared}:3:" in capsys.readouterr().out
    write(tmp_path, "including.insp", INCLUDING.replace('"shared"', '"sharde"'))
    assert main(["check", str(path)]) == 1
    assert "did you mean `shared`?" in capsys.readouterr().out


def test_checking_a_shared_file_checks_it_through_a_template_that_includes_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shared = write(tmp_path, "shared.insp", SHARED.replace("inputs.km >", "inputs.kms >"))
    assert main(["check", str(shared)]) == 0  # alone: only what it may hold is checked
    capsys.readouterr()
    write(tmp_path, "including.insp", INCLUDING)
    assert main(["check", str(shared)]) == 1  # its names, in the template that includes it
    out = capsys.readouterr().out
    assert f"{shared}:3:" in out and "E011" not in out
    write(tmp_path, "shared.insp", SHARED + "verdict\n")
    assert main(["check", str(shared)]) == 1  # a verdict makes it a (broken) template
    assert "E011" in capsys.readouterr().out
