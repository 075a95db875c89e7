"""The Template manifest: what the compiler produces and what the runtime and the server consume.

`Template.to_api()` serializes field for field to the spec's Template object (`_id`, `type`,
`inspectionType`, `name`, `createdAt`, `updatedAt`, `parameters`, `variables`, `images`, `inputs`,
`features`, `schema`) plus one extra key, `logic`, which holds everything the language knows that
the spec's object has no place for: names, translations, per-validation thresholds, rules,
global checks and the verdict, as the checked AST in JSON form (the IR, see `docs/design/ir.md`).

A manifest is immutable once compiled: a changed template is a new revision with a new
`logic.revision` (a content hash), and an inspection keeps the revision it was created with.
"""

# No `from __future__ import annotations` here, unlike the other modules: pydantic would then
# compile every field's annotation from its text when the models are created at import, which
# costs about a millisecond of every cold start. All names used in annotations are defined above
# their use.
import hashlib
import re
from collections.abc import Callable
from functools import cache
from types import UnionType
from typing import Any, Literal, Self, Union, get_args

from pydantic import BaseModel, ConfigDict, Field
from pydantic_core import PydanticSerializationError, SchemaSerializer, core_schema, to_json

# The validation names (the spec's, then the product's): one entry each, with their texts.
from inspectlang.product_fields import TYPE_FIELDS, fields_of
from inspectlang.validations import VALIDATION_NAMES as VALIDATION_NAMES

#: Inspection types of the spec, in the spec's order.
INSPECTION_TYPES: tuple[str, ...] = (
    "car",
    "moto",
    "bike",
    "machinery",
    "goods",
    "people",
    "custom",
    "cellphone",
)

#: Input types of the spec.
INPUT_TYPES: tuple[str, ...] = (
    "select",
    "multiselect",
    "text",
    "textarea",
    "date",
    "numeric",
    "check",
    "file",
    "video",
)

#: Known features. `damage_declaration` is the spec's; the others are the ones a product needs.
FEATURE_NAMES: tuple[str, ...] = (
    "damage_declaration",
    "video_call",
    "geolocation",
    "extra_images",
    "document_scan",
)

#: Template aliases of built-in templates and the inspection types each is available for.
ALIASES: dict[str, tuple[str, ...]] = {
    "easy": INSPECTION_TYPES,
    "deep": ("car", "moto"),
    "damage": ("car",),
}

#: Product fields per inspection type, with their expression type, from the one table of
#: `inspectlang.product_fields` (labels and search there too). `milage` is spelled as the
#: spec's product update body spells it. `people` has no product: its data is the consumer.
PRODUCT_FIELDS: dict[str, dict[str, str]] = {
    kind: {field.name: field.type for field in fields_of(kind)} for kind in TYPE_FIELDS
}

#: Machinery kinds the client libraries send as `machinery.type`.
MACHINERY_TYPES: tuple[str, ...] = (
    "tractor",
    "combine_harvester",
    "sprayer",
    "seeder",
    "fumigator",
    "baler",
    "round_baler",
    "paver",
    "leveler",
    "crane",
    "excavator",
    "carts",
    "grader",
    "loader",
    "scrapers",
    "compacting_machine",
    "machine_soil_treatment",
    "forklift",
    "motor_vehicle_with_coupling_device",
    "fertilizer",
    "backhoe",
    "bulldozer",
    "compactor",
    "hidrogua",
    "trencher",
    "mixer",
    "hopper",
    "mechanical_shovel",
)
#: Purposes of a machine (`machinery.purpose`), spelled as the clients send them.
MACHINERY_PURPOSES: tuple[str, ...] = ("Agrícola", "Vial", "Industrial")
#: Categories of a good (`goods.category`).
GOODS_CATEGORIES: tuple[str, ...] = (
    "sports",
    "electronics",
    "instruments",
    "jewellery",
    "art",
    "home",
    "mobility",
)
#: Text product fields whose value must be one of a closed set (checked at intake).
PRODUCT_CHOICES: dict[str, dict[str, tuple[str, ...]]] = {
    "machinery": {"type": MACHINERY_TYPES, "purpose": MACHINERY_PURPOSES},
    "goods": {"category": GOODS_CATEGORIES},
}

