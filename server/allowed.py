"""The methods a path answers, for `Allow` headers (OPTIONS answers and 405 errors).

Litestar answers OPTIONS from one route, so when two routes share a path shape
(`POST /v1/inspection/{inspection_type}` and `GET, PUT /v1/inspection/{inspection_id}`) its
`Allow` left out the other route's methods, and a 405 came without `Allow` at all (RFC 9110
requires it). Here every route whose template matches the path the way Litestar's router picks
one (a literal segment wins over a parameter, segment by segment) contributes its methods.
"""

from __future__ import annotations

from litestar import Litestar
from litestar.routes import HTTPRoute


def _segments(path: str) -> list[str]:
    return [segment for segment in path.split("/") if segment]


def _shape(route_path: str) -> list[str | None]:
    """A route template's segments, None for each path parameter."""
    return [None if segment.startswith("{") else segment for segment in _segments(route_path)]


def allowed_methods(app: Litestar, path: str) -> list[str]:
    """The methods of the routes the router would consider for `path`, OPTIONS included; an
    empty list when no route matches (routes with a `{name:path}` parameter, which spans
    segments, are left to Litestar)."""
    segments = _segments(path)
    candidates = [
        (shape, route)
        for route in app.routes
        if isinstance(route, HTTPRoute)
        and ":path}" not in route.path
        and len(shape := _shape(route.path)) == len(segments)
    ]
    for index, segment in enumerate(segments):
        literal = [candidate for candidate in candidates if candidate[0][index] == segment]
        candidates = literal or [c for c in candidates if c[0][index] is None]
    methods: set[str] = set()
    for _, route in candidates:
        methods.update(str(method) for method in route.methods)
    if methods:
        methods.add("OPTIONS")
    return sorted(methods)


def allow_header(app: Litestar, path: str) -> dict[str, str]:
    """`{"Allow": ...}` for `path`, or nothing when no route matches it."""
    methods = allowed_methods(app, path)
    return {"Allow": ", ".join(methods)} if methods else {}
