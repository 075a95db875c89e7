"""What each validation is called where people read it (the consumer's pages, the dashboard, the
PDF): a short label and one sentence of help, in the catalogs of every locale. One table for
every page; a validation a template names that is not here shows its name with spaces."""

from __future__ import annotations

from inspectlang.manifest import VALIDATION_NAMES
from server.web import i18n


def _(message: str) -> str:
    """Marks a message for the catalog extraction; translated when shown."""
    return message


#: Validation name -> (label, help). A test checks every name of `VALIDATION_NAMES` is here.
VALIDATIONS: dict[str, tuple[str, str]] = {
    "date": (_("Photo is recent"), _("The photo was taken within the time the inspection allows.")),
    "distance": (
        _("Taken at the right place"),
        _("The photo was taken near the place given for the inspection."),
    ),
    "recaptured": (
        _("Not a photo of a screen"),
        _("The photo shows the object itself, not a screen or a print of it."),
    ),
    "angle": (_("Right side shown"), _("The photo shows the side of the object it asks for.")),
    "plate": (_("Plate readable"), _("The plate can be read and is the declared one.")),
    "color": (_("Color matches"), _("The color in the photo is the declared color.")),
    "make": (_("Make matches"), _("The make recognized in the photo is the declared make.")),
    "model": (_("Model matches"), _("The model recognized in the photo is the declared model.")),
    # `complete` decodes the photo and measures it: nothing more.
    "complete": (
        _("Photo opens and is large enough"),
        _("The file is a photo that opens, at least as large as the inspection asks."),
    ),
    "object": (_("Right kind of object"), _("The photo shows the kind of object inspected.")),
    "damage": (_("Damage checked"), _("The photo is looked at for visible damage.")),
    "face_comparison": (
        _("Face matches the document"),
        _("The face in the selfie is the face on the identity document."),
    ),
    "birthdate": (
        _("Birth date matches"),
        _("The birth date on the document is the declared one."),
    ),
    "dni": (
        _("Document number matches"),
        _("The number on the identity document is the declared identification."),
    ),
    "full_name": (_("Name matches"), _("The name on the document is the declared name.")),
    "sex": (_("Sex matches"), _("The sex on the document is the declared one.")),
    "age": (_("Age allowed"), _("The age on the document is within what the inspection allows.")),
    "serialNumber": (
        _("Serial number matches"),
        _("The serial number read from the object is the declared one."),
    ),
    "type": (_("Type matches"), _("The type read from the object is the declared one.")),
    "purpose": (_("Purpose matches"), _("The purpose read from the document is the declared one.")),
    "use": (_("Use matches"), _("The use read from the document is the declared one.")),
    "duplicate": (
        _("Photo not used before"),
        _("The same photo is not already in this inspection or in another one."),
    ),
    "edited": (
        _("Photo not edited"),
        _("The photo shows no sign of an editing program, a screenshot or removed camera data."),
    ),
}


def validation_label(name: str, locale: str) -> str:
    """The validation's name for people, in `locale`."""
    found = VALIDATIONS.get(name)
    if found is None:
        return name.replace("_", " ")
    return i18n.translations(locale).gettext(found[0])


def validation_help(name: str, locale: str) -> str:
    """One sentence saying what the validation checks, in `locale` ("" when unknown)."""
    found = VALIDATIONS.get(name)
    return i18n.translations(locale).gettext(found[1]) if found is not None else ""


__all__ = ["VALIDATIONS", "VALIDATION_NAMES", "validation_help", "validation_label"]
