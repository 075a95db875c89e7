"""Roles and what each may do in the dashboard; `docs/dashboard.md` shows this table and a test
checks every cell of it against the pages.

Beyond the table, two rules protect owners: only an owner may make someone an owner or change
or remove an owner, and the last owner of a company cannot be demoted or removed.
"""

from __future__ import annotations

from typing import Literal

Role = Literal["owner", "admin", "editor", "viewer", "reviewer"]
ROLES: tuple[Role, ...] = ("owner", "admin", "editor", "viewer", "reviewer")
#: Roles that decide what a machine could not (docs/review.md); `reviewer` does only that.
DECIDERS: frozenset[Role] = frozenset({"owner", "admin", "editor", "reviewer"})

#: action -> the roles allowed to do it. Keys are stable names the pages check.
PERMISSIONS: dict[str, frozenset[Role]] = {
    "inspections.view": frozenset({"owner", "admin", "editor", "viewer"}),
    "inspections.share": frozenset({"owner", "admin", "editor"}),
    "templates.view": frozenset({"owner", "admin", "editor", "viewer"}),
    "templates.simulate": frozenset({"owner", "admin", "editor", "viewer"}),
    "templates.edit": frozenset({"owner", "admin", "editor"}),
    "developers.view": frozenset({"owner", "admin"}),
    "developers.revoke_key": frozenset({"owner", "admin"}),
    "developers.webhooks": frozenset({"owner", "admin"}),
    "developers.apps": frozenset({"owner", "admin"}),
    "authorizations.view": frozenset(ROLES),
    "authorizations.manage_company": frozenset({"owner"}),
    "members.view": frozenset({"owner", "admin", "editor", "viewer"}),
    "members.manage": frozenset({"owner", "admin"}),
    "members.manage_owners": frozenset({"owner"}),
    "review.view": frozenset(ROLES),
    "review.decide": DECIDERS,
    "review.retake": DECIDERS,
    "review.export": DECIDERS,
}


def allowed(role: str, action: str) -> bool:
    """Whether `role` may do `action`; an unknown action or role is refused."""
    roles = PERMISSIONS.get(action)
    return roles is not None and role in roles
