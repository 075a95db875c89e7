"""The language's commands: `inspectlang check`, `compile`, `decompile` and `fmt`.

Each prints what a person (or, with `--format json`, a program) needs and returns an exit code:
0 when all is well, 1 when a template has errors (or `fmt --check` would change a file), 2 when
a file cannot be read. `--format json` prints diagnostics as the list of `Diagnostic.to_dict()`
that the server's 422 response also carries.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

from inspectlang.diagnostics import Diagnostic, TemplateError
from inspectlang.includes import DirectoryResolver


def register(subparsers: Any) -> None:
    """Add the language's subcommands to the `inspectlang` parser (see `inspectlang.cli`)."""
    check = subparsers.add_parser("check", help="report every problem of .insp files")
    check.add_argument(
        "files", nargs="+", metavar="FILE", help="templates or directories ('-' reads stdin)"
    )
    check.add_argument("--format", choices=("text", "json"), default="text")
    _kind_option(check)
    check.set_defaults(handler=run_check)

    compile_ = subparsers.add_parser("compile", help="print the manifest JSON of a template")
    compile_.add_argument("file", metavar="FILE", help="a template ('-' reads stdin)")
    compile_.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="how to print diagnostics when the template has errors",
    )
    _kind_option(compile_)
    compile_.set_defaults(handler=run_compile)

    decompile = subparsers.add_parser("decompile", help="turn a manifest JSON into .insp text")
    decompile.add_argument("file", metavar="MANIFEST", help="a manifest JSON file ('-': stdin)")
    decompile.set_defaults(handler=run_decompile)

    fmt = subparsers.add_parser("fmt", help="rewrite .insp files in the canonical layout")
    fmt.add_argument("files", nargs="+", metavar="FILE")
    fmt.add_argument(
        "--check",
        action="store_true",
        help="change nothing; exit 1 and list the files that would change",
    )
    fmt.set_defaults(handler=run_fmt)


def _kind_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--kind",
        choices=("created", "built-in"),
        default="created",
        help="check as a custom (created) or a built-in template",
    )


def _bytes(name: str) -> bytes | None:
    """The bytes of a file (`-`: standard input), or None after saying why it cannot be read."""
    try:
        return sys.stdin.buffer.read() if name == "-" else Path(name).read_bytes()
    except OSError as error:
        print(f"error: cannot read {name}: {error}", file=sys.stderr)
        return None


def _read(name: str) -> str | None:
    """The text of a file, or None after saying why it cannot be read (a byte that is not
    UTF-8 reads as U+FFFD: `_read_template` says where it is)."""
    data = _bytes(name)
    return None if data is None else data.decode("utf-8", errors="replace")


def _read_template(name: str, filename: str) -> tuple[str, Diagnostic | None] | None:
    """A template's text and, when it is not UTF-8, the E001 that says at which line and
    column (issue 33: such a file was `cannot read` with a byte offset); None when it cannot
    be read at all."""
    from inspectlang.parser import decode_source

    data = _bytes(name)
    return None if data is None else decode_source(data, filename)


def _expand(names: list[str]) -> list[str]:
    """Files as given; a directory stands for every `.insp` file under it, in sorted order."""
    files: list[str] = []
    for name in names:
        path = Path(name)
        if name != "-" and path.is_dir():
            files.extend(str(p) for p in sorted(path.rglob("*.insp")))
        else:
            files.append(name)
    return files


def _print_diagnostics(diagnostics: list[Diagnostic], sources: dict[str, str]) -> None:
    for diagnostic in diagnostics:
        if diagnostic.filename not in sources and Path(diagnostic.filename).is_file():
            # an included file's problem: its line is shown from the file
            sources[diagnostic.filename] = _read(diagnostic.filename) or ""
        print(diagnostic.render(sources.get(diagnostic.filename)), end="\n\n")


def _resolver(name: str) -> DirectoryResolver:
    """Included files are `.insp` files in the including file's folder (stdin: the current)."""
    return DirectoryResolver(Path.cwd() if name == "-" else Path(name).parent)