#: Consumer (identity) fields with their expression type.
CONSUMER_FIELDS: dict[str, str] = {
    "firstName": "text",
    "lastName": "text",
    "identification": "text",
    "email": "text",
    "phone": "text",
    "birthdate": "date",
    "sex": "number",
    "address": "text",
    "city": "text",
    "state": "text",
    "country": "text",
}

Stage = Literal["create", "update"]
InputType = Literal[
    "select", "multiselect", "text", "textarea", "date", "numeric", "check", "file", "video"
]
InspectionType = Literal[
    "car", "moto", "bike", "machinery", "goods", "people", "custom", "cellphone"
]
TemplateKind = Literal["created", "built-in"]
VariableType = Literal["numeric", "text"]

#: An IR expression or statement node: a JSON object with an `op` key (see docs/design/ir.md).
IRNode = dict[str, Any]


class _Model(BaseModel):
    # defer_build: the pydantic schema is built on first validation or serialization, not at
    # import; compiling (model_construct) never needs it, which keeps cold start short.
    model_config = ConfigDict(populate_by_name=True, extra="forbid", frozen=True, defer_build=True)


class ValidationSpec(_Model):
    """An image validation of the spec: `{_id, run, required, validation}`."""

    id: str = Field(alias="_id")
    run: bool = True
    required: bool = True
    validation: str


class ImageSpec(_Model):
    """An image the consumer must upload."""

    side: str
    identifier: str
    validations: list[ValidationSpec] = Field(default_factory=list)


class InputOption(_Model):
    """A choice of a select/multiselect: `key` is what expressions compare (`inputs.use =
    "commercial"`), `label` what the consumer sees. Manifests compiled before keys were
    exposed have no `key`: their expressions still see the label (a revision is immutable)."""

    key: str | None = None
    label: str


class ValidationSchema(_Model):
    """`required` plus the input type's own checks; absent keys are not serialized."""

    required: bool = False
    minLength: int | None = None
    maxLength: int | None = None
    pattern: str | None = None
    email: bool | None = None
    minimum: float | None = None
    maximum: float | None = None
    integer: bool | None = None
    minDate: str | None = None
    maxDate: str | None = None
    #: `not before: OTHER` / `not after: OTHER`: the identifiers of date inputs this date may
    #: not precede / follow (checked when both are given; docs/api.md).
    notBefore: list[str] | None = None
    notAfter: list[str] | None = None
    minItems: int | None = None
    maxItems: int | None = None
    mediaTypes: list[str] | None = None
    maxSizeBytes: int | None = None


class InputSpec(_Model):
    """A custom input (dynamic field) of the spec."""

    identifier: str
    label: str
    type: InputType
    options: list[InputOption] | None = None
    stages: list[Stage] = Field(default_factory=list)
    validationSchema: ValidationSchema = Field(default_factory=ValidationSchema)
    helperMessage: str | None = None


class VariableSpec(_Model):
    name: str
    type: VariableType
    initialValue: float | int | str


class FeatureSpec(_Model):
    id: str = Field(alias="_id")
    feature: str


class Parameters(_Model):
    """Template parameters. The spec shows `maxAttempts`; the others are ours (docs/language.md)."""

    maxAttempts: int = 3
    linkExpiresInHours: float | None = None
    expiresInHours: float | None = None
    minConfidence: float = 80
    maxPhotoAgeHours: float | None = None
    maxDistanceMeters: float | None = None
    minImageWidth: int | None = None
    minImageHeight: int | None = None


# ---------------------------------------------------------------------------------------------
# The compiled logic (the `logic` key). Expressions and statements are IR nodes (plain JSON).
# ---------------------------------------------------------------------------------------------


