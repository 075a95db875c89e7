"""What the parser, the checker and the runtime must agree on, defined once.

A template the checker accepts must load and run: two copies of a rule drift (the checker once
allowed expressions 64 levels deep and the runtime 40, so a template saved with 201 made every
create a 500). Every operator table and limit here is imported by the parser
(`inspectlang.tree_builder`), the checker (`inspectlang.checker`), the runtime's verifier,
value limits and evaluators (`runtime.verify`, `runtime.values`, `runtime.codegen`,
`runtime.reference`) and the server's schemas; nothing else defines them
(tests/runtime/test_runtime_vocabulary_agreement.py checks that they agree).
The inspection types, product and consumer fields, validation names and events live in
`inspectlang.manifest` (the public Template's vocabulary) and are re-exported here; each
validation's name, options and texts are one entry of `inspectlang.validations`.
"""

from __future__ import annotations

import re

from inspectlang.manifest import (
    CONSUMER_FIELDS,
    INPUT_TYPES,
    INSPECTION_TYPES,
    PRODUCT_FIELDS,
    RULE_EVENTS,
    VALIDATION_NAMES,
)
from inspectlang.patterns import MAX_PATTERN
from inspectlang.validations import NUMBER_OPTIONS

__all__ = [
    "ARITHMETIC_OPERATORS",
    "BINARY_OPERATORS",
    "CHAIN_OPERATORS",
    "CONSUMER_FIELDS",
    "EQUALITY_OPERATORS",
    "EQUALITY_TYPES",
    "FUNCTIONS",
    "INPUT_TYPES",
    "INPUT_VALUE_TYPES",
    "INSPECTION_TYPES",
    "MAX_CHECKS",
    "MAX_EXPRESSION_DEPTH",
    "MAX_IMAGES",
    "MAX_INCLUDED_FILES",
    "MAX_INPUTS",
    "MAX_LIST_ITEMS",
    "MAX_LITERAL_INTEGER_DIGITS",
    "MAX_NESTING",
    "MAX_NODES",
    "MAX_NUMBER",
    "MAX_OPTIONS",
    "MAX_PATTERN_LENGTH",
    "MAX_QUANTIFIER_DEPTH",
    "MAX_RULES",
    "MAX_SOURCE_BYTES",
    "MAX_TEXT_LENGTH",
    "MAX_VARIABLES",
    "NAME",
    "ORDER_OPERATORS",
    "PRESENT_FIELDS",
    "PRODUCT_FIELDS",
    "RECORD_FIELDS",
    "RULE_EVENTS",
    "SIGNATURES",
    "UNARY_OPERATORS",
    "VALIDATION_NAMES",
    "VALIDATION_NUMBER_OPTIONS",
    "accepts",
    "chain_depth",
]

# --- types -------------------------------------------------------------------------------------

NUMBER, TEXT, BOOLEAN, DATE = "number", "text", "boolean", "date"
IMAGE, VALIDATION, DAMAGE = "image", "validation", "damage"

# --- operators ---------------------------------------------------------------------------------

#: `+` adds two numbers or joins two texts; `-`, `*`, `/` take numbers.
ARITHMETIC_OPERATORS = ("+", "-", "*", "/")
#: Order comparisons: two numbers, dates or texts.
ORDER_OPERATORS = ("<", "<=", ">", ">=")
#: Equality: two values of one type (missing equals only missing).
EQUALITY_OPERATORS = ("=", "!=")
#: Every binary operator of the language (`and`/`or` are also `CHAIN_OPERATORS`).
BINARY_OPERATORS = (*ARITHMETIC_OPERATORS, *ORDER_OPERATORS, *EQUALITY_OPERATORS, "and", "or", "in")
#: The types `=` and `!=` compare, two values of one type: plain values, never records.
EQUALITY_TYPES = frozenset({NUMBER, TEXT, BOOLEAN, DATE, "list<number>", "list<text>"})
#: `not` takes a boolean, `-` a number.
UNARY_OPERATORS = ("not", "-")

# --- limits ------------------------------------------------------------------------------------

#: Deepest nesting of an expression or of `if` blocks (E004). Generated Python stays far below
#: the interpreter's own limits at this depth (measured: 62 nested `+` compile and run).
MAX_EXPRESSION_DEPTH = 64
#: Operators whose chains (`a or b or c`, however grouped) are one flat level of the language:
#: the checker emits them as a balanced tree, so a chain of N operands nests `chain_depth(N)`
#: levels, and the parser, the checker and the runtime's verifier all count it so.
CHAIN_OPERATORS = frozenset({"and", "or"})


