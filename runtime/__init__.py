"""runtime: runs inspections from compiled template manifests, with no server."""

from __future__ import annotations
