"""`include "NAME"` (issue 25): the parser and formatter keep it, the compiler inlines the
included file through the caller's resolver with every diagnostic in its own file, the manifest
is self-contained (the decompiler writes it back inlined), and the resolvers of the command
line and the API. The codes' vectors are tests/conformance/language/includes.json; evaluation on
both paths is tests/conformance/templates/includes.json."""

from __future__ import annotations

from pathlib import Path

import pytest

from inspectlang import ast
from inspectlang.compiler import check_source, compile_module, compile_source
from inspectlang.decompiler import decompile
from inspectlang.diagnostics import TemplateError
from inspectlang.formatter import format_source
from inspectlang.includes import (
    INCLUDE_LINES,
    DirectoryResolver,
    MappingResolver,
    check_shared_file,
)
from inspectlang.parser import parse
from inspectlang.vocabulary import MAX_INCLUDED_FILES

COMMON = (
    'input km\n    type: numeric\n    label: "Kilometres"\n'
    "let worn = inputs.km > 250000\n"
    "check plausible\n    valid when: inputs.km < 2000000\n"
)
TEMPLATE = (
    'include "common"  # the fleet\'s shared inputs\n'
    'template "T"\n    type: people\n'
    'verdict\n    disapprove "Worn" when worn\n    disapprove "Odd" when not checks.plausible\n'
)


def codes(source: str, files: dict[str, str]) -> list[tuple[str, str, int]]:
    return [
        (d.code, d.filename, d.span.line) for d in check_source(source, "t.insp", includes=files)
    ]


def test_the_parser_reads_an_include_with_its_spans_and_comment() -> None:
    module = parse(TEMPLATE)
    include = module.declarations[0]
    assert include == ast.IncludeDecl("common", trailing_comment="# the fleet's shared inputs")
    assert isinstance(include, ast.IncludeDecl)
    assert include.span.as_tuple() == (1, 1, 1, 17)
    assert include.name_span.as_tuple() == (1, 9, 1, 17)


def test_include_is_a_keyword_only_where_a_declaration_starts() -> None:
    source = 'template "T"\n    type: people\ninput include\n    type: text\n    required\n'
    source += "verdict\n"
    source += '    disapprove "x" when inputs.include = "a"\n'
    assert check_source(source) == []


def test_the_formatter_keeps_include_lines_together_at_the_top() -> None:
    messy = 'include   "a"\ninclude "b b"   # why\ntemplate "T"\n    type: people\n'
    assert format_source(messy) == (
        'include "a"\ninclude "b b"  # why\n\ntemplate "T"\n    type: people\n'
    )
    assert format_source(format_source(messy)) == format_source(messy)


def test_an_included_file_is_the_same_as_writing_it_in_the_template() -> None:
    included = compile_source(TEMPLATE, "t.insp", includes={"common": COMMON})
    inline = compile_source(
        'template "T"\n    type: people\n' + COMMON + TEMPLATE.split("people\n", 1)[1], "t.insp"
    )
    assert included.id == inline.id
    assert [i.model_dump() for i in included.inputs] == [i.model_dump() for i in inline.inputs]
    assert [(c.id, c.valid["op"]) for c in included.logic.checks] == [
        (c.id, c.valid["op"]) for c in inline.logic.checks
    ]
    assert included.logic.inputs.keys() == inline.logic.inputs.keys()


def test_the_manifest_points_included_spans_at_the_include_line() -> None:
    manifest = compile_source(TEMPLATE, "t.insp", includes={"common": COMMON})
    include_line = [1, 1, 1, 17]
    assert manifest.logic.lets[0].span == include_line
    assert manifest.logic.checks[0].span == include_line
    assert manifest.logic.lets[0].value["span"] == include_line  # every IR node too
    assert all(span[0] < INCLUDE_LINES for span in _spans(manifest.to_api()["logic"])), (
        "no encoded line leaks into the manifest"
    )
    # The template's own nodes keep their lines.
    assert manifest.logic.verdict.disapprove[0].span[0] == 5


def _spans(data: object) -> list[list[int]]:
    found: list[list[int]] = []
    if isinstance(data, dict):
        for key, value in data.items():
            if key == "span" and isinstance(value, list):
                found.append(value)
            else:
                found.extend(_spans(value))
    elif isinstance(data, list):
        for item in data:
            found.extend(_spans(item))
    return found


def test_the_decompiler_writes_the_included_declarations_inline() -> None:
    manifest = compile_source(TEMPLATE, "t.insp", includes={"common": COMMON})
    text = decompile(manifest.to_api())
    assert "include" not in text
    assert "input km" in text and "let worn" in text and "check plausible" in text
    again = compile_source(text, "t.insp")
    assert [c.id for c in again.logic.checks] == [c.id for c in manifest.logic.checks]
    assert [i.identifier for i in again.inputs] == [i.identifier for i in manifest.inputs]


def test_compiling_without_a_resolver_refuses_the_include_and_hides_what_it_would_define() -> None:
    assert codes(TEMPLATE, {}) == [("E043", "t.insp", 1)]
    with pytest.raises(TemplateError) as raised:
        compile_source(TEMPLATE, "t.insp")
    assert [d.code for d in raised.value.diagnostics] == ["E043"]
    assert "resolver" in raised.value.diagnostics[0].message