def chain_depth(operands: int) -> int:
    """Levels of the balanced tree joining `operands` operands by one operator (ceil(log2))."""
    return max(operands - 1, 0).bit_length()


#: Deepest nesting of `count`/`any`/`all`/`sum` bodies (E004): each is a loop in generated code.
MAX_QUANTIFIER_DEPTH = 8
#: Most nodes in one template's logic (the checker's E037 limits keep real templates far below).
MAX_NODES = 50_000
#: Longest text a template may write or an expression may produce.
MAX_TEXT_LENGTH = 10_000
#: Most items in a list literal, or in a list an expression iterates.
MAX_LIST_ITEMS = 10_000
#: Largest magnitude of a number, written or computed (a larger result is missing).
MAX_NUMBER = 1e15
#: Most digits before the decimal point of a numeric literal that are converted: below both
#: Python's integer-digits limit (4,300) and a float's range (309 digits), so converting never
#: fails. A literal with more is read as infinite and refused as too large (E019), as any
#: literal over `MAX_NUMBER` is; the digits after the point may be as many as the author likes.
MAX_LITERAL_INTEGER_DIGITS = 300
#: Deepest nesting the parser reads (E004): parentheses, brackets, unary operators and operator
#: chains in one expression, and indented blocks. The same limit as the checker's and the
#: runtime's, so what parses is never refused later for its depth alone; deeper input is refused
#: before any later pass could hit Python's recursion limit.
MAX_NESTING = MAX_EXPRESSION_DEPTH
#: Largest template accepted (E005): a real template is a few kilobytes.
MAX_SOURCE_BYTES = 1_000_000
#: Most files one template includes, directly or through other included files (E037).
MAX_INCLUDED_FILES = 32
#: Most declarations of each kind in one template (E037): past them a template is refused,
#: never slow.
MAX_IMAGES = 100
MAX_INPUTS = 200
MAX_RULES = 1000
MAX_CHECKS = 500
MAX_VARIABLES = 500
#: Most options of one select or multiselect input (E037).
MAX_OPTIONS = 500
#: Longest regular expression given to `matches` or `pattern:` (RE2, `inspectlang.patterns`).
MAX_PATTERN_LENGTH = MAX_PATTERN
#: An inspection's `metadata` (the spec's Limits table): most key-value pairs, longest key,
#: longest value. Checked by `runtime.intake.check_metadata` (400 `invalid_metadata`) and
#: stated in the API document (`server/inspections/schemas.py`).
MAX_METADATA_PAIRS = 50
MAX_METADATA_KEY_LENGTH = 50
MAX_METADATA_VALUE_LENGTH = 500

#: Names of variables and bound items: a letter, then letters, digits or `_` (never a dunder).
NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,63}")

# --- records -----------------------------------------------------------------------------------

#: Fields of the record types; an image also has one field per validation name.
RECORD_FIELDS: dict[str, dict[str, str]] = {
    IMAGE: {
        "side": TEXT,
        # its `label` in the inspection's locale (the default label, else the image's name)
        "label": TEXT,
        "approved": BOOLEAN,
        "processed": BOOLEAN,
        "uploaded": BOOLEAN,
        "attempts": NUMBER,
        "uploaded_at": DATE,
        "validations": "list<validation>",
        "damages": "list<damage>",
        **dict.fromkeys(VALIDATION_NAMES, VALIDATION),
    },
    VALIDATION: {
        "name": TEXT,
        "valid": BOOLEAN,
        "confidence": NUMBER,
        "result": TEXT,
        "ran": BOOLEAN,
        "required": BOOLEAN,
    },
    DAMAGE: {
        "part": TEXT,
        "damage": TEXT,
        "severity": TEXT,
        "percentage": NUMBER,
        "declared": BOOLEAN,
    },
}

#: Record fields that always hold a value on an existing record (never missing).
PRESENT_FIELDS: frozenset[tuple[str, str]] = frozenset(
    {
        (IMAGE, "side"),
        (IMAGE, "label"),
        (IMAGE, "approved"),
        (IMAGE, "processed"),
        (IMAGE, "uploaded"),
        (IMAGE, "attempts"),
        (IMAGE, "validations"),
        (IMAGE, "damages"),
        (VALIDATION, "name"),
        (VALIDATION, "valid"),
        (VALIDATION, "confidence"),
        (VALIDATION, "ran"),
        (VALIDATION, "required"),
        (DAMAGE, "part"),
        (DAMAGE, "damage"),
        (DAMAGE, "severity"),
        (DAMAGE, "declared"),
    }
)

