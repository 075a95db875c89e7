"""`input NAME` declarations: type, label and help per locale, the stages it is asked at, its
`ask when` (checked later, once every input is declared: `inspectlang.checker.ask`), options,
and the input type's own checks in the manifest's `validationSchema` keys."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from inspectlang import ast, identifiers
from inspectlang.checker.checked import CheckedInput
from inspectlang.checker.context import Run
from inspectlang.checker.declarations import first_declared
from inspectlang.checker.scope import InputRef, is_iso_date
from inspectlang.diagnostics import did_you_mean
from inspectlang.manifest import INPUT_TYPES
from inspectlang.patterns import pattern_problem
from inspectlang.property_values import first_given, norm, span_of, text, word
from inspectlang.vocabulary import MAX_INPUTS, MAX_OPTIONS


def declare_inputs(run: Run) -> None:
    """Every input (at most MAX_INPUTS): into the scope (with its option keys) and the template."""
    decls = run.declared(ast.InputDecl)
    if not run.reporter.limit(len(decls), MAX_INPUTS, "inputs", run.last_span(decls)):
        return
    for decl in decls:
        if decl.name in run.scope.inputs:
            run.reporter.report(
                "E012",
                f"input `{decl.name}` is declared twice",
                span_of(decl),
                notes=(first_declared(decls, decl),),
            )
            continue
        checked = read_input(run, decl)
        if checked is not None:
            options = dict(
                zip(checked.option_keys or [], checked.option_labels or [], strict=False)
            )
            run.scope.inputs[decl.name] = InputRef(checked.identifier, checked.input_type, options)
            run.template.inputs.append(checked)


#: Bytes per size unit in `maximum size` (binary multiples: 1 MB = 1,048,576 bytes).
BYTES = {"b": 1, "byte": 1, "bytes": 1, "kb": 1024, "mb": 1024**2, "gb": 1024**3}

#: Properties every input may have.
COMMON_INPUT_PROPERTIES = (
    "type",
    "label",
    "help",
    "asked at",
    "ask when",
    "for image",
    "id",
)
#: Properties (and flags) each input type adds, with the `validationSchema` key each fills.
TYPE_PROPERTIES: dict[str, dict[str, str]] = {
    "text": {
        "minimum length": "minLength",
        "maximum length": "maxLength",
        "pattern": "pattern",
        "email": "email",
    },
    "numeric": {"minimum": "minimum", "maximum": "maximum", "whole number": "integer"},
    "date": {
        "earliest": "minDate",
        "latest": "maxDate",
        "not before": "notBefore",
        "not after": "notAfter",
    },
    "select": {},
    "multiselect": {"minimum choices": "minItems", "maximum choices": "maxItems"},
    "check": {},
    "file": {"accepts": "mediaTypes", "maximum size": "maxSizeBytes"},
}
TYPE_PROPERTIES["textarea"] = TYPE_PROPERTIES["text"]
TYPE_PROPERTIES["video"] = TYPE_PROPERTIES["file"]
#: Flags (properties without a value) of inputs.
INPUT_FLAGS = ("required", "optional", "whole number", "email")
#: Every key an input may write; the checker uses it for "unknown property" (E010).
INPUT_PROPERTIES: tuple[str, ...] = COMMON_INPUT_PROPERTIES + tuple(
    dict.fromkeys(k for table in TYPE_PROPERTIES.values() for k in table if k not in INPUT_FLAGS)
)
#: (lower bound key, upper bound key, what) pairs that must be ordered (E032).
BOUNDS = (
    ("minLength", "maxLength", "`minimum length` is above `maximum length`"),
    ("minimum", "maximum", "`minimum` is above `maximum`"),
    ("minDate", "maxDate", "`earliest` is after `latest`"),
    ("minItems", "maxItems", "`minimum choices` is above `maximum choices`"),
)


def date_value(value: ast.PropertyValue) -> str | None:
    """`date("2020-01-01")` or `"2020-01-01"` as an ISO date, else None."""
    if isinstance(value, ast.Call) and value.function == "date" and len(value.arguments) == 1:
        value = value.arguments[0]
    result = text(value)
    return result if result is not None and is_iso_date(result) else None


def order_name(value: ast.PropertyValue) -> str | None:
    """The input a `not before:` / `not after:` names: `promised` or `inputs.promised`."""
    if (
        isinstance(value, ast.Attribute)
        and isinstance(value.value, ast.Name)
        and value.value.name == "inputs"
    ):
        return value.name
    return word(value)


def allowed_note(input_type: str) -> str:
    own = list(TYPE_PROPERTIES[input_type])
    if not own:
        return f"a {input_type} input has no properties of its own"
    return f"a {input_type} input takes: " + ", ".join(f"`{key}`" for key in own)


def read_input_checks(
    run: Run,
    input_type: str,
    props: Mapping[str, ast.Property],
    flags: Iterable[ast.Flag],
    where: str,
) -> dict[str, Any]:
    """The input type's own checks from its properties and flags (`validationSchema` keys)."""
    report, properties = run.reporter.report, run.properties
    allowed = TYPE_PROPERTIES[input_type]
    checks: dict[str, Any] = {}
    spans: dict[str, ast.Span] = {}
    for flag in flags:
        words = norm(flag.words)
        if words in ("required", "optional"):
            continue
        if words not in INPUT_FLAGS:
            report(
                "E010",
                f"unknown flag `{flag.words}` in {where}",
                flag.span,
                did_you_mean(words, INPUT_FLAGS),
            )
        elif words not in allowed:
            report(
                "E017",
                f"`{words}` is not allowed for a {input_type} input",
                flag.span,
                notes=(allowed_note(input_type),),
            )
        else:
            checks[allowed[words]] = True
    for key, prop in props.items():
        if key in COMMON_INPUT_PROPERTIES or prop.locale is not None:
            continue
        target = allowed.get(key)
        if target is None:
            report(
                "E017",
                f"`{key}` is not allowed for a {input_type} input",
                span_of(prop),
                notes=(allowed_note(input_type),),
            )
            continue
        value: Any = None
        if target in ("minLength", "maxLength", "minItems", "maxItems"):
            value = properties.number_value(prop, 0, 1_000_000, integer=True)
        elif target in ("minimum", "maximum"):
            value = properties.number_value(prop, -1e15, 1e15)
        elif target == "pattern":
            value = properties.text_value(prop)
            problem = pattern_problem(value) if value is not None else None
            if problem is not None:
                report("E029", problem, prop.values[0].span)
                value = None
        elif target in ("minDate", "maxDate"):
            single = properties.single(prop, "date")
            value = date_value(single) if single is not None else None
            if single is not None and value is None:
                report("E019", f'`{key}` takes a date: `date("2024-01-31")`', single.span)
        elif target in ("notBefore", "notAfter"):
            # Other inputs' names with their spans, resolved to identifiers once every input
            # is declared (`inspectlang.checker.date_order`).
            named = [(order_name(v), v.span) for v in prop.values]
            for item, (name, _span) in zip(prop.values, named, strict=True):
                if name is None:
                    report("E019", f"`{key}` takes the name of a date input", item.span)
            value = None if any(name is None for name, _span in named) else named
        elif target == "mediaTypes":
            types = [text(v) for v in prop.values]
            bad = [v for v, t in zip(prop.values, types, strict=True) if not t or "/" not in t]
            for item in bad:
                report("E019", 'a media type is a text such as "image/jpeg"', item.span)
            value = None if bad else types
        elif target == "maxSizeBytes":
            single = properties.single(prop, "size")
            unit = single.unit.lower() if isinstance(single, ast.Quantity) else ""
            if isinstance(single, ast.Quantity) and unit in BYTES and single.amount > 0:
                value = int(single.amount * BYTES[unit])
            elif single is not None:
                report(
                    "E019",
                    "`maximum size` takes a size such as `5 MB`",
                    single.span,
                    did_you_mean(unit, BYTES) if unit else None,
                )
        if value is not None:
            checks[target] = value
            spans[target] = span_of(prop)
    for low, high, message in BOUNDS:
        if low in checks and high in checks and checks[low] > checks[high]:
            shown = f"{message}: {_shown(checks[low])} > {_shown(checks[high])}"
            report("E032", shown, spans[high])
    return checks