def test_a_module_with_an_unresolved_include_is_refused_by_the_checker() -> None:
    with pytest.raises(TemplateError) as raised:
        compile_module(parse(TEMPLATE))
    assert "E043" in [d.code for d in raised.value.diagnostics]


def test_a_file_reached_twice_is_read_once_and_a_repeated_line_is_e012() -> None:
    diamond = {"a": 'include "c"\n', "b": 'include "c"\n', "c": "let x = true\n"}
    source = 'include "a"\ninclude "b"\ntemplate "T"\n    type: people\nverdict\n'
    source += '    disapprove "x" when x\n'
    assert check_source(source, "t.insp", includes=diamond) == []
    twice = source.replace('include "b"', 'include "a"')
    assert codes(twice, diamond) == [("E012", "t.insp", 2)]


def test_too_many_included_files_is_e037() -> None:
    files = {f"f{n}": f'include "f{n + 1}"\n' for n in range(MAX_INCLUDED_FILES + 1)}
    files[f"f{MAX_INCLUDED_FILES + 1}"] = ""
    source = 'include "f0"\ntemplate "T"\n    type: people\nverdict\n'
    assert ("E037", f"f{MAX_INCLUDED_FILES - 1}", 1) in codes(source, files)


def test_the_line_an_included_file_duplicates_is_named_in_its_own_lines() -> None:
    files = {"a": "input km\n    type: numeric\ninput km\n    type: numeric\n"}
    source = 'include "a"\ntemplate "T"\n    type: people\nverdict\n'
    [duplicate] = [d for d in check_source(source, "t.insp", includes=files) if d.code == "E012"]
    assert (duplicate.filename, duplicate.span.line) == ("a", 3)
    assert duplicate.notes == ("first declared at line 1 of a",)


def test_an_included_file_with_windows_line_endings_and_a_byte_order_mark() -> None:
    files = {"common": "\ufeff" + COMMON.replace("\n", "\r\n")}
    assert check_source(TEMPLATE, "t.insp", includes=files) == []


def test_a_syntax_error_in_an_included_file_is_reported_there_alone() -> None:
    files = {"common": COMMON + "let broken = (\n"}
    assert codes(TEMPLATE, files) == [("E001", "common", 7)]


def test_an_error_renders_the_included_files_line() -> None:
    files = {"common": COMMON.replace("inputs.km > 250000", "inputs.kms > 250000")}
    with pytest.raises(TemplateError) as raised:
        compile_source(TEMPLATE, "t.insp", includes=files)
    rendered = raised.value.render()
    assert "common:4:" in rendered and "let worn = inputs.kms > 250000" in rendered


def test_the_directory_resolver_reads_insp_files_of_one_folder(tmp_path: Path) -> None:
    (tmp_path / "common.insp").write_text(COMMON, encoding="utf-8")
    (tmp_path / "other.insp").write_text("", encoding="utf-8")
    resolver = DirectoryResolver(tmp_path)
    assert resolver.source("common") == COMMON
    assert resolver.source("common.insp") is None  # a name has no extension
    assert resolver.source("../common") is None
    assert resolver.source("missing") is None
    assert sorted(resolver.names()) == ["common", "other"]
    found = check_source(TEMPLATE.replace('"common"', '"comon"'), "t.insp", includes=resolver)
    assert [(d.code, d.suggestion) for d in found] == [("E043", "common")]
    assert compile_source(TEMPLATE, str(tmp_path / "t.insp"), includes=resolver).inputs


def test_a_mapping_and_a_resolver_are_the_same_to_the_api() -> None:
    by_mapping = compile_source(TEMPLATE, "t.insp", includes={"common": COMMON})
    by_resolver = compile_source(TEMPLATE, "t.insp", includes=MappingResolver({"common": COMMON}))
    assert by_mapping.logic.revision == by_resolver.logic.revision


def test_a_shared_file_on_its_own() -> None:
    assert check_shared_file(COMMON, "common") == []
    assert [d.code for d in check_shared_file("verdict\n    approve when 1 = 1\n", "v")] == ["E047"]
    assert [d.code for d in check_shared_file("let a = 1\n", "../up")] == ["E043"]
    assert [d.code for d in check_shared_file('let a = 1\ninclude "b"\n', "v")] == ["E046"]


def test_a_divisor_in_an_included_file_is_warned_there() -> None:
    """The template divides by no input, the included file does: W005 in the included file
    (the checker's walk runs on the expanded module, `ast.Module.divides`)."""
    common = "input km\n    type: numeric\nlet per_km = 100 / inputs.km\n"
    template = (
        'include "common"\ntemplate "T"\n    type: people\n'
        'verdict\n    disapprove "Far" when per_km > 2 and 10 / 5 > 1\n'
    )
    assert codes(template, {"common": common}) == [("W005", "common", 3)]
    assert not parse(template).divides
    assert parse(common).divides
