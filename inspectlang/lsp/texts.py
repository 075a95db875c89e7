"""What the editor says on hover: functions, validations, features and properties, in the words
of docs/language.md (tests/lsp/test_texts.py checks that every name of the vocabulary has one)."""

from __future__ import annotations

from inspectlang import validations

#: Library functions: signature and meaning.
FUNCTIONS: dict[str, tuple[str, str]] = {
    "lower": ("lower(t: text) -> text", "Lower case."),
    "upper": ("upper(t: text) -> text", "Upper case."),
    "trim": ("trim(t: text) -> text", "Without leading and trailing spaces."),
    "length": ("length(x: text | list) -> number", "Characters of a text, or items of a list."),
    "contains": (
        "contains(a: text | list, b) -> boolean",
        "`b` occurs in `a` (a text in a text, or an item in a list).",
    ),
    "starts_with": ("starts_with(t: text, prefix: text) -> boolean", "`t` begins with `prefix`."),
    "ends_with": ("ends_with(t: text, suffix: text) -> boolean", "`t` ends with `suffix`."),
    "matches": (
        "matches(t: text, pattern: text) -> boolean",
        "Regular expression search with RE2 (anywhere in `t`; anchor with `^...$`), linear in "
        "the text: no lookaround, no backreferences; a pattern of at most 200 characters.",
    ),
    "round": (
        "round(n: number[, digits: number]) -> number",
        "Rounded half to even, to `digits` decimals (0 when omitted, -20 to 20).",
    ),
    "abs": ("abs(n: number) -> number", "Absolute value."),
    "min": (
        "min(a, b, ...) -> number",
        "The smallest number; over a list, missing items are skipped.",
    ),
    "max": (
        "max(a, b, ...) -> number",
        "The largest number; over a list, missing items are skipped.",
    ),
    "defined": ("defined(x) -> boolean", "`x` is not missing."),
    "date": (
        "date(t: text) -> date | date(year: number, month: number, day: number) -> date",
        "Parses `YYYY-MM-DD`, or makes the date of a year, month and day (`date(2024, 2, 29)`); "
        "missing when there is no such date.",
    ),
    "year": ("year(d: date) -> number", "The year of `d`."),
    "month": ("month(d: date) -> number", "The month of `d`, 1 (January) to 12."),
    "day": ("day(d: date) -> number", "The day of the month of `d`, 1 to 31."),
    "add_months": (
        "add_months(d: date, n: number) -> date",
        "`d` plus `n` whole months; a day past the end of the month is its last day "
        '(`add_months(date("2024-01-31"), 1)` is 2024-02-29).',
    ),
    "join": (
        "join(l: list of text | list of number, separator: text) -> text",
        "The items as text with `separator` between them (missing items left out): "
        '`join(map(i in failed of i.side), ", ")`.',
    ),
    "split": (
        "split(t: text, separator: text) -> list of text",
        'The parts of `t` between the separators (`split("a,b", ",")` is `["a", "b"]`); an '
        "empty separator is missing.",
    ),
    "filter": (
        "filter(x in L where C) -> list",
        "The items of `L` for which `C` holds, in order (a list of the same type).",
    ),
    "map": (
        "map(x in L of E) -> list of number | list of text",
        "`E` for each item of `L`, in order (missing values left out); to leave items out, map "
        "a filter: `map(i in filter(i in images where not i.approved) of i.side)`.",
    ),
    "months_between": (
        "months_between(a: date, b: date) -> number",
        "Whole months from `a` to `b` (a month is complete when its day is reached again).",
    ),
    "today": (
        "today() -> date",
        "The date of the event being processed (results stay a pure function of the events).",
    ),
    "add_days": ("add_days(d: date, n: number) -> date", "`d` plus `n` whole days."),
    "days_between": ("days_between(a: date, b: date) -> number", "`b - a` in whole days."),
    "years_between": (
        "years_between(a: date, b: date) -> number",
        "Whole years from `a` to `b`: an age is `years_between(birthdate, today())`.",
    ),
    "text": (
        "text(x: number | text | boolean | date | list) -> text",
        "The value written as text (missing gives an empty text): as it shows in a reason's {...}.",
    ),
    "replace": ("replace(t: text, old: text, new: text) -> text", "Every `old` replaced by `new`."),
    "substring": (
        "substring(t: text, start: number[, end: number]) -> text",
        "Characters from `start` (0 first) up to `end` excluded; negative counts from the end.",
    ),
    "normalize": (
        "normalize(t: text) -> text",
        "Accents removed, lower case, spaces trimmed and runs of white space made one space.",
    ),
    "extract": (
        "extract(t: text, pattern: text) -> text",
        "The first match of the RE2 pattern (its first group when it has one); missing if none.",
    ),
    "number": (
        "number(t: text | boolean) -> number",
        'The number a text writes (`" 042 "` is 42, `"3.5"` 3.5: sign, digits, one point); '
        "missing when it writes none. A boolean is 1 or 0.",
    ),
    "floor": ("floor(n: number) -> number", "The largest whole number not above `n`."),
    "mod": (
        "mod(n: number, d: number) -> number",
        "The remainder of `n / d`, with the sign of `d` (`mod(-1, 10)` is 9); `d` = 0 is missing "
        "and the rule error `division_by_zero`. For check digits (Luhn, CUIT).",
    ),
}