def _shown(value: Any) -> str:
    """A bound as the author wrote it: `5`, not `5.0`; dates as `2020-01-01`."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


#: The type of an input whose `type:` is missing and cannot be guessed: its uses in
#: expressions are not checked further (the missing `type:` is the one error).
UNKNOWN_TYPE = "unknown"


def guess_type(
    props: Mapping[str, ast.Property], flags: Iterable[ast.Flag], options: list[ast.Option]
) -> str | None:
    """The one input type every written type-specific property and flag fits, if any."""
    specific = {key for table in TYPE_PROPERTIES.values() for key in table}
    written = {key for key in props if key in specific}
    written |= {norm(f.words) for f in flags} & specific
    if options:
        written.add("option")
    if not written:
        return None
    fitting = [
        name
        for name in ("numeric", "text", "date", "select", "multiselect", "file")
        if written <= {*TYPE_PROPERTIES[name], *(["option"] if "select" in name else [])}
    ]
    return fitting[0] if len(fitting) == 1 or fitting[:2] == ["select", "multiselect"] else None


def read_input(run: Run, decl: ast.InputDecl) -> CheckedInput | None:
    report, properties = run.reporter.report, run.properties
    where = f"input `{decl.name}`"
    flags = [i for i in decl.items if isinstance(i, ast.Flag)]
    options = [i for i in decl.items if isinstance(i, ast.Option)]
    props = properties.properties(
        tuple(i for i in decl.items if not isinstance(i, (ast.Flag, ast.Option))),
        INPUT_PROPERTIES,
        where,
        translatable=("label", "help"),
    )
    type_prop = props.get("type")
    input_type = "text"
    type_known = True
    if type_prop is None:
        # One error, not one per property the missing type would refuse (a trap authors met):
        # the properties suggest the type when they fit only one, else they are not checked.
        guess = guess_type(props, flags, options)
        report(
            "E011",
            f"{where} needs `type:`",
            span_of(decl),
            suggestion=None if guess is None else f"type: {guess}",
            notes=("types: " + ", ".join(INPUT_TYPES),),
        )
        input_type, type_known = guess or UNKNOWN_TYPE, guess is not None
    else:
        value = properties.single(type_prop, "input type")
        name = word(value) if value is not None else None
        if value is not None and name not in INPUT_TYPES:
            report(
                "E019",
                f"unknown input type `{name or ''}`",
                value.span,
                did_you_mean(name or "", INPUT_TYPES),
            )
            return None
        input_type = name or "text"
    identifier = properties.identifier(
        props.get("id"),
        identifiers.INPUT_IDENTIFIER,
        "`input_<uuid>`",
        identifiers.input_identifier(run.template.template_id, decl.name),
        span_of(decl),
    )
    default = properties.locales[0]
    label = first_given(
        properties.text_value(props.get("label")),
        properties.text_value(props.get(f"label {default}")),
        default=decl.name,
    )
    help_text = properties.text_value(props.get("help"))
    help_text = (
        help_text if help_text is not None else properties.text_value(props.get(f"help {default}"))
    )
    translations: dict[str, dict[str, Any]] = {}
    for key, prop in props.items():
        if prop.locale is not None and prop.locale != default:
            value_text = properties.text_value(prop)
            if value_text is not None:
                field_name = "label" if key.startswith("label") else "helperMessage"
                translations.setdefault(prop.locale, {})[field_name] = value_text
    stages = ["create"]
    asked = props.get("asked at")
    if asked is not None:
        stages = []
        for value in asked.values:
            stage = word(value)
            if stage not in ("create", "update"):
                report(
                    "E019",
                    "`asked at` lists `create` and/or `update`",
                    value.span,
                    did_you_mean(stage or "", ("create", "update")),
                )
            elif stage in stages:
                report("E012", f"stage `{stage}` is listed twice", value.span)
            else:
                stages.append(stage)
    image: str | None = None
    image_prop = props.get("for image")
    if image_prop is not None:
        value = properties.single(image_prop, "image name")
        image_name = word(value) if value is not None else None
        if value is not None and image_name not in run.scope.images:
            report(
                "E020",
                f"unknown image `{image_name or ''}`",
                value.span,
                did_you_mean(image_name or "", run.scope.images),
            )
        elif image_name is not None:
            image = run.scope.images[image_name].identifier
    required = False
    for flag in flags:
        words = norm(flag.words)
        if words in ("required", "optional"):
            required = words == "required"
    checks: dict[str, Any] = {}
    option_keys: list[str] | None = None
    option_labels: list[str] | None = None
    if type_known:
        checks = read_input_checks(run, input_type, props, flags, where)
        option_keys, option_labels = input_options(
            run, input_type, options, translations, decl, checks
        )
    if required and "create" in stages and run.template.template_kind == "built-in":
        report(
            "E031",
            f"{where} is required at create, but a built-in template is "
            "used by alias and nobody sends its inputs",
            span_of(decl),
        )
    ask_when: ast.Expr | None = None
    ask_prop = props.get("ask when")
    if ask_prop is not None:
        value = properties.single(ask_prop, "condition")
        if isinstance(value, ast.Quantity | ast.Size):
            report("E019", "`ask when` takes a condition", value.span)
        elif value is not None:
            ask_when = value
    return CheckedInput(
        decl.name,
        identifier,
        input_type,
        label,
        help_text,
        stages,
        required,
        checks,
        option_keys,
        option_labels,
        translations,
        image,
        ask_when_source=ask_when,
    )


def input_options(
    run: Run,
    input_type: str,
    options: list[ast.Option],
    translations: dict[str, dict[str, Any]],
    decl: ast.InputDecl,
    checks: dict[str, Any],
) -> tuple[list[str] | None, list[str] | None]:
    report, properties = run.reporter.report, run.properties
    choice = input_type in ("select", "multiselect")
    if not choice:
        if options:
            report("E018", f"a {input_type} input has no options", options[0].span)
        return None, None
    if not run.reporter.limit(len(options), MAX_OPTIONS, "options", decl.span):
        return None, None
    keys: list[str] = []
    labels: list[str] = []
    translated: dict[str, dict[str, str]] = {}
    for option in options:
        if option.locale is None or option.locale == properties.locales[0]:
            if option.key in keys:
                report("E012", f"option `{option.key}` is given twice", option.span)
                continue
            keys.append(option.key)
            labels.append(option.label)
        elif properties.check_locale(option.locale, option):
            translated.setdefault(option.locale, {})[option.key] = option.label
    if not keys:
        report(
            "E018", f'a {input_type} input needs at least one `option KEY: "Label"`', span_of(decl)
        )
    for locale, by_key in translated.items():
        for key, option in ((k, o) for o in options for k in [o.key] if o.locale == locale):
            if key not in keys:
                report(
                    "E020",
                    f"option `{key}` is not declared in the default locale",
                    option.span,
                    did_you_mean(key, keys),
                )
        translations.setdefault(locale, {})["options"] = [
            by_key.get(k, labels[i]) for i, k in enumerate(keys)
        ]
    most = checks.get("minItems")
    if most is not None and keys and most > len(keys):
        report(
            "E032",
            f"`minimum choices` is {most} but there are only {len(keys)} options",
            span_of(decl),
        )
    return keys, labels