class ValidationLogic(_Model):
    """Per-validation settings beyond the spec's `{_id, run, required, validation}`."""

    minConfidence: float
    #: A machine result with a lower confidence is sent to a person (`review below
    #: confidence N`, docs/review.md); None: never.
    reviewBelow: float | None = None
    #: Validator options, e.g. {"maxAgeHours": 24}, {"maxDistanceMeters": 500},
    #: {"minWidth": 800, "minHeight": 600}.
    options: dict[str, float] = Field(default_factory=dict)


class ImageLogic(_Model):
    name: str
    #: Consumer-facing label per locale ("" key is the default locale's text).
    labels: dict[str, str] = Field(default_factory=dict)
    validations: dict[str, ValidationLogic] = Field(default_factory=dict)
    features: list[str] = Field(default_factory=list)
    #: `optional`: the photo is not required (a missing one adds no reason); None: required.
    optional: bool | None = None
    #: `ask when: CONDITION`: the photo is asked only while this holds (over inputs, product
    #: and consumer fields); not asked, it is not required. None: always asked.
    askWhen: IRNode | None = None


class InputTranslation(_Model):
    label: str | None = None
    helperMessage: str | None = None
    options: list[str] | None = None


class InputLogic(_Model):
    name: str
    #: Option keys, in the order of `options` of the spec's input.
    optionKeys: list[str] | None = None
    #: The image identifier this input belongs to, for per-image inputs.
    image: str | None = None
    translations: dict[str, InputTranslation] = Field(default_factory=dict)
    #: `ask when`: the input is asked (and, when required, required) only while this holds.
    askWhen: IRNode | None = None


class FeatureLogic(_Model):
    feature: str
    active: bool


class EventFilter(_Model):
    """What a rule reacts to. `event` is one of RULE_EVENTS; the rest narrow it."""

    event: str
    input: str | None = None
    image: str | None = None
    validation: str | None = None


class Rule(_Model):
    id: str
    on: EventFilter
    body: list[IRNode]
    span: list[int]


class CheckTranslation(_Model):
    """A check's name and description in one more locale (`name es_AR:`)."""

    name: str | None = None
    description: str | None = None


class Check(_Model):
    """A global validation: the spec's `{_id, name, description}` plus its condition."""

    id: str = Field(alias="_id")
    key: str
    name: str
    description: str
    valid: IRNode
    span: list[int]
    #: The name and description in the template's other locales (None: none written).
    translations: dict[str, CheckTranslation] | None = None
    #: `for information`: shown, deciding nothing on purpose (None: not so marked).
    informational: bool | None = None


class ReasonTranslation(_Model):
    """A verdict reason in one more locale (`reason es_AR: "..."` under its line), as the
    line's own: the text as written and, when it shows values, its expression."""

    reason: str
    message: IRNode | None = None


class Disapproval(_Model):
    #: The reason as written (with its `{...}` values and `{{` `}}` escapes when it has a
    #: `message`).
    reason: str
    when: IRNode
    span: list[int]
    #: A reason with values: the text-typed expression giving it (`reason` when missing).
    message: IRNode | None = None
    #: The reason in the template's other locales (None: none written).
    translations: dict[str, ReasonTranslation] | None = None


class Verdict(_Model):
    #: Approved when no disapproval matches and this holds (None: always).
    approveWhen: IRNode | None = None
    disapprove: list[Disapproval] = Field(default_factory=list)
    #: The reason given when no disapproval matched but `approveWhen` did not hold.
    otherwise: str | None = None
    #: The `otherwise` reason's expression when it shows values (as `Disapproval.message`).
    otherwiseMessage: IRNode | None = None
    #: `review "reason" when ...`: the inspection waits for a person when one holds
    #: (docs/review.md). None (not written) when the template has none.
    review: list[Disapproval] | None = None
    span: list[int] | None = None
    #: The `otherwise` reason in the template's other locales (as `Disapproval.translations`).
    otherwiseTranslations: dict[str, ReasonTranslation] | None = None


