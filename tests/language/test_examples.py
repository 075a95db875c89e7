"""The example templates of `examples/`: each compiles to a valid manifest, compiling is
reproducible, and together they use every construct of the language (so they double as the
language's showcase and as a regression suite for the parser and the checker)."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator
from pathlib import Path

import jsonschema
import pytest

from inspectlang import ast
from inspectlang.compiler import check_source, compile_source
from inspectlang.diagnostics import CODES
from inspectlang.formatter import format_source
from inspectlang.includes import DirectoryResolver
from inspectlang.manifest import INPUT_TYPES, RULE_EVENTS, Template
from inspectlang.parser import parse

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
EXAMPLE_FILES = sorted(EXAMPLES.glob("*.insp"))
#: A template and the shared file it includes (`include "vehicle-common"`): a folder of their
#: own, since the shared file is no template (the tests that compile every example skip it).
FLEET = EXAMPLES / "fleet"

#: The examples the documentation promises, with their inspection types.
PROMISED = {
    "motor_insurance.insp": "car",
    "used_phone_resale.insp": "cellphone",
    "person_onboarding.insp": "people",
    "goods_delivery.insp": "goods",
    "machinery_rental.insp": "machinery",
}

#: The library functions of docs/design/syntax.md.
LIBRARY_FUNCTIONS = {
    "lower",
    "upper",
    "trim",
    "length",
    "contains",
    "starts_with",
    "ends_with",
    "matches",
    "round",
    "abs",
    "min",
    "max",
    "defined",
    "date",
    "today",
    "add_days",
    "days_between",
    "years_between",
    # the IMEI's Luhn digit in used_phone_resale.insp
    "number",
    "substring",
    "floor",
    "mod",
}
QUANTIFIERS = {"count", "any", "all", "sum"}
BINARY_OPERATORS = {"or", "and", "=", "!=", "<", "<=", ">", ">=", "in", "+", "-", "*", "/"}
SETTINGS = {
    "max attempts",
    "link expires after",
    "inspection expires after",
    "minimum confidence",
    "photo age limit",
    "photo distance limit",
    "minimum photo size",
}
MODIFIERS = {"required", "optional", "not run", "minimum confidence", "within", "minimum size"}


def compile_file(path: Path) -> Template:
    return compile_source(path.read_text(encoding="utf-8"), path.name, template_kind="created")


def parse_file(path: Path) -> ast.Module:
    return parse(path.read_text(encoding="utf-8"), path.name)


def walk(node: object) -> Iterator[object]:
    """Every AST node under `node` (itself included), depth first."""
    yield node
    if dataclasses.is_dataclass(node) and not isinstance(node, type):
        for field in dataclasses.fields(node):
            yield from walk(getattr(node, field.name))
    elif isinstance(node, tuple):
        for item in node:
            yield from walk(item)


def all_nodes() -> list[object]:
    files = [*EXAMPLE_FILES, *sorted(FLEET.glob("*.insp"))]
    return [node for path in files for node in walk(parse_file(path))]


def test_the_fleet_example_compiles_with_its_shared_file_inlined() -> None:
    path = FLEET / "fleet_check.insp"
    source = path.read_text(encoding="utf-8")
    resolver = DirectoryResolver(FLEET)
    assert check_source(source, str(path), includes=resolver) == []
    template = compile_source(source, str(path), includes=resolver)
    assert [i.label for i in template.inputs] == ["Kilometres on the odometer"]
    assert [c.key for c in template.logic.checks] == ["plausible_mileage"]
    assert [let.name for let in template.logic.lets] == ["thousands", "high_mileage"]
    # The manifest points included things at the `include` line of the saved file.
    assert {tuple(c.span) for c in template.logic.checks} == {(5, 1, 5, 25)}
    # Without the shared file the names it defines are unknown: it is not silently skipped.
    codes = [d.code for d in check_source(source, str(path), includes={})]
    assert codes == ["E043"]


def test_the_promised_examples_exist() -> None:
    assert {path.name for path in EXAMPLE_FILES} >= set(PROMISED)


@pytest.mark.parametrize("path", EXAMPLE_FILES, ids=lambda p: p.name)
def test_example_compiles_to_a_valid_manifest(path: Path) -> None:
    template = compile_file(path)
    assert template.type == "created"
    if path.name in PROMISED:
        assert template.inspectionType == PROMISED[path.name]
    jsonschema.Draft3Validator.check_schema(template.schema_)
    assert Template.from_api(template.to_api()) == template
    assert template.images and template.logic.verdict.span is not None


@pytest.mark.parametrize("path", EXAMPLE_FILES, ids=lambda p: p.name)
def test_recompiling_yields_identical_identifiers(path: Path) -> None:
    first, second = compile_file(path), compile_file(path)
    assert first.id == second.id
    assert first.logic.revision == second.logic.revision
    assert first.to_api(with_logic=True) | {"createdAt": "", "updatedAt": ""} == (
        second.to_api(with_logic=True) | {"createdAt": "", "updatedAt": ""}
    )
    identifiers = [i.identifier for i in first.images] + [i.identifier for i in first.inputs]
    assert len(set(identifiers)) == len(identifiers)
    assert all(re.fullmatch(r"image_[0-9a-f-]{36}", i.identifier) for i in first.images)
    assert all(re.fullmatch(r"input_[0-9a-f-]{36}", i.identifier) for i in first.inputs)


def test_examples_use_every_ast_node_class() -> None:
    used = {type(node) for node in all_nodes()}
    node_classes = {
        cls
        for cls in vars(ast).values()
        if isinstance(cls, type)
        and dataclasses.is_dataclass(cls)
        and cls.__module__ == ast.__name__
        and cls is not ast.Span
    }
    assert node_classes - used == set()


def test_examples_use_every_input_type() -> None:
    used = set()
    for node in all_nodes():
        if isinstance(node, ast.InputDecl):
            for item in node.items:
                if isinstance(item, ast.Property) and item.key == "type":
                    value = item.values[0]
                    assert isinstance(value, ast.Name)
                    used.add(value.name)
    assert used == set(INPUT_TYPES)


def test_goods_delivery_uses_every_input_type_alone() -> None:
    template = compile_file(EXAMPLES / "goods_delivery.insp")
    assert {i.type for i in template.inputs} == set(INPUT_TYPES)


def test_examples_use_every_rule_event() -> None:
    used = {
        node.event.event.replace(" ", "_") for node in all_nodes() if isinstance(node, ast.RuleDecl)
    }
    assert used == set(RULE_EVENTS)
    narrowed = [
        node
        for node in all_nodes()
        if isinstance(node, ast.EventSpec) and node.target is not None and node.of_image is not None
    ]
    assert narrowed, "no `validation ... NAME of IMAGE` rule"


def test_examples_use_every_quantifier_and_function() -> None:
    nodes = all_nodes()
    quantifiers = {n.kind for n in nodes if isinstance(n, ast.Quantifier)}
    quantifiers |= {n.function for n in nodes if isinstance(n, ast.Call)} & QUANTIFIERS
    assert quantifiers == QUANTIFIERS
    # Both forms of count: over a plain list and with a condition.
    assert any(isinstance(n, ast.Quantifier) and n.kind == "count" and n.variable for n in nodes)
    assert any(
        (isinstance(n, ast.Quantifier) and n.kind == "count" and n.variable is None)
        or (isinstance(n, ast.Call) and n.function == "count")
        for n in nodes
    )
    functions = {n.function for n in nodes if isinstance(n, ast.Call)} - QUANTIFIERS
    assert functions == LIBRARY_FUNCTIONS


def test_examples_use_every_operator_literal_and_setting() -> None:
    nodes = all_nodes()
    assert {n.operator for n in nodes if isinstance(n, ast.Binary)} == BINARY_OPERATORS
    assert {n.operator for n in nodes if isinstance(n, ast.Unary)} == {"not", "-"}
    literals = [n.value for n in nodes if isinstance(n, ast.Literal)]
    assert True in literals and False in literals
    assert any(isinstance(v, float) for v in literals)
    assert any(isinstance(v, str) and '"' in v for v in literals)  # the \" escape
    assert {n.unit for n in nodes if isinstance(n, ast.Quantity)} >= {
        "hours",
        "days",
        "meters",
        "MB",
    }
    settings = {
        item.key
        for node in nodes
        if isinstance(node, ast.SettingsDecl)
        for item in node.items
        if isinstance(item, ast.Property)
    }
    assert settings == SETTINGS
    modifiers = {m.words for n in nodes if isinstance(n, ast.Validate) for m in n.modifiers}
    assert modifiers >= MODIFIERS
    locales = {n.locale for n in nodes if isinstance(n, ast.Property | ast.Option) and n.locale}
    assert locales == {"es_AR", "pt_BR"}
    features = {n.name for n in nodes if isinstance(n, ast.FeatureDecl) and not n.active}
    assert features, "no feature switched off"
    statements = [n for n in nodes if isinstance(n, ast.IfStatement)]
    assert any(s.is_else_if for s in statements)
    assert any(s.otherwise and not isinstance(s.otherwise[0], ast.IfStatement) for s in statements)


@pytest.mark.parametrize(
    "path",
    [*EXAMPLE_FILES, *sorted((ROOT / "inspectlang" / "builtins").glob("*.insp"))],
    ids=lambda p: p.name,
)
def test_templates_are_in_the_canonical_layout(path: Path) -> None:
    """`inspectlang fmt --check` passes on the shipped templates: they are the style guide."""
    source = path.read_text(encoding="utf-8")
    assert format_source(source, path.name) == source


def test_language_reference_documents_every_diagnostic_code() -> None:
    reference = (ROOT / "docs" / "language.md").read_text(encoding="utf-8")
    missing = [code for code in CODES if f"| `{code}` |" not in reference]
    assert missing == []


_BASE = """template "Bike"
    type: bike
{header}
{declarations}
image left
    label: "Left side"
    validate recaptured
{image}
verdict
    approve when all(i in images where i.approved)
{verdict}"""


def _bike(declarations: str = "", header: str = "", image: str = "", verdict: str = "") -> str:
    return _BASE.format(declarations=declarations, header=header, image=image, verdict=verdict)


_SCORE = "variable score: numeric = 1\non finish\n    set score to "

#: For each code, a template that triggers it: the examples of the reference's table
#: (docs/language.md, "Diagnostics"), made whole.
TRIGGERS: dict[str, str] = {
    "E001": _bike(_SCORE + "score +\n"),
    "E002": _bike("settings\n\tmax attempts: 3\n"),
    "E003": _bike('image right\n    label: "Right side\n'),
    "E004": _bike(_SCORE + "(" * 70 + "1" + ")" * 70 + "\n"),
    "E005": "# " + "x" * 1_000_001 + "\n",
    "E010": _bike(image='    colour: "red"\n'),
    "E011": "image left\n    validate recaptured\n\nverdict\n    approve when true\n",
    "E012": _bike('image left\n    label: "Again"\n    validate recaptured\n'),
    "E013": _bike('image other\n    side: "left"\n    validate recaptured\n'),
    "E014": _bike(
        "".join(
            f'image {name}\n    id: "image_1b4e28ba-2fa1-41d2-883f-0016d3cca427"\n'
            "    validate date\n\n"
            for name in ("a", "b")
        )
    ),
    "E015": _bike(header='    id: "12345"\n'),
    "E016": _bike().replace("type: bike", "type: truck"),
    "E017": _bike("input note\n    type: text\n    whole number\n"),
    "E018": _bike('input size\n    type: select\n    label: "Size"\n'),
    "E019": _bike('settings\n    max attempts: "three"\n'),
    "E020": _bike(_SCORE + "scor + 1\n"),
    "E021": _bike('check colour\n    valid when: bike.colour = "red"\n'),
    "E022": _bike('check lowered\n    valid when: lowercase(bike.make) = "trek"\n'),
    "E023": _bike(_SCORE + 'score + "points"\n'),
    "E024": _bike('variable score: numeric = "high"\n'),
    "E025": _bike("on finish\n    set inputs to 0\n"),
    "E026": _bike(image="    validate licence_plate\n"),
    "E027": _bike("feature teleport: on\n"),
    "E028": _bike(image='    label fr_FR: "Côté gauche"\n'),
    "E029": _bike('input code\n    type: text\n    pattern: "[0-9"\n'),
    "E030": _bike(_SCORE + "score / 0\n"),
    "E031": _bike("input reference\n    type: text\n    asked at: create\n    required\n"),
    "E032": _bike("input weight\n    type: numeric\n    minimum: 10\n    maximum: 5\n"),
    "E033": _bike("check a\n    valid when: checks.b\n\ncheck b\n    valid when: checks.a\n"),
    "E034": 'template "Bike"\n    type: bike\n\nimage left\n    validate recaptured\n',
    "E035": _bike(
        "variable score: numeric = 1\non validation failed plate of left\n    set score to 0\n"
    ),
    "E036": _bike(_SCORE + "damage.percentage\n"),
    "E037": _bike("".join(f"image i{n}\n    validate date\n" for n in range(101))),
    "E038": _bike('variable __init__: text = ""\n'),
    "E040": _bike(
        'input size\n    type: select\n    option small: "Small"\n'
        'check is_small\n    valid when: inputs.size = "Small"\n'
    ),
    "E041": _bike(
        "input a\n    type: text\n    ask when: defined(inputs.b)\n"
        "input b\n    type: text\n    ask when: defined(inputs.a)\n"
    ),
    "E042": _bike(
        "input use\n    type: text\n    asked at: update\n"
        "input company\n    type: text\n    asked at: create\n    ask when: defined(inputs.use)\n"
    ),
    "E043": 'include "vehicle-comon"\n' + _bike(),
    "E044": 'include "a"\n' + _bike(),
    "E045": 'include "vehicle-common"\n' + _bike("input odometer\n    type: numeric\n"),
    "E046": _bike() + 'include "vehicle-common"\n',
    "E047": 'include "with-image"\n' + _bike(),
    "W001": _bike("check always\n    valid when: true\n"),
    "W002": _bike("variable unused: numeric = 0\n"),
    "W003": _bike(verdict='    disapprove "Never" when false\n'),
    "W004": 'template "Bike"\n    type: bike\n\nverdict\n',
    "W005": _bike("input km\n    type: numeric\ncheck near\n    valid when: 100 / inputs.km > 2\n"),
    "W006": _bike("let unused = 1\n"),
    "W007": _bike(
        header="    locales: en_US, es_AR\n",
        verdict='    disapprove "{count(images)} photos" when false or count(images) > 3\n'
        '        reason es_AR: "Demasiadas fotos"\n',
    ),
    "E048": _bike(
        'input size\n    type: select\n    option small: "Small"\n    required\n'
        "check sized\n    valid when: number(inputs.size) > 1\n"
    ),
    "E049": _bike('image Left\n    label: "Left, closer"\n    validate recaptured\n'),
    "E050": _bike("input km\n    type: numeric\n\ninput sold\n    type: date\n    not after: km\n"),
    "E051": _bike("input sold\n    type: date\n    not before: sold\n"),
    "W008": _bike(
        "input km\n    type: numeric\n    maximum: 500000\n"
        "check far\n    valid when: inputs.km > 600000\n"
    ),
    "W009": _bike(image="    optional\n"),
    "W010": _bike("settings\n    minimum confidence: 0.8\n"),
    "W011": _bike(image="    validate date, minimum confidence 95, review below confidence 90\n"),
    "W012": _bike(
        "check adult\n    valid when: years_between(today(), consumer.birthdate) >= 18\n"
    ),
    "W013": 'template "Bike"\n    type: bike\n\nimage left\n    validate recaptured\n\n'
    'verdict\n    disapprove "Too many" when count(images) > 3\n    otherwise "No"\n',
    "W014": _bike("let i = 1\ncheck few\n    valid when: count(images) > i\n"),
    "W015": _bike(
        header="    locales: en_US, es_AR, pt_BR\n",
        verdict='    disapprove "Many" when count(images) > 3\n        reason es_AR: "Muchas"\n',
    ),
    "W016": _bike(
        "input km\n    type: numeric\n", verdict='    disapprove "Far" when inputs.km > 100\n'
    ),
    "W017": _bike(
        "check seen\n    valid when: images.left.recaptured.valid\n\n"
        "check shown\n    valid when: images.left.recaptured.ran\n",
        verdict='    disapprove "Not seen" when not checks.seen\n',
    ),
    "W018": _bike(
        "input promised\n    type: date\n\ninput delivered\n    type: date\n\n"
        "check on_time\n    valid when: days_between(inputs.delivered, inputs.promised) <= 2\n",
        verdict='    disapprove "Late" when not checks.on_time\n',
    ),
    "W019": _bike(
        "check seen\n    valid when: images.left.recaptured.valid\n    for information\n",
        verdict='    disapprove "Not seen" when not checks.seen\n',
    ),
}

#: The files the triggers' `include` lines name (E043-E047).
TRIGGER_INCLUDES = {
    "vehicle-common": "input odometer\n    type: numeric\n",
    "a": 'include "b"\n',
    "b": 'include "a"\n',
    "with-image": 'image other\n    label: "Other"\n',
}


def test_every_diagnostic_code_has_a_trigger() -> None:
    # E039 is the server's refusal of what the checker accepted: no template is known to cause it.
    assert set(TRIGGERS) == set(CODES) - {"E039"}


@pytest.mark.parametrize("code", sorted(TRIGGERS))
def test_the_documented_example_triggers_its_code(code: str) -> None:
    kind = "built-in" if code == "E031" else "created"
    found = check_source(TRIGGERS[code], "bike.insp", template_kind=kind, includes=TRIGGER_INCLUDES)
    assert code in [d.code for d in found]
    expected = "warning" if code.startswith("W") else "error"
    assert {d.severity for d in found if d.code == code} == {expected}


def test_the_base_of_the_triggers_is_clean() -> None:
    """Each trigger's code comes from its own change, not from the template around it."""
    assert check_source(_bike(), "bike.insp") == []


