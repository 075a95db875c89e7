"""The company dashboard (`/dashboard/`): member accounts, roles, sessions, and its pages.

`accounts` holds the service (sign-in with argon2id hashes, lockout, DB sessions, invitations and
password resets), `permissions` the role table that `docs/dashboard.md` documents, `mail` the
messages sent by email link.
"""
