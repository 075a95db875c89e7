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

#: Declared fields (the product's and the consumer's) by their API key; a company's own field
#: shows its own name.
FIELDS = {
    "plate": _("Plate"),
    "make": _("Make"),
    "model": _("Model"),
    "year": _("Year"),
    "vin": _("VIN"),
    "color": _("Color"),
    "use": _("Use"),
    "version": _("Version"),
    "name": _("Name"),
    "identification": _("Identification"),
    "birthdate": _("Birth date"),
    "sex": _("Sex"),
    "email": _("Email"),
    "phone": _("Phone"),
    "serialNumber": _("Serial number"),
    "brand": _("Brand"),
    "imei": _("IMEI"),
    "description": _("Description"),
}
#: The runtime's words for how sure a result is, and who gave it.
SOURCES = {"person": _("person"), "machine": _("machine")}
#: The review pages' notices after an action (`?done=`).
REVIEW_NOTICES = {
    "saved": _("Results saved."),
    "retake": _("Retake requested: the consumer gets a new link."),
    "approved": _("Decided: approved. Here is the next case."),
    "disapproved": _("Decided: disapproved. Here is the next case."),
    "approved-last": _("Decided: approved. No case is left in the queue."),
    "disapproved-last": _("Decided: disapproved. No case is left in the queue."),
}
#: What a refused review action says, by the API error's code (another code keeps the API's
#: own English description).
REVIEW_ERRORS = {
    "reason_required": _("Write the reason for the decision: the report shows it."),
    "review_conflict": _("Another reviewer holds this case or decided it first."),
    "invalid_status_transition": _("This case is no longer waiting for a person."),
    "image_not_found": _("That photo is no longer part of the inspection: reload the page."),
}

#: What a refused account operation says, by `AccountError.code`, in the page's language (an
#: unknown code keeps the service's own English text).
ACCOUNT_ERRORS = {
    "invalid_email": _("That is not a valid email address."),
    "invalid_password": _("That password cannot be used: choose one of at least 10 characters."),
    "invalid_role": _("That role does not exist."),
    "forbidden": _("Your role may not do that."),
    "company_not_found": _("That company does not exist."),
    "email_taken": _("That address already has an account."),
    "locked_out": _("Too many failed sign-ins: try again in 15 minutes."),
    "invalid_credentials": _("Wrong email or password."),
    "invalid_mode": _("The data mode is test or live."),
    "invalid_link": _("This link is not valid any more: ask for a new one."),
    "account_not_found": _("That member is not in this company."),
    "last_owner": _("A company keeps at least one owner."),
    "mail_not_sent": _("The email could not be sent; try again later."),
}
#: What the members and developers pages say after an action (`%(...)s` values filled in).
ACTION_MESSAGES = {
    "invited": _("Invitation sent to %(email)s."),
    "role_changed": _("%(email)s is now %(role)s."),
    "removed": _("The member was removed and signed out."),
    "delivery_queued": _("The delivery is queued again."),
    "delivery_not_retried": _("That delivery cannot be retried now."),
}


def labeller(translations: NullTranslations, table: dict[str, str]) -> Callable[[str], str]:
    """`code -> its word in the page's language`; an unknown code shows as itself."""

    def label(code: str) -> str:
        message = table.get(code)
        return translations.gettext(message) if message else code

    return label
