"""The Jinja2 environment of every page, through Litestar's template support.

Each page area registers its template folder under a prefix (`TemplateFolders`): templates are
named `web/base.html`, `consumer/welcome.html`, `dashboard/...`. Autoescaping is on, undefined
names are errors, and `{% trans %}`/`_()` translate through the page's locale (`page()` puts
that locale's catalog in the context). `static('web/base.css')` gives an asset's URL with a
content hash, so assets can be cached for a long time and still change on deploy.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from datetime import datetime
from functools import cache
from pathlib import Path
from typing import Any

from babel import numbers as babel_numbers
from jinja2 import Environment, FileSystemLoader, PrefixLoader, StrictUndefined, pass_context
from jinja2.runtime import Context
from litestar.plugins.jinja import JinjaTemplateEngine
from litestar.response import Template
from litestar.template.config import TemplateConfig

from server.web import i18n, moments

WEB_TEMPLATES = Path(__file__).with_name("templates")
WEB_STATIC = Path(__file__).with_name("static")
#: URL prefix of the static assets; `/static/<area>/<file>`.
STATIC_PREFIX = "/static"

#: Template folders by prefix; page areas add theirs with `register_templates`.
TemplateFolders = Mapping[str, Path]


@pass_context
def _gettext(context: Context, message: str) -> str:
    return context["translations"].gettext(message)  # type: ignore[no-any-return]


@pass_context
def _when(
    context: Context, moment: datetime | str | None, width: str = "medium", zone: bool = True
) -> str:
    """A moment in the page's locale and the company's time zone (`timezone` in the context,
    else UTC), followed by the zone's name (`server.web.moments`): `25 nov 2026, 14:03:07 (hora
    de Argentina)` in es_AR; `zone=False` leaves the name out. "" for None."""
    return moments.format_moment(
        moment, context["locale"], context.get("timezone"), width, with_zone=zone
    )


@pass_context
def _number(context: Context, value: Any, digits: int = 2) -> str:
    """A number in the page's locale, at most `digits` decimals (`99.98`, `1.234,5` in es_AR);
    anything else as text."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    pattern = "#,##0" + ("." + "#" * digits if digits else "")
    return babel_numbers.format_decimal(value, format=pattern, locale=context["locale"])


@pass_context
def _ngettext(context: Context, singular: str, plural: str, count: int) -> str:
    return context["translations"].ngettext(singular, plural, count)  # type: ignore[no-any-return]


@pass_context
def _pgettext(context: Context, message_context: str, message: str) -> str:
    """A message whose translation depends on where it is (`Why` as a heading of purpose on the
    consumer's welcome page, `Por qué` as a review column): catalogs of every area are merged,
    so the same English word with two meanings needs a context."""
    return context["translations"].pgettext(message_context, message)  # type: ignore[no-any-return]


class StaticAssets:
    """Resolves `area/file` to `/static/area/file?v=<hash>` over the registered folders."""

    def __init__(self, folders: Mapping[str, Path]) -> None:
        self.folders = dict(folders)

    def path_of(self, name: str) -> Path:
        area, _, rest = name.partition("/")
        folder = self.folders.get(area)
        if folder is None or not rest:
            raise LookupError(f"no static area for {name!r}")
        path = (folder / rest).resolve()
        if folder.resolve() not in path.parents or not path.is_file():
            raise LookupError(f"no static asset {name!r}")
        return path

    def url(self, name: str) -> str:
        return f"{STATIC_PREFIX}/{name}?v={_digest(self.path_of(name))}"


@cache
def _digest_cached(path: Path, mtime_ns: int) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:12]


def _digest(path: Path) -> str:
    return _digest_cached(path, path.stat().st_mtime_ns)


def environment(templates: TemplateFolders, assets: StaticAssets) -> Environment:
    env = Environment(
        loader=PrefixLoader(
            {prefix: FileSystemLoader(str(path)) for prefix, path in templates.items()}
        ),
        autoescape=True,
        undefined=StrictUndefined,
        extensions=["jinja2.ext.i18n"],
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.install_gettext_callables(  # type: ignore[attr-defined]
        _gettext, _ngettext, newstyle=True, pgettext=_pgettext
    )
    env.globals["static"] = assets.url
    env.globals["when"] = _when
    env.globals["number"] = _number
    return env


def template_config(templates: TemplateFolders, assets: StaticAssets) -> TemplateConfig[Any]:
    """Litestar's template configuration over our environment."""
    engine = JinjaTemplateEngine.from_environment(environment(templates, assets))
    return TemplateConfig(instance=engine)


def page(
    template_name: str,
    *,
    locale: str,
    context: Mapping[str, Any] | None = None,
    status_code: int = 200,
    headers: Mapping[str, str] | None = None,
) -> Template:
    """A page in `locale` (falls back to en_US): the template gets `translations`, `locale`,
    `lang` (BCP 47, for `<html lang>`) besides `context`."""
    chosen = i18n.choose_locale(locale)
    return Template(
        template_name=template_name,
        context={
            **(context or {}),
            "translations": i18n.translations(chosen),
            "locale": chosen,
            "lang": chosen.replace("_", "-"),
        },
        status_code=status_code,
        headers=dict(headers or {}),
        media_type="text/html; charset=utf-8",
    )


def gettext(locale: str, message: str) -> str:
    """`message` in `locale`, for texts made in Python (flash messages, errors)."""
    return i18n.translations(i18n.choose_locale(locale)).gettext(message)