#: The type an input's value has in expressions, per input type.
INPUT_VALUE_TYPES: dict[str, str] = {
    "numeric": NUMBER,
    "text": TEXT,
    "textarea": TEXT,
    "select": TEXT,
    "multiselect": "list<text>",
    "date": DATE,
    "check": BOOLEAN,
    "file": TEXT,
    "video": TEXT,
}

#: Validation options that mean something for one validation only: option as written ->
#: (validation, the manifest's option key, smallest, largest). Each is its validation's entry's
#: (`inspectlang.validations`).
VALIDATION_NUMBER_OPTIONS: dict[str, tuple[str, str, float, float]] = {
    words: (entry.name, option.key, option.low, option.high)
    for words, (entry, option) in NUMBER_OPTIONS.items()
}

# --- functions ---------------------------------------------------------------------------------

#: Library functions: name -> (minimum arguments, maximum arguments or None for variadic). The
#: argument and result types are checked by `inspectlang.types` and `runtime.verify` from the
#: same names; the implementations are `runtime.values.FUNCTIONS`.
FUNCTIONS: dict[str, tuple[int, int | None]] = {
    "lower": (1, 1),
    "upper": (1, 1),
    "trim": (1, 1),
    "length": (1, 1),
    "contains": (2, 2),
    "starts_with": (2, 2),
    "ends_with": (2, 2),
    "matches": (2, 2),
    "round": (1, 2),
    "abs": (1, 1),
    "min": (1, None),
    "max": (1, None),
    "defined": (1, 1),
    "date": (1, 3),
    "today": (0, 0),
    "add_days": (2, 2),
    "days_between": (2, 2),
    "years_between": (2, 2),
    "text": (1, 1),
    "replace": (3, 3),
    "substring": (2, 3),
    "normalize": (1, 1),
    "extract": (2, 2),
    "number": (1, 1),
    "floor": (1, 1),
    "mod": (2, 2),
    # dates by parts and months (issue 25, construct 8); `date` also takes (year, month, day)
    "year": (1, 1),
    "month": (1, 1),
    "day": (1, 1),
    "add_months": (2, 2),
    "months_between": (2, 2),
    # lists (issue 25, construct 6); `filter` and `map` are quantifiers (`inspectlang.ir`)
    "join": (2, 2),
    "split": (2, 2),
}

#: Any value that is not a record: a number, text, boolean, date or a list of those.
PLAIN_VALUE = "value"

#: Argument types and result type of the functions with one signature, read by the checker
#: (`inspectlang.types`) and the runtime's verifier (`runtime.verify`) alike; an optional
#: trailing argument (see `FUNCTIONS`) has the type listed for its position.
SIGNATURES: dict[str, tuple[tuple[str, ...], str]] = {
    "text": ((PLAIN_VALUE,), TEXT),
    "replace": ((TEXT, TEXT, TEXT), TEXT),
    "substring": ((TEXT, NUMBER, NUMBER), TEXT),
    "normalize": ((TEXT,), TEXT),
    "extract": ((TEXT, TEXT), TEXT),
    "number": ((f"{TEXT}|{BOOLEAN}",), NUMBER),
    "floor": ((NUMBER,), NUMBER),
    "mod": ((NUMBER, NUMBER), NUMBER),
    "year": ((DATE,), NUMBER),
    "month": ((DATE,), NUMBER),
    "day": ((DATE,), NUMBER),
    "add_months": ((DATE, NUMBER), DATE),
    "months_between": ((DATE, DATE), NUMBER),
    "join": ((f"list<{TEXT}>|list<{NUMBER}>", TEXT), TEXT),
    "split": ((TEXT, TEXT), f"list<{TEXT}>"),
}


def accepts(wanted: str, actual: str) -> bool:
    """Whether an argument of type `actual` fits a parameter of type `wanted`."""
    if wanted == PLAIN_VALUE:
        return actual not in (IMAGE, VALIDATION, DAMAGE) and not (
            actual.startswith("list<") and actual[5:-1] in (IMAGE, VALIDATION, DAMAGE)
        )
    if "|" in wanted:  # one of several types: `text|boolean`
        return actual in wanted.split("|")
    return actual == wanted