# ---------------------------------------------------------------------------------------------
# The tutorial shows real compiler output.
# ---------------------------------------------------------------------------------------------

TUTORIAL = ROOT / "docs" / "tutorial.md"


def tutorial_blocks() -> list[str]:
    """The fenced code blocks of docs/tutorial.md, in order."""
    return re.findall(r"```[a-z]*\n(.*?)```", TUTORIAL.read_text(encoding="utf-8"), re.DOTALL)


def test_the_tutorial_template_compiles() -> None:
    source = tutorial_blocks()[0]
    template = compile_source(source, "trade_in.insp")
    assert template.name == "Bike trade-in"
    assert check_source(source, "trade_in.insp") == []
    assert f'"_id": "{template.id}"' in TUTORIAL.read_text(encoding="utf-8")
    assert template.inputs[0].identifier in TUTORIAL.read_text(encoding="utf-8")


def test_the_tutorial_shows_the_real_diagnostics() -> None:
    blocks = tutorial_blocks()
    source = blocks[0]
    broken_rule = blocks[2]
    original_rule = source[source.index("on input set condition") : source.index("verdict")]
    broken = source.replace(original_rule.rstrip("\n") + "\n", broken_rule)
    assert broken != source
    found = check_source(broken, "trade_in.insp")
    rendered = "\n\n".join(d.render(broken) for d in found)
    shown = blocks[3]
    assert shown.startswith("$ inspectlang check trade_in.insp\n")
    assert rendered in shown
    assert [d.code for d in found] == ["E020", "E023"]


def test_the_reference_shows_a_real_diagnostic() -> None:
    source = (EXAMPLES / "motor_insurance.insp").read_text(encoding="utf-8")
    broken = source.replace("round(inputs.mileage / 1000)", "round(inputs.milage / 1000)")
    assert broken != source
    (diagnostic,) = check_source(broken, "motor_insurance.insp")
    reference = (ROOT / "docs" / "language.md").read_text(encoding="utf-8")
    assert diagnostic.render(broken) in reference
