"""The shared layer of the web pages (the consumer's flow, the dashboard).

- `templating`: one Jinja2 environment through Litestar's template support; each page domain
  registers its template folder under a prefix (`web/`, `consumer/`, `dashboard/`).
- `i18n`: UI message catalogs (Babel, gettext `.po`/`.mo`) per locale, one catalog per domain.
- `security`: the Content-Security-Policy and other headers of every page, Litestar's CSRF
  protection (the API under `/v1` is excluded: it is keyed by `x-api-key`, never by a cookie).
- `sessions`: browser sessions stored in the database (any API process accepts them).
- `routes`: the static assets of each domain, served by the app from the package.
"""
