"""The validations a template can ask of a photo, each defined once, in one entry.

An entry holds everything of one validation that is not its analysis: the name the language
and the API accept (`validate plate`), the options that mean something for it alone
(`minimum age 21`), what it is called where people read it (a short label and one sentence of
help, in every locale of the pages, written here the way a template writes `label es_AR:`), the
language server's hover text, and where it runs. The checker, the manifest, the language
server and the server's pages read this table; the runtime's validators and the vision
analyzers register under these names and refuse any other (`runtime.validators.register`,
`runtime.vision.register`), and tests/runtime/test_runtime_validation_agreement.py checks that
every entry run `UPLOAD` or `WORKER` has its analyzer and no analyzer lacks an entry.

A new validation is one entry here, its analyzer, its tests and its row in docs/vision.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = [
    "LOCALES",
    "NUMBER_OPTIONS",
    "OUTSIDE",
    "UPLOAD",
    "VALIDATIONS",
    "VALIDATION_NAMES",
    "WORKER",
    "NumberOption",
    "Texts",
    "Validation",
    "entry_of",
]

#: The locales every text of an entry is written in (the pages' languages; `en_US` first, the
#: one a text falls back to).
LOCALES = ("en_US", "es_AR", "pt_BR")

Where = Literal["upload", "worker", "outside"]
#: Run by `runtime.validators` while the upload waits.
UPLOAD: Where = "upload"
#: Run by an analyzer of `runtime.vision` in the worker (the `vision` extra).
WORKER: Where = "worker"
#: No machine here decides it: a configured provider, a result posted to the API, else a person.
OUTSIDE: Where = "outside"


@dataclass(frozen=True, slots=True, kw_only=True)
class Texts:
    """One text in every locale of `LOCALES` (each is required: a missing one is a TypeError)."""

    en_US: str
    es_AR: str
    pt_BR: str

    def in_locale(self, locale: str) -> str:
        """The text in `locale` (a supported one, as the pages choose it), else in English."""
        text = getattr(self, locale, None) if locale in LOCALES else None
        return text if isinstance(text, str) else self.en_US


@dataclass(frozen=True, slots=True)
class NumberOption:
    """A number option of one validation: `minimum age 21` is written `minimum age`, kept in
    the manifest's `options` under `key`, between `low` and `high`."""

    words: str
    key: str
    low: float
    high: float
    #: The language server's hover text for the option.
    hover: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Validation:
    """One validation (see the module)."""

    name: str
    where: Where
    label: Texts
    help: Texts
    #: What the language server shows on `validate NAME` (English, as the language is).
    hover: str
    options: tuple[NumberOption, ...] = ()
    #: False for a fraud signal: naming which one fired while photos are taken teaches whoever
    #: is inspected how to get past it. The company still sees it (API, dashboard, PDF).
    shown_to_consumers: bool = True
    #: True when it reads an identity document: a photo that runs one is the inspection's
    #: document, the reference a selfie's `face_comparison` is compared with.
    reads_identity_document: bool = False