class Requirements(_Model):
    """Product and consumer fields the creation request must carry."""

    product: list[str] = Field(default_factory=list)
    consumer: list[str] = Field(default_factory=list)


class LetLogic(_Model):
    """A `let NAME = EXPRESSION`: its uses in the logic are copies of `value` marked with
    `"let": NAME` (evaluated where used); kept so the decompiler can write the `let` back."""

    name: str
    value: IRNode
    span: list[int]


class Logic(_Model):
    version: int = 1
    #: Content hash of the manifest (without timestamps): identifies the revision.
    revision: str = ""
    sourceName: str | None = None
    locales: list[str] = Field(default_factory=lambda: ["en_US"])
    images: dict[str, ImageLogic] = Field(default_factory=dict)
    inputs: dict[str, InputLogic] = Field(default_factory=dict)
    features: list[FeatureLogic] = Field(default_factory=list)
    requirements: Requirements = Field(default_factory=Requirements)
    rules: list[Rule] = Field(default_factory=list)
    #: In dependency order: a check comes after every check it refers to.
    checks: list[Check] = Field(default_factory=list)
    verdict: Verdict = Field(default_factory=Verdict)
    lets: list[LetLogic] = Field(default_factory=list)


#: Events a rule can react to.
RULE_EVENTS: tuple[str, ...] = (
    "inspection_created",
    "inspection_started",
    "input_set",
    "image_uploaded",
    "image_processed",
    "validation_passed",
    "validation_failed",
    "damage_declared",
    "finish",
)


class Template(_Model):
    """A compiled template: the spec's Template object plus `logic`."""

    id: str = Field(alias="_id")
    type: TemplateKind = "created"
    inspectionType: InspectionType
    name: str
    createdAt: str
    updatedAt: str
    parameters: Parameters = Field(default_factory=Parameters)
    variables: list[VariableSpec] = Field(default_factory=list)
    images: list[ImageSpec] = Field(default_factory=list)
    inputs: list[InputSpec] = Field(default_factory=list)
    features: list[FeatureSpec] = Field(default_factory=list)
    schema_: dict[str, Any] = Field(alias="schema")
    logic: Logic = Field(default_factory=Logic)

    def to_api(self, *, with_logic: bool = True) -> dict[str, Any]:
        """The spec's Template object (JSON-ready), with `logic` unless asked not to."""
        data = self.model_dump(by_alias=True, exclude_none=True, mode="json")
        if not with_logic:
            data.pop("logic", None)
        return data

    @classmethod
    def from_api(cls, data: dict[str, Any]) -> Self:
        """Load a manifest from its JSON form (the inverse of `to_api`)."""
        return cls.model_validate(data)


# -- the manifest's identity ---------------------------------------------------------------------


def revision_of(template: Template) -> str:
    """A manifest's one identity, `logic.revision` (the compiler sets it; the runtime caches
    programs by it): sha256 of the manifest's compact JSON (the models' field order, by alias,
    without None, dict keys in the order the compiler wrote them) minus `createdAt`, `updatedAt`
    and `logic.revision`: `canonical_json` of `_plain(template)` without those three keys.

    The text is written by pydantic_core from the models' `__dict__`s (`_revision_serializer`,
    not pydantic's own serializer, whose schema compiling never builds), and by `_plain` and
    `canonical_json` when that text may differ (`_may_differ`) or pydantic_core refuses the
    manifest: the same bytes. The compiler's models hold the same values as validated ones, so a
    compiled manifest and the same manifest loaded from JSON get the same revision."""
    try:
        content = _revision_serializer().to_json(
            template, by_alias=True, exclude_none=True, warnings="error"
        )
    except PydanticSerializationError:
        content = None
    if content is None or _may_differ(content):
        data = _plain(template)
        data.pop("createdAt", None)
        data.pop("updatedAt", None)
        data["logic"].pop("revision", None)
        content = canonical_json(data)
    return hashlib.sha256(content).hexdigest()


