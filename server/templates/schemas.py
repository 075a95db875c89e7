"""The template routes' bodies: the `.insp` source in, the Template object out (the spec's
Template object, built by `inspectlang.manifest` and documented by these Structs)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec

from runtime.proofs.cases import TESTS_SCHEMA
from server.bodies import InputType, InspectionType, RequestBody, ResponseBody

Unset = msgspec.UnsetType
UNSET = msgspec.UNSET

#: The message of a body that carries no source.
SOURCE_MESSAGE = 'Send the template\'s .insp source as text/plain, or JSON {"source": "..."}.'


#: The JSON Schema `format` of a template's source: `.insp` text that compiles with no error
#: (docs/language.md); one that does not is 422 `invalid_template` with its diagnostics.
SOURCE_FORMAT = "insp"


class TemplateSource(RequestBody):
    """A template's source as JSON (it may come as text/plain instead)."""

    field_codes = {"source": "invalid_body"}
    field_messages = {"source": SOURCE_MESSAGE}

    source: Annotated[
        str,
        msgspec.Meta(
            pattern=r"\S",
            description="The template's `.insp` source (not blank); it must compile.",
            extra_json_schema={"format": SOURCE_FORMAT},
        ),
    ]
    tests: Annotated[
        dict[str, Any] | Unset,
        msgspec.Meta(
            description='The revision\'s template tests, `{"cases": [...]}` as in '
            "`NAME.tests.json` (docs/language.md); run on the save, answered in `testResults`. "
            'A revision without `tests` keeps the previous revision\'s; `{"cases": []}` '
            "drops them. At most 2,000 events and 200 megapixels of photos in all.",
            extra_json_schema=TESTS_SCHEMA,
        ),
    ] = UNSET
    testsMustPass: Annotated[
        bool,
        msgspec.Meta(
            description="`true`: a failing case refuses the save (422 `template_tests_failed`); "
            "by default failing cases are answered and the revision is saved."
        ),
    ] = False


#: The JSON Schema `format` of a shared file's source: `.insp` text holding only `let`, `check`
#: and `input` declarations (and `include` lines), docs/language.md "Reuse across files".
SHARED_SOURCE_FORMAT = "insp-shared"


class SharedFileSource(RequestBody):
    """A shared file's source as JSON (it may come as text/plain instead)."""

    field_codes = {"source": "invalid_body"}
    field_messages = {"source": SOURCE_MESSAGE}

    source: Annotated[
        str,
        msgspec.Meta(
            pattern=r"\S",
            description="The shared file's `.insp` source (not blank): lets, checks and inputs.",
            extra_json_schema={"format": SHARED_SOURCE_FORMAT},
        ),
    ]


class Validation(ResponseBody):
    id: str = msgspec.field(name="_id")
    run: bool
    required: bool
    validation: str


class TemplateImage(ResponseBody):
    side: str
    identifier: str
    validations: list[Validation]


class Option(ResponseBody):
    """A choice: `key` is what the template's expressions compare, `label` what people see
    (templates compiled before keys were exposed have no `key`)."""

    label: str
    key: str | Unset = UNSET


class ValidationSchema(ResponseBody):
    """`required` plus the input type's own checks (`inspectlang.manifest.ValidationSchema`)."""

    required: bool
    minLength: int | Unset | None = UNSET
    maxLength: int | Unset | None = UNSET
    pattern: str | Unset | None = UNSET
    email: bool | Unset | None = UNSET
    minimum: float | Unset | None = UNSET
    maximum: float | Unset | None = UNSET
    integer: bool | Unset | None = UNSET
    minDate: str | Unset | None = UNSET
    maxDate: str | Unset | None = UNSET
    #: Date orders (`not before: OTHER`, `not after: OTHER`): other date inputs' identifiers.
    notBefore: list[str] | Unset | None = UNSET
    notAfter: list[str] | Unset | None = UNSET
    minItems: int | Unset | None = UNSET
    maxItems: int | Unset | None = UNSET
    mediaTypes: list[str] | Unset | None = UNSET
    maxSizeBytes: int | Unset | None = UNSET


class TemplateInput(ResponseBody):
    identifier: str
    label: str
    type: InputType
    stages: list[Literal["create", "update"]]
    validationSchema: ValidationSchema
    options: list[Option] | msgspec.UnsetType = msgspec.UNSET
    helperMessage: str | msgspec.UnsetType = msgspec.UNSET


class Parameters(ResponseBody):
    """The spec's `maxAttempts` and ours (`inspectlang.manifest.Parameters`)."""

    maxAttempts: float
    minConfidence: float | Unset = UNSET
    linkExpiresInHours: float | Unset | None = UNSET
    expiresInHours: float | Unset | None = UNSET
    maxPhotoAgeHours: float | Unset | None = UNSET
    maxDistanceMeters: float | Unset | None = UNSET
    minImageWidth: int | Unset | None = UNSET
    minImageHeight: int | Unset | None = UNSET


class Variable(ResponseBody):
    name: str
    type: Literal["numeric", "text"]
    initialValue: float | str


class Feature(ResponseBody):
    id: str = msgspec.field(name="_id")
    feature: str


class Template(ResponseBody):
    """The spec's Template object: a custom template's latest revision, or a built-in."""

    id: str = msgspec.field(name="_id")
    type: Literal["created", "built-in"]
    inspectionType: InspectionType
    name: str
    createdAt: str
    updatedAt: str
    parameters: Parameters
    variables: list[Variable]
    images: list[TemplateImage]
    inputs: list[TemplateInput]
    features: list[Feature]
    schema: dict[str, Any]
    revision: Annotated[
        int | msgspec.UnsetType, msgspec.Meta(description="Revision number of a custom template.")
    ] = msgspec.UNSET
    logic: dict[str, Any] | msgspec.UnsetType = msgspec.UNSET
    warnings: Annotated[
        list[dict[str, Any]] | msgspec.UnsetType,
        msgspec.Meta(
            description="On a save: each required validation no machine decides here "
            "(`W900`: its inspections wait for a person, docs/review.md)."
        ),
    ] = msgspec.UNSET
    changes: Annotated[
        dict[str, Any] | msgspec.UnsetType,
        msgspec.Meta(
            description="On a revision (`PUT`): what it decides differently from the revision "
            "before (`inspectlang diff`): `equivalent`, and `differences`, each way an "
            "inspection one approves and the other does not, with events files (docs/api.md)."
        ),
    ] = msgspec.UNSET
    tests: Annotated[
        dict[str, Any] | msgspec.UnsetType,
        msgspec.Meta(
            description='A custom template revision\'s template tests (`{"cases": [...]}`), '
            "when it has any."
        ),
    ] = msgspec.UNSET
    testResults: Annotated[
        dict[str, Any] | msgspec.UnsetType,
        msgspec.Meta(
            description="On a save of a revision with tests: each case's result and the "
            "decision coverage (`inspectlang test --format json`, docs/api.md)."
        ),
    ] = msgspec.UNSET


class SharedFile(ResponseBody):
    """A company's shared file: lets, checks and inputs its templates `include "NAME"`."""

    name: str
    createdAt: str
    updatedAt: str