#: The spec's validations first, in the spec's order, then the product's.
_ENTRIES = (
    Validation(
        name="date",
        where=UPLOAD,
        label=Texts(
            en_US="Photo is recent",
            es_AR="Foto reciente",
            pt_BR="Foto recente",
        ),
        help=Texts(
            en_US="The photo was taken within the time the inspection allows.",
            es_AR="La foto se tomó dentro del plazo que permite la inspección.",
            pt_BR="A foto foi tirada dentro do prazo que a vistoria permite.",
        ),
        hover="The photo is recent: taken within the photo age limit.",
    ),
    Validation(
        name="distance",
        where=UPLOAD,
        label=Texts(
            en_US="Taken at the right place",
            es_AR="Tomada en el lugar correcto",
            pt_BR="Tirada no lugar certo",
        ),
        help=Texts(
            en_US="The photo was taken near the place given for the inspection.",
            es_AR="La foto se tomó cerca del lugar indicado para la inspección.",
            pt_BR="A foto foi tirada perto do local indicado para a vistoria.",
        ),
        hover="The photo was taken near the declared place.",
    ),
    Validation(
        name="recaptured",
        where=OUTSIDE,
        label=Texts(
            en_US="Not a photo of a screen",
            es_AR="No es foto de una pantalla",
            pt_BR="Não é foto de uma tela",
        ),
        help=Texts(
            en_US="The photo shows the object itself, not a screen or a print of it.",
            es_AR="La foto muestra el objeto mismo, no una pantalla ni una impresión.",
            pt_BR="A foto mostra o próprio objeto, não uma tela nem uma impressão.",
        ),
        hover="The photo is of a screen or a print (a recapture).",
    ),
    Validation(
        name="angle",
        where=OUTSIDE,
        label=Texts(
            en_US="Right side shown",
            es_AR="Se ve el lado pedido",
            pt_BR="Mostra o lado pedido",
        ),
        help=Texts(
            en_US="The photo shows the side of the object it asks for.",
            es_AR="La foto muestra el lado del objeto que se pide.",
            pt_BR="A foto mostra o lado do objeto que é pedido.",
        ),
        hover="The photo is taken from the expected angle.",
    ),
    Validation(
        name="plate",
        where=WORKER,
        label=Texts(
            en_US="Plate readable",
            es_AR="Patente legible",
            pt_BR="Placa legível",
        ),
        help=Texts(
            en_US="The plate can be read and is the declared one.",
            es_AR="La patente se puede leer y es la declarada.",
            pt_BR="A placa pode ser lida e é a declarada.",
        ),
        hover="The plate read from the photo matches the declared plate.",
    ),
    Validation(
        name="color",
        where=WORKER,
        label=Texts(
            en_US="Color matches",
            es_AR="Color coincide",
            pt_BR="Cor confere",
        ),
        help=Texts(
            en_US="The color in the photo is the declared color.",
            es_AR="El color de la foto es el declarado.",
            pt_BR="A cor na foto é a declarada.",
        ),
        hover="The vehicle's color matches the declared color.",
    ),
    Validation(
        name="make",
        where=OUTSIDE,
        label=Texts(
            en_US="Make matches",
            es_AR="Marca coincide",
            pt_BR="Marca confere",
        ),
        help=Texts(
            en_US="The make recognized in the photo is the declared make.",
            es_AR="La marca reconocida en la foto es la declarada.",
            pt_BR="A marca reconhecida na foto é a declarada.",
        ),
        hover="The make recognised from the vehicle matches the declared make.",
    ),
    Validation(
        name="model",
        where=OUTSIDE,
        label=Texts(
            en_US="Model matches",
            es_AR="Modelo coincide",
            pt_BR="Modelo confere",
        ),
        help=Texts(
            en_US="The model recognized in the photo is the declared model.",
            es_AR="El modelo reconocido en la foto es el declarado.",
            pt_BR="O modelo reconhecido na foto é o declarado.",
        ),
        hover="The model recognised from the vehicle matches the declared model.",
    ),
    Validation(
        name="complete",
        where=UPLOAD,
        label=Texts(
            en_US="Photo opens and is large enough",
            es_AR="La foto abre y es lo bastante grande",
            pt_BR="A foto abre e é grande o bastante",
        ),
        help=Texts(
            en_US="The file is a photo that opens, at least as large as the inspection asks.",
            es_AR=(
                "El archivo es una foto que se puede abrir, al menos del tamaño que pide "
                "la inspección."
            ),
            pt_BR="O arquivo é uma foto que abre, pelo menos do tamanho que a vistoria pede.",
        ),
        # `complete` decodes the photo and measures it: nothing more.
        hover="The photo opens, is at least the minimum photo size and is not blank.",
    ),
    Validation(
        name="object",
        where=OUTSIDE,
        label=Texts(
            en_US="Right kind of object",
            es_AR="Tipo de objeto correcto",
            pt_BR="Tipo de objeto correto",
        ),
        help=Texts(
            en_US="The photo shows the kind of object inspected.",
            es_AR="La foto muestra el tipo de objeto inspeccionado.",
            pt_BR="A foto mostra o tipo de objeto vistoriado.",
        ),
        hover="The expected object is present.",
    ),
    Validation(
        name="damage",
        where=OUTSIDE,
        label=Texts(
            en_US="Damage checked",
            es_AR="Daños revisados",
            pt_BR="Danos verificados",
        ),
        help=Texts(
            en_US="The photo is looked at for visible damage.",
            es_AR="Se revisa la foto en busca de daños visibles.",
            pt_BR="A foto é verificada em busca de danos visíveis.",
        ),
        hover="The damage detector found no damage.",
    ),
    Validation(
        name="face_comparison",
        where=WORKER,
        label=Texts(
            en_US="Face matches the document",
            es_AR="La cara coincide con el documento",
            pt_BR="O rosto confere com o documento",
        ),
        help=Texts(
            en_US="The face in the selfie is the face on the identity document.",
            es_AR="La cara de la selfie es la del documento de identidad.",
            pt_BR="O rosto da selfie é o do documento de identidade.",
        ),
        hover="The face in the selfie matches the face on the ID photo.",
        options=(
            NumberOption(
                "maximum face distance",
                "maxFaceDistance",
                0,
                2,
                hover="For `validate face_comparison`: the largest face distance that counts as "
                "the same person (default 0.5).",
            ),
        ),
    ),
    Validation(
        name="birthdate",
        where=WORKER,
        reads_identity_document=True,
        label=Texts(
            en_US="Birth date matches",
            es_AR="Fecha de nacimiento coincide",
            pt_BR="Data de nascimento confere",
        ),
        help=Texts(
            en_US="The birth date on the document is the declared one.",
            es_AR="La fecha de nacimiento del documento es la declarada.",
            pt_BR="A data de nascimento no documento é a declarada.",
        ),
        hover="The birthdate read from the ID matches the declared one.",
    ),
    Validation(
        name="dni",
        where=WORKER,
        reads_identity_document=True,
        label=Texts(
            en_US="Document number matches",
            es_AR="Número de documento coincide",
            pt_BR="Número do documento confere",
        ),
        help=Texts(
            en_US="The number on the identity document is the declared identification.",
            es_AR="El número del documento de identidad es el declarado.",
            pt_BR="O número do documento de identidade é o declarado.",
        ),
        hover="The ID number read from the document matches the declared identification.",
    ),
    Validation(
        name="full_name",
        where=WORKER,
        reads_identity_document=True,
        label=Texts(
            en_US="Name matches",
            es_AR="Nombre coincide",
            pt_BR="Nome confere",
        ),
        help=Texts(
            en_US="The name on the document is the declared name.",
            es_AR="El nombre del documento es el declarado.",
            pt_BR="O nome no documento é o declarado.",
        ),
        hover="The name read from the ID matches the declared name.",
    ),
    Validation(
        name="sex",
        where=WORKER,
        reads_identity_document=True,
        label=Texts(
            en_US="Sex matches",
            es_AR="Sexo coincide",
            pt_BR="Sexo confere",
        ),
        help=Texts(
            en_US="The sex on the document is the declared one.",
            es_AR="El sexo del documento es el declarado.",
            pt_BR="O sexo no documento é o declarado.",
        ),
        hover="The sex read from the ID matches the declared one.",
    ),
    Validation(
        name="age",
        where=WORKER,
        reads_identity_document=True,
        label=Texts(
            en_US="Age allowed",
            es_AR="Edad permitida",
            pt_BR="Idade permitida",
        ),
        help=Texts(
            en_US="The age on the document is within what the inspection allows.",
            es_AR="La edad del documento está dentro de lo que permite la inspección.",
            pt_BR="A idade no documento está dentro do que a vistoria permite.",
        ),
        hover="The age computed from the ID's birthdate.",
        options=(
            NumberOption(
                "minimum age",
                "minAge",
                0,
                150,
                hover="For `validate age`: the age read from the document must be at least this.",
            ),
        ),
    ),
    # Read from a product's identification (a serial plate, a label, a title card) and compared
    # with the declared field; the client libraries configure them by these names.
    Validation(
        name="serialNumber",
        where=WORKER,
        label=Texts(
            en_US="Serial number matches",
            es_AR="Número de serie coincide",
            pt_BR="Número de série confere",
        ),
        help=Texts(
            en_US="The serial number read from the object is the declared one.",
            es_AR="El número de serie leído del objeto es el declarado.",
            pt_BR="O número de série lido do objeto é o declarado.",
        ),
        hover="The serial number read from the photo matches the declared one.",
    ),
    Validation(
        name="type",
        where=OUTSIDE,
        label=Texts(
            en_US="Type matches",
            es_AR="Tipo coincide",
            pt_BR="Tipo confere",
        ),
        help=Texts(
            en_US="The type read from the object is the declared one.",
            es_AR="El tipo leído del objeto es el declarado.",
            pt_BR="O tipo lido do objeto é o declarado.",
        ),
        hover="The machine's kind recognised from the photo matches the declared type.",
    ),
    Validation(
        name="purpose",
        where=OUTSIDE,
        label=Texts(
            en_US="Purpose matches",
            es_AR="Destino coincide",
            pt_BR="Finalidade confere",
        ),
        help=Texts(
            en_US="The purpose read from the document is the declared one.",
            es_AR="El destino leído del documento es el declarado.",
            pt_BR="A finalidade lida do documento é a declarada.",
        ),
        hover="The machine's purpose (Agrícola, Vial, Industrial) matches the declared one.",
    ),
    Validation(
        name="use",
        where=OUTSIDE,
        label=Texts(
            en_US="Use matches",
            es_AR="Uso coincide",
            pt_BR="Uso confere",
        ),
        help=Texts(
            en_US="The use read from the document is the declared one.",
            es_AR="El uso leído del documento es el declarado.",
            pt_BR="O uso lido do documento é o declarado.",
        ),
        hover="The vehicle's or machine's use matches the declared use.",
    ),
    # Fraud signals run at upload (runtime.evidence): the photo already used, the photo edited.
    Validation(
        name="duplicate",
        where=UPLOAD,
        label=Texts(
            en_US="Photo not used before",
            es_AR="Foto no usada antes",
            pt_BR="Foto não usada antes",
        ),
        help=Texts(
            en_US="The same photo is not already in this inspection or in another one.",
            es_AR="La misma foto no está ya en esta inspección ni en otra.",
            pt_BR="A mesma foto não está nesta inspeção nem em outra.",
        ),
        hover="The photo is not already used in this inspection or another of the company.",
        shown_to_consumers=False,
    ),
    Validation(
        name="edited",
        where=UPLOAD,
        label=Texts(
            en_US="Photo not edited",
            es_AR="Foto sin editar",
            pt_BR="Foto não editada",
        ),
        help=Texts(
            en_US=(
                "The photo shows no sign of an editing program, a screenshot or removed "
                "camera data."
            ),
            es_AR=(
                "La foto no muestra señales de un programa de edición, de una captura de "
                "pantalla ni de datos de cámara quitados."
            ),
            pt_BR=(
                "A foto não mostra sinais de um programa de edição, de uma captura de "
                "tela nem de dados da câmera removidos."
            ),
        ),
        hover="The photo shows no sign of editing (editor software, thumbnail, screenshot).",
        shown_to_consumers=False,
    ),
)

#: Validation name -> its entry, in the order of the spec (the order lists and pages show).
VALIDATIONS: dict[str, Validation] = {entry.name: entry for entry in _ENTRIES}
#: The names the language and the API accept.
VALIDATION_NAMES: tuple[str, ...] = tuple(VALIDATIONS)
#: Every validation's number options by how they are written (`minimum age`).
NUMBER_OPTIONS: dict[str, tuple[Validation, NumberOption]] = {
    option.words: (entry, option) for entry in _ENTRIES for option in entry.options
}


def entry_of(name: str) -> Validation:
    """The entry a validator or an analyzer registers under. A name with none is refused at
    registration: no template could ask for it, and no page could name it."""
    found = VALIDATIONS.get(name)
    if found is None:
        raise LookupError(
            f"no validation {name!r} in inspectlang.validations: add its entry (name, texts, "
            "where it runs) beside the others"
        )
    return found
