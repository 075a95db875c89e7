"""server: the HTTP service (Litestar), storage (SQLModel), background jobs and reports."""

from __future__ import annotations