@cache
def _revision_serializer() -> SchemaSerializer:
    """pydantic_core's serializer of a `Template` as `_plain` writes it, minus the three keys the
    revision leaves out: each model as its `__dict__` (a typed dict of its fields, by alias,
    None left out), each field holding models (a model, a list or dict of them, or None) walked
    as such, any other value written as JSON data. `to_json` of the large benchmark template:
    1.7 ms instead of 2.5 for `_plain` and `to_json` of its result (issue 26). A value that is
    not the model its field declares is refused (`revision_of` then takes `_plain`'s path).
    Typed dicts of `__dict__`s, not `model` schemas: pydantic_core would serialize a model
    class whose pydantic schema is built (after a `to_api`) with that class's own serializer."""
    unhashed: set[tuple[type[BaseModel], str]] = {
        (Template, "createdAt"),
        (Template, "updatedAt"),
        (Logic, "revision"),
    }
    return SchemaSerializer(
        _state_schema(Template, unhashed), core_schema.CoreConfig(ser_json_inf_nan="constants")
    )


def _state_schema(
    model: type[BaseModel], unhashed: set[tuple[type[BaseModel], str]]
) -> core_schema.CoreSchema:
    """A model as its `__dict__`: a typed dict whose undeclared keys are written as they are,
    so only the fields holding models, renamed or left out are declared (31 of the 123). The
    schemas are written as the dicts `core_schema`'s helpers return: this runs at a process's
    first revision, part of its cold start, where the helpers' calls cost ~0.3 ms more."""
    fields: dict[str, core_schema.TypedDictField] = {}
    for name, info in model.__pydantic_fields__.items():
        schema = _value_schema(info.annotation, unhashed)
        excluded = (model, name) in unhashed
        if schema is not None or info.alias is not None or excluded:
            field: core_schema.TypedDictField = {
                "type": "typed-dict-field",
                "schema": schema or {"type": "any"},
            }
            if info.alias is not None:
                field["serialization_alias"] = info.alias
            if excluded:
                field["serialization_exclude"] = True
            fields[name] = field
    return {
        "type": "any",
        "serialization": {
            "type": "function-plain",
            "function": _state_of(model),
            "return_schema": {"type": "typed-dict", "fields": fields, "extra_behavior": "allow"},
        },
    }


def _value_schema(
    annotation: Any, unhashed: set[tuple[type[BaseModel], str]]
) -> core_schema.CoreSchema | None:
    """The schema of a field holding models: a model, a list of them, a dict of them by name,
    or one of these or None; None for a field holding JSON data only. Any other shape holding
    models is refused here, when the serializer is built: written as data, a model would be
    written by pydantic's own serializer (built for it then), not as `_plain` writes it. (The
    annotation's own `__origin__` and `__args__` are read, without `typing.get_origin`'s
    checks, for the same reason as `_state_schema`'s dicts.)"""
    if isinstance(annotation, type):
        return _state_schema(annotation, unhashed) if issubclass(annotation, BaseModel) else None
    arguments: tuple[Any, ...] = getattr(annotation, "__args__", ())
    inner = [_value_schema(argument, unhashed) for argument in arguments]
    if not any(inner):
        return None
    origin = getattr(annotation, "__origin__", None)
    if origin is list and inner[0] is not None:
        return {"type": "list", "items_schema": inner[0]}
    if origin is dict and inner[0] is None and inner[1] is not None:
        return {"type": "dict", "keys_schema": {"type": "str"}, "values_schema": inner[1]}
    union = isinstance(annotation, UnionType) or origin is Union
    held = inner[arguments[0] is type(None)] if len(arguments) == 2 else None
    if union and type(None) in arguments and held is not None:
        return {"type": "nullable", "schema": held}
    raise TypeError(f"the revision cannot write {annotation!r}, which holds models")


def _state_of(model: type[BaseModel]) -> Callable[[Any], dict[str, Any]]:
    """The `__dict__` of an instance of exactly `model` (a subclass or any other value is
    refused: `_plain` writes it by its own class's fields). The check costs ~0.1 ms of the
    large template's 1,128 models."""

    def state(value: Any) -> dict[str, Any]:
        if type(value) is not model:
            raise TypeError(f"{type(value).__name__} is no {model.__name__}")
        return value.__dict__

    return state


