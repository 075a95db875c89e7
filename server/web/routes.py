"""What the app mounts for the web pages: each page area's templates, assets and routes.

A page area (`web` itself, `consumer`, `dashboard`) is a `PageArea`: its template folder (names
prefixed with the area: `consumer/welcome.html`), its static folder (served at
`/static/<area>/`) and its page routers. `mount(settings, areas)` gives the app the template
configuration, the CSRF configuration and every route.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from litestar.config.csrf import CSRFConfig
from litestar.datastructures import CacheControlHeader
from litestar.static_files import create_static_files_router
from litestar.template.config import TemplateConfig

from server.deps import PUBLIC_OPT
from server.settings import Settings
from server.web.security import csrf_config
from server.web.templating import (
    STATIC_PREFIX,
    WEB_STATIC,
    WEB_TEMPLATES,
    StaticAssets,
    template_config,
)


@dataclass(frozen=True)
class PageArea:
    """One area of pages: its name (template and asset prefix), folders and routes."""

    name: str
    templates: Path | None = None
    static: Path | None = None
    routes: list[Any] = field(default_factory=list)


#: The shared layer itself: `web/base.html`, `web/message.html`, `/static/web/base.css`.
WEB_AREA = PageArea(name="web", templates=WEB_TEMPLATES, static=WEB_STATIC)


@dataclass(frozen=True)
class MountedPages:
    template_config: TemplateConfig[Any]
    csrf_config: CSRFConfig
    route_handlers: list[Any]


def static_routers(folders: dict[str, Path]) -> list[Any]:
    """One static router per area at `/static/<area>/`. URLs carry a content hash
    (`static()` in templates), so a year of caching is safe."""
    return [
        create_static_files_router(
            path=f"{STATIC_PREFIX}/{area}",
            directories=[folder],
            opt={PUBLIC_OPT: True},
            include_in_schema=False,
            cache_control=CacheControlHeader(max_age=31_536_000, public=True),
            send_as_attachment=False,
            name=f"static-{area}",
        )
        for area, folder in folders.items()
    ]


def mount(settings: Settings, areas: Sequence[PageArea]) -> MountedPages:
    names = [area.name for area in areas]
    if len(set(names)) != len(names):
        raise ValueError(f"page areas must have distinct names: {names}")
    templates = {area.name: area.templates for area in areas if area.templates is not None}
    statics = {area.name: area.static for area in areas if area.static is not None}
    return MountedPages(
        template_config=template_config(templates, StaticAssets(statics)),
        csrf_config=csrf_config(settings),
        route_handlers=[*static_routers(statics), *(r for area in areas for r in area.routes)],
    )
