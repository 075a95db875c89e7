"""Words the dashboard shows for the API's codes (statuses, verdicts, delivery states), as
catalog messages: `_()` here only marks them for extraction; pages translate them through the
page's catalog (`labeller`)."""

from __future__ import annotations

from collections.abc import Callable

from babel.support import NullTranslations


def _(message: str) -> str:
    """Marks a message for the catalog extraction; translated when shown."""
    return message


STATUSES = {
    "created": _("Created"),
    "started": _("Started"),
    "processing": _("Processing"),
    "completed": _("Completed"),
    "blocked": _("Blocked"),
    "review": _("Needs review"),
}
VERDICTS = {
    "approved": _("Approved"),
    "disapproved": _("Disapproved"),
    "not_defined": _("No verdict"),
    "not_provided": _("Not provided yet"),
}
#: Dashboard roles (server/dashboard/permissions.py).
ROLES = {
    "owner": _("owner"),
    "admin": _("admin"),
    "editor": _("editor"),
    "viewer": _("viewer"),
}
#: The Inspection object's `delivery.status` (server/delivery/schemas.py).
DELIVERY = {
    "disabled": _("Not sent"),
    "queued": _("Queued"),
    "sent": _("Sent"),
    "failed": _("Failed"),
}


def labeller(translations: NullTranslations, table: dict[str, str]) -> Callable[[str], str]:
    """`code -> its word in the page's language`; an unknown code shows as itself."""

    def label(code: str) -> str:
        message = table.get(code)
        return translations.gettext(message) if message else code

    return label