#: `e-`, one digit and the end of a number (or of the text), the digit before it checked apart:
#: see `_may_differ` (a regular expression finds these in half the time of a loop over the
#: `e-`s of the manifest's UUIDs). Compiled on first use, in `re`'s cache: ~0.1-0.3 ms that
#: importing the module need not pay.
_SMALL_EXPONENT = rb"e-[0-9](?:[,\]}]|\Z)"


def _may_differ(content: bytes) -> bool:
    """Whether pydantic_core's `content` may hold a float `json` writes otherwise: one of
    magnitude 1e-9 <= x < 1e-4, which `repr` (and so `json`) writes `1e-05`..`9e-09` and
    pydantic_core `0.00001`, `1e-7`. Every other value a manifest holds is written alike
    (floats' digits are both the shortest round trip, and from 1e16 both write `1e+16`; strings
    unescaped but for `"`, `\\` and the control characters, in the same short and `\\u00xx`
    forms; `Infinity`, `NaN`; integers of any size). So: any `0.0000`, or a digit, `e-`, one
    digit and the end of a number (the manifest's UUIDs hold `e-` followed by more hex digits).
    A string holding the same bytes only sends the data to `json` (slower, the same text)."""
    if b"0.0000" in content:
        return True
    for found in re.finditer(_SMALL_EXPONENT, content):
        if content[found.start() - 1 : found.start()].isdigit():
            return True
    return False


def canonical_json(data: Any) -> bytes:
    """The revision's text as UTF-8: `json.dumps(data, ensure_ascii=False, separators=(",",
    ":"))`, byte for byte, for JSON-ready data whose keys are all strings (a manifest's are:
    fields by alias, `dict[str, ...]` fields, IR nodes). Written by pydantic_core's Rust encoder
    (already imported with pydantic; a third of the C `json` encoder's time for a large
    manifest), and by `json` itself when the text holds a float pydantic_core writes otherwise
    (`_may_differ`) or when pydantic_core cannot write the data (a lone surrogate; data nested
    past its depth limit of a few hundred levels, where expressions nest at most 64), so the
    text, and any error, stay those of `json` (tests/language/test_canonical_json.py)."""
    try:
        content = to_json(data, inf_nan_mode="constants")
    except PydanticSerializationError:
        content = None
    if content is not None and not _may_differ(content):
        return content
    import json  # here, not at import: only this fallback needs it (1.2 ms of a cold start)

    # No circularity check: the data is made from models and cannot cycle (the same text, 20%
    # less time to write a large manifest's JSON).
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), check_circular=False)
    return text.encode("utf-8")


def _plain(value: Any) -> Any:
    """A model as JSON-ready data: fields by alias in declaration order, None fields left out.
    Fields that hold plain JSON (IR nodes, the schema) are passed through without a walk."""
    if isinstance(value, BaseModel):
        data = {}
        values = value.__dict__  # the fields' values (what `getattr` reads, without the lookup)
        for name, key, walk in _fields(type(value)):
            item = values[name]
            if item is not None:
                data[key] = _plain(item) if walk else item
        return data
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    return value


@cache
def _fields(model: type[BaseModel]) -> tuple[tuple[str, str, bool], ...]:
    """(name, JSON key, whether the value holds models) of each field of `model`."""
    return tuple(
        (name, info.alias or name, _holds_models(info.annotation))
        for name, info in model.__pydantic_fields__.items()
    )


def _holds_models(annotation: Any) -> bool:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return True
    return any(_holds_models(argument) for argument in get_args(annotation))


def with_revision(template: Template) -> Template:
    """The template with `logic.revision` set to the hash of its content."""
    revision = revision_of(template)
    return template.model_copy(
        update={"logic": template.logic.model_copy(update={"revision": revision})}
    )