_INCLUDE_LINE = re.compile(r'^include[ \t]+"([^"\n]*)"', re.MULTILINE)


def _included_by_others(sources: dict[str, str]) -> set[str]:
    """The files of a run that another file of the run includes (shared files are checked as
    part of the templates that include them, not as templates of their own)."""
    included: set[str] = set()
    for name, source in sources.items():
        folder = Path(name).parent
        for match in _INCLUDE_LINE.finditer(source):
            included.add(str(DirectoryResolver(folder).path(match.group(1))))
    return included


def run_check(args: argparse.Namespace) -> int:
    from inspectlang.compiler import check_file, check_source

    found: list[Diagnostic] = []
    sources: dict[str, str] = {}
    unreadable = False
    names: dict[str, str] = {}
    not_utf8: set[str] = set()
    for name in _expand(args.files):
        filename = "<stdin>" if name == "-" else name
        read = _read_template(name, filename)
        if read is None:
            unreadable = True
            continue
        sources[filename], encoding = read
        names[filename] = name
        if encoding is not None:
            found.append(encoding)
            not_utf8.add(filename)
    shared = _included_by_others(sources)
    for filename, source in sources.items():
        if filename in shared or filename in not_utf8:
            continue
        if filename == "<stdin>":
            resolver = _resolver("-")
            found.extend(check_source(source, filename, template_kind=args.kind, includes=resolver))
        else:
            found.extend(check_file(source, filename, template_kind=args.kind))
    errors = sum(1 for d in found if d.severity == "error")
    if args.format == "json":
        print(json.dumps([d.to_dict() for d in found], indent=2, ensure_ascii=False))
    else:
        _print_diagnostics(found, dict(sources))
        warnings = len(found) - errors
        print(
            f"{len(sources)} file(s) checked: {errors} error(s), {warnings} warning(s)",
            file=sys.stderr,
        )
    if unreadable:
        return 2
    return 1 if errors else 0


def run_compile(args: argparse.Namespace) -> int:
    from inspectlang.compiler import compile_source

    filename = "<stdin>" if args.file == "-" else args.file
    read = _read_template(args.file, filename)
    if read is None:
        return 2
    source, encoding = read
    try:
        if encoding is not None:
            raise TemplateError([encoding], source)
        template = compile_source(
            source, filename, template_kind=args.kind, includes=_resolver(args.file)
        )
    except TemplateError as error:
        if args.format == "json":
            print(json.dumps(error.to_list(), indent=2, ensure_ascii=False))
        else:
            _print_diagnostics(error.diagnostics, {filename: source})
        return 1
    print(json.dumps(template.to_api(), indent=2, ensure_ascii=False))
    return 0


def run_decompile(args: argparse.Namespace) -> int:
    from pydantic import ValidationError

    from inspectlang.decompiler import decompile

    text = _read(args.file)
    if text is None:
        return 2
    try:
        data = json.loads(text)
        if not isinstance(data, dict):
            raise ValueError("the manifest must be a JSON object")
        print(decompile(data), end="")
    except (ValueError, ValidationError) as error:
        print(f"error: {args.file} is not a template manifest: {error}", file=sys.stderr)
        return 1
    return 0


def run_fmt(args: argparse.Namespace) -> int:
    from inspectlang.formatter import format_source

    status = 0
    for name in _expand(args.files):
        read = _read_template(name, name)
        if read is None:
            status = 2
            continue
        source, encoding = read
        try:
            if encoding is not None:
                raise TemplateError([encoding], source)
            formatted = format_source(source, name)
        except TemplateError as error:
            _print_diagnostics(error.diagnostics, {name: source})
            status = max(status, 1)
            continue
        if formatted == source:
            continue
        if args.check:
            print(name)
            status = max(status, 1)
        else:
            Path(name).write_text(formatted, encoding="utf-8")
            print(f"formatted {name}", file=sys.stderr)
    return status