#: Words of expressions that are not functions: (how it is written, what it means).
_CONDITIONAL = (
    "if C then A else B",
    "`A` when the condition `C` holds, else `B` (a missing `C` chooses `B`); only the side "
    "chosen is evaluated. `A` and `B` have one type. It binds loosest: write "
    "`(if C then 1 else 0) + x`.",
)
KEYWORDS: dict[str, tuple[str, str]] = dict.fromkeys(("if", "then", "else"), _CONDITIONAL)

#: Validation names: what each checks on a photo (each validation's entry says it).
VALIDATIONS: dict[str, str] = {name: entry.hover for name, entry in validations.VALIDATIONS.items()}

#: Features a template can switch on.
FEATURES: dict[str, str] = {
    "damage_declaration": "The consumer may mark damage on the image.",
    "video_call": "The inspection may be completed over a video call.",
    "geolocation": "The consumer's location is attached to every photo.",
    "extra_images": "The consumer may add photos beyond the template's images.",
    "document_scan": "The image is scanned as a document.",
}

#: Properties, by key: what each means (the declaration that has it, in parentheses).
PROPERTIES: dict[str, str] = {
    "type": "The inspection type (template) or the input type (input).",
    "id": "A fixed identifier; derived from the name when omitted.",
    "locales": "The locales the template is written in, `<language>_<COUNTRY>`; first is default.",
    "max attempts": "How many times the consumer may upload each image (1 to 1000).",
    "link expires after": "How long the magic link sent to the consumer stays valid.",
    "inspection expires after": "After this, an inspection still created or started is blocked.",
    "minimum confidence": "The confidence (0 to 100) a validation needs to be valid.",
    # A validation's own options (`minimum age`...), from its entry.
    **{words: option.hover for words, (_entry, option) in validations.NUMBER_OPTIONS.items()},
    "photo age limit": "How old a photo may be for the `date` validation.",
    "photo distance limit": "How far from the declared place a photo may be taken.",
    "minimum photo size": "The smallest photo accepted, `W x H` pixels.",
    "side": "The image's `side` in the API (`front`, `back`, `selfie`, `dni`...).",
    "label": "What the consumer is asked (per locale with `label LOCALE:`).",
    "reason": 'Under a `disapprove`, `review` or `otherwise` line, `reason LOCALE: "TEXT"` '
    "gives its reason in another locale, with the same `{values}`; an inspection in that "
    "locale reads it (the line's text where there is none).",
    "help": "A hint shown under the field (per locale with `help LOCALE:`).",
    "asked at": "When the field is requested: `create` (company), `update` (consumer).",
    "ask when": "Ask the input (or photo) only while this condition (over inputs, product and "
    "consumer fields) holds; a required input or a photo not asked is not required.",
    "for image": "A per-image input, asked next to that image.",
    "minimum": "The smallest number accepted.",
    "maximum": "The largest number accepted.",
    "minimum length": "The fewest characters accepted.",
    "maximum length": "The most characters accepted.",
    "pattern": "A regular expression (RE2) the text must match.",
    "minimum choices": "The fewest options a multiselect accepts.",
    "maximum choices": "The most options a multiselect accepts.",
    "earliest": "The earliest date accepted.",
    "latest": "The latest date accepted.",
    "not before": "This date may not come before another date input's (`not before: promised`): "
    "a value that breaks the order is refused at create and update, and `verify` knows it.",
    "not after": "This date may not come after another date input's (`not after: expiry`): "
    "a value that breaks the order is refused at create and update, and `verify` knows it.",
    "accepts": "The media types a file input accepts.",
    "maximum size": "The largest file accepted (`5 MB`).",
    "name": "The check's name in the API.",
    "description": "The check's description in the API.",
    "valid when": "The condition under which the check is valid.",
    "for information": "The check is shown and decides nothing, on purpose: no verdict line, "
    "rule or let need read it (a check nothing reads is W017 without it; one a verdict line "
    "reads is W019 with it).",
    # flags of inputs
    "required": "The value must be given at each stage the input is asked.",
    "optional": "The value may be left out (the default); a condition reading it must say "
    "what a missing value means.",
    "whole number": "Only whole numbers are accepted.",
    "email": "The text must be an email address.",
}

#: What an `include` line does (its hover).
INCLUDE = (
    "Takes the `let`s, `check`s and `input`s of another `.insp` file of the company (here: "
    "in this file's folder), as if written in this template. Resolved when the template is "
    "compiled or saved: the manifest holds them, so a later change of the file changes no "
    "saved template until it is saved again."
)

#: Words that start a declaration at the left margin.
DECLARATION_KEYWORDS = (
    "include",
    "template",
    "settings",
    "variable",
    "let",
    "product",
    "consumer",
    "image",
    "input",
    "feature",
    "on",
    "check",
    "verdict",
)
#: Words used inside declarations, rules and expressions.
INNER_KEYWORDS = (
    "set",
    "to",
    "if",
    "then",
    "else",
    "else if",
    "approve when",
    "disapprove",
    "review",
    "otherwise",
    "validate",
    "require",
    "option",
    "required",
    "optional",
    "for information",
    "and",
    "or",
    "not",
    "in",
    "where",
    "of",
    "true",
    "false",
)
#: Names that expressions start from besides variables.
NAMESPACES = ("inputs", "images", "checks", "consumer", "product", "damages", "validations")
