"""The scopes a partner application asks for, what each lets a token do, and which members' roles
it works for: a token carries the scopes its member approved, and uses only those its member's
role allows at the time of the request (a viewer who approved `inspections:create` still cannot
create; a member made editor later can)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from server.dashboard.labels import _
from server.dashboard.permissions import PERMISSIONS, Role


@dataclass(frozen=True, slots=True)
class Scope:
    name: str
    #: What the consent page says the application will do, in the member's language.
    label: str
    #: The roles whose tokens may use it.
    roles: frozenset[Role]


SCOPES: dict[str, Scope] = {
    scope.name: scope
    for scope in (
        Scope(
            "inspections:read",
            _("Read your company's inspections"),
            PERMISSIONS["inspections.view"],
        ),
        Scope(
            "inspections:create",
            _("Create inspections for you (you are their producer)"),
            # Those who can act on inspections in the dashboard: a viewer only reads.
            PERMISSIONS["inspections.share"],
        ),
        Scope("templates:read", _("Read your company's templates"), PERMISSIONS["templates.view"]),
    )
}
#: Every scope, in the order pages list them.
SCOPE_NAMES: tuple[str, ...] = tuple(SCOPES)


def usable(granted: Iterable[str], role: str) -> frozenset[str]:
    """The granted scopes a member of `role` may use now."""
    return frozenset(name for name in granted if name in SCOPES and role in SCOPES[name].roles)


def split(scope: str | None) -> list[str]:
    """The scope names of a space-separated `scope` value (RFC 6749 3.3), in order, once each."""
    seen: list[str] = []
    for name in (scope or "").split():
        if name not in seen:
            seen.append(name)
    return seen
