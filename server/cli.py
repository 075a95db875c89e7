"""The server's commands: `serve`, `worker` and `admin ...` (registered into `inspectlang`).

Every command that opens a database migrates it first in development (`server.migrate`); in
production an outdated schema stops the command with the `admin migrate` command to run.
Admin commands print
ONE JSON object on stdout; on failure they print `{"code", "description"}` on stderr and exit 1.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

from server.errors import SchemaOutdated, ServerError
from server.settings import Settings, SettingsError
from server.urlsafety import check_provider_urls


def register(subparsers: Any) -> None:
    """Add `serve`, `worker` and `admin` to the `inspectlang` command."""
    serve = subparsers.add_parser("serve", help="run the HTTP service (one process)")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    _add_storage_options(serve)
    serve.add_argument(
        "--no-worker", action="store_true", help="do not run the job worker in this process"
    )
    serve.add_argument(
        "--demo", action="store_true", help="create (once) a demo company and print its keys"
    )
    serve.set_defaults(handler=run_serve)

    worker = subparsers.add_parser("worker", help="run background jobs (reports, callbacks)")
    _add_storage_options(worker)
    worker.add_argument(
        "--metrics-port",
        type=int,
        default=int(os.environ.get("INSPECTLANG_METRICS_PORT") or 0) or None,
        help="serve this worker's Prometheus metrics at http://HOST:PORT/metrics",
    )
    worker.add_argument("--metrics-host", default="127.0.0.1")
    worker.set_defaults(handler=run_worker)

    outbox = subparsers.add_parser(
        "outbox", help="print the development outbox: messages kept instead of sent"
    )
    outbox.add_argument("--limit", type=int, default=20, help="newest messages to print")
    outbox.add_argument("--json", action="store_true", help="print them as a JSON list")
    _add_storage_options(outbox)
    outbox.set_defaults(handler=run_outbox)

    admin = subparsers.add_parser("admin", help="manage companies, members and keys")
    commands = admin.add_subparsers(dest="admin_command", metavar="ACTION", required=True)

    create = commands.add_parser("create-company", help="create a company with test/live keys")
    create.add_argument("name")
    create.add_argument("--member", action="append", default=[], metavar="INTERNAL_ID")
    _add_storage_options(create)
    create.set_defaults(handler=run_create_company)

    revoke = commands.add_parser("revoke-key", help="revoke a key at once and issue a new one")
    revoke.add_argument("company_id")
    revoke.add_argument("--mode", choices=["test", "live"], required=True)
    _add_storage_options(revoke)
    revoke.set_defaults(handler=run_revoke_key)

    member = commands.add_parser("add-member", help="add a member (producer internalId)")
    member.add_argument("company_id")
    member.add_argument("internal_id")
    member.add_argument("--name")
    member.add_argument("--email")
    _add_storage_options(member)
    member.set_defaults(handler=run_add_member)

    migrate = commands.add_parser(
        "migrate", help="upgrade the database schema to this version's (back it up first)"
    )
    _add_storage_options(migrate)
    migrate.set_defaults(handler=run_migrate)

    user = commands.add_parser(
        "create-user",
        help="create a dashboard account (the password is read from standard input)",
    )
    user.add_argument("company_id")
    user.add_argument("email")
    user.add_argument("--role", choices=["owner", "admin", "editor", "viewer"], required=True)
    _add_storage_options(user)
    user.set_defaults(handler=run_create_user)

    rotate = commands.add_parser("rotate-webhook-secret", help="new webhook signing secret")
    rotate.add_argument("company_id")
    _add_storage_options(rotate)
    rotate.set_defaults(handler=run_rotate_webhook_secret)


def _add_storage_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--database-url", help="SQLAlchemy URL (default: DATABASE_URL, else SQLite in the data dir)"
    )
    parser.add_argument(
        "--data-dir", help="data directory (default: INSPECTLANG_DATA_DIR or ./data)"
    )


def _settings(args: argparse.Namespace, **overrides: Any) -> Settings:
    return Settings.from_env(
        data_dir=getattr(args, "data_dir", None),
        database_url=getattr(args, "database_url", None),
        **overrides,
    )


class DatabaseInUse(ServerError):
    """The SQLite file is held by a running `serve` or `worker` alone (`unix-excl`)."""


def _refuse_if_held(settings: Settings) -> None:
    """`DatabaseInUse` at once, instead of waiting out SQLite's 30 s busy timeout and failing,
    when a running service holds the SQLite file alone (`Settings.sqlite_exclusive`)."""
    import sqlite3

    from sqlalchemy.engine import make_url

    url = make_url(settings.database_url)
    if url.get_backend_name() != "sqlite" or url.database in (None, "", ":memory:"):
        return
    path = Path(str(url.database)).expanduser()
    if not path.is_file():
        return
    try:
        with contextlib.closing(sqlite3.connect(path, timeout=0.5)) as probe:
            probe.execute("PRAGMA schema_version").fetchone()
    except sqlite3.OperationalError as error:
        if "locked" not in str(error):
            raise
        raise DatabaseInUse(
            f"{path} is held by a running `inspectlang serve` or `worker`, which keeps its SQLite "
            "file alone (INSPECTLANG_SQLITE_EXCLUSIVE): read the outbox at the service's "
            "/dev/outbox page, or stop the service for this command (docs/operations.md)."
        ) from None


def _open_database(settings: Settings, *, long_running: bool = False) -> Any:
    """The database, migrated in development; `SchemaOutdated` on an old schema in production.
    A long-running process (`serve`, `worker`) holds a SQLite file alone
    (`Settings.sqlite_exclusive`)."""
    from server import migrate
    from server.db import Database

    exclusive = long_running and settings.sqlite_exclusive
    _refuse_if_held(settings)
    database = Database(settings.database_url, exclusive=exclusive)
    try:
        migrate.prepare(database, settings.env)
    except BaseException:
        database.dispose()
        raise
    return database


def _open_existing_database(settings: Settings) -> Any:
    """The database for a read-only command: never created, never migrated (None when a
    SQLite file is not there yet); `SchemaOutdated` when it is not at the code's revision."""
    from sqlalchemy.engine import make_url

    from server import migrate
    from server.db import Database

    url = make_url(settings.database_url)
    sqlite_file = url.get_backend_name() == "sqlite" and url.database not in (None, "", ":memory:")
    if sqlite_file and not Path(str(url.database)).is_file():
        return None
    _refuse_if_held(settings)
    database = Database(settings.database_url)
    try:
        if migrate.current(database) != migrate.head():
            raise SchemaOutdated(
                f"The database at {settings.database_url} is at revision "
                f"{migrate.current(database) or 'none'}, not {migrate.head()}: start the service "
                "once (it migrates in development) or run `inspectlang admin migrate`."
            )
    except BaseException:
        database.dispose()
        raise
    return database


def _fail(code: str, description: str) -> int:
    print(json.dumps({"code": code, "description": description}), file=sys.stderr)
    return 1


def _print(data: Any) -> int:
    print(json.dumps(data))
    return 0


# --- serve / worker ------------------------------------------------------------------------------


def run_serve(args: argparse.Namespace) -> int:
    import uvicorn

    from server.app import create_app
    from server.demo import describe, ensure_demo_company

    overrides: dict[str, Any] = {}
    if args.no_worker:
        overrides["worker"] = False
    if not os.environ.get("INSPECTLANG_PUBLIC_URL"):
        # Links (magic links, image sources, report URLs) must point at where this process
        # listens unless a public URL was configured explicitly.
        host = "127.0.0.1" if args.host in ("0.0.0.0", "::", "") else args.host
        overrides["public_url"] = f"http://{host}:{args.port}"
    try:
        settings = _settings(args, **overrides)
        check_provider_urls(settings)
    except SettingsError as error:
        return _fail("invalid_settings", str(error))
    try:
        database = _open_database(settings, long_running=True)
    except SchemaOutdated as error:
        return _fail("schema_outdated", str(error))
    except DatabaseInUse as error:
        return _fail("database_in_use", str(error))
    if args.demo:
        keys = ensure_demo_company(database, settings.data_dir)
        print(describe(keys, f"http://{args.host}:{args.port}"), flush=True)
    print(vision_status(settings), flush=True)
    app = create_app(settings, db=database)
    # While serving, uvicorn handles SIGTERM/SIGINT: it stops accepting, finishes requests, runs
    # the app's shutdown hooks (which stop the in-process worker), restores this handler and
    # re-raises the signal, so the process ends with status 0 rather than "killed by SIGTERM".
    signal.signal(signal.SIGTERM, _exit_cleanly)
    try:
        uvicorn.run(app, host=args.host, port=args.port, workers=1, ws="none", log_level="info")
    finally:
        database.dispose()
    return 0


def vision_status(settings: Settings) -> str:
    """One line at start-up: which validations this process's worker analyses itself."""
    from runtime import vision

    providers = sorted(settings.validation_providers)
    outside = f"; outside providers: {', '.join(providers)}" if providers else ""
    if not settings.vision:
        return f"Photo analysis: off (INSPECTLANG_VISION=0){outside}."
    if not vision.available():
        return (
            "Photo analysis: the vision extra is not installed (pip install "
            "'inspectlang[vision]'): plate, face, identity-document, serial-number and color "
            f"validations wait for results posted to the API{outside}."
        )
    names = ", ".join(sorted(vision.load_analyzers()))
    return f"Photo analysis: on, in the worker ({names}){outside}; docs/vision.md."


def _exit_cleanly(signum: int, frame: Any) -> None:
    raise SystemExit(0)


def run_worker(args: argparse.Namespace) -> int:
    try:
        settings = _settings(args)
        check_provider_urls(settings)
    except SettingsError as error:
        return _fail("invalid_settings", str(error))
    from server import log_redaction
    from server.app import worker_jobs
    from server.jobs import run_worker

    log_redaction.install()
    try:
        database = _open_database(settings, long_running=True)
    except SchemaOutdated as error:
        return _fail("schema_outdated", str(error))
    except DatabaseInUse as error:
        return _fail("database_in_use", str(error))
    print(vision_status(settings), flush=True)
    if args.metrics_port:
        from prometheus_client import start_http_server

        start_http_server(args.metrics_port, addr=args.metrics_host)
    try:
        run_worker(database, settings, registry=worker_jobs(settings))
    finally:
        database.dispose()
    return 0


# --- admin ---------------------------------------------------------------------------------------


def run_migrate(args: argparse.Namespace) -> int:
    """Upgrade the schema to the newest revision; prints `{"from", "to"}` (revisions)."""
    from server import migrate
    from server.db import Database

    try:
        settings = _settings(args)
        _refuse_if_held(settings)
    except SettingsError as error:
        return _fail("invalid_settings", str(error))
    except DatabaseInUse as error:
        return _fail("database_in_use", str(error))
    database = Database(settings.database_url)
    try:
        before, after = migrate.upgrade(database)
    finally:
        database.dispose()
    return _print({"from": before, "to": after})


def _admin(args: argparse.Namespace, action: Any) -> int:
    from server.auth import AdminError

    try:
        settings = _settings(args)
        database = _open_database(settings)
    except SettingsError as error:
        return _fail("invalid_settings", str(error))
    except SchemaOutdated as error:
        return _fail("schema_outdated", str(error))
    except DatabaseInUse as error:
        return _fail("database_in_use", str(error))
    try:
        return _print(action(database))
    except AdminError as error:
        return _fail(error.code, str(error))
    finally:
        database.dispose()


def run_create_company(args: argparse.Namespace) -> int:
    from server.auth import create_company

    return _admin(args, lambda database: create_company(database, args.name, list(args.member)))


def run_revoke_key(args: argparse.Namespace) -> int:
    from server.auth import revoke_key

    def action(database: Any) -> dict[str, str]:
        key = revoke_key(database, args.company_id, args.mode)
        return {"companyId": args.company_id, "mode": args.mode, "key": key}

    return _admin(args, action)


def run_add_member(args: argparse.Namespace) -> int:
    from server.auth import add_member

    return _admin(
        args,
        lambda database: add_member(
            database, args.company_id, args.internal_id, name=args.name, email=args.email
        ),
    )


def run_rotate_webhook_secret(args: argparse.Namespace) -> int:
    from server.auth import AdminError, company_exists
    from server.webhooks import service as webhooks

    def action(database: Any) -> dict[str, Any]:
        if not company_exists(database, args.company_id):
            raise AdminError("company_not_found", f"no company with id {args.company_id!r}")
        secret = webhooks.rotate_secret(database, args.company_id)
        return {"companyId": args.company_id, "webhookSecret": secret}

    return _admin(args, action)


def run_outbox(args: argparse.Namespace) -> int:
    """Print the messages the development outbox kept, newest first."""
    from server.delivery.service import outbox_messages

    # Read-only: no secret file is written and no database is created or migrated.
    settings = _settings(args, secret="unused by read-only commands")
    try:
        database = _open_existing_database(settings)
    except SchemaOutdated as error:
        return _fail("schema_outdated", str(error))
    except DatabaseInUse as error:
        return _fail("database_in_use", str(error))
    if database is None:
        return _fail(
            "no_database",
            f"No database at {settings.database_url}: run this where the service keeps its data "
            "(--data-dir, --database-url, or the directory where `make run` was started).",
        )
    try:
        messages = outbox_messages(database, limit=max(1, args.limit))
    finally:
        database.dispose()
    if args.json:
        listed = [
            {
                "deliveryId": m.delivery_id,
                "channel": m.channel,
                "to": m.to,
                "subject": m.subject,
                "text": m.text,
                "createdAt": m.created_at.isoformat(),
            }
            for m in messages
        ]
        print(json.dumps(listed, ensure_ascii=False, indent=2))
        return 0
    if not messages:
        print("The outbox is empty.")
    for m in messages:
        print(f"--- {m.created_at:%Y-%m-%d %H:%M:%S} UTC  {m.channel} to {m.to}")
        print(f"Subject: {m.subject}\n")
        print(m.text.rstrip() + "\n")
    return 0


def run_create_user(args: argparse.Namespace) -> int:
    """The password is the first line of standard input (never an argument: those show up in
    `ps` and shell history); prompted for without echo when stdin is a terminal."""
    from server.dashboard.accounts import create_account

    if sys.stdin.isatty():
        import getpass

        password = getpass.getpass("Password: ")
    else:
        password = sys.stdin.readline().rstrip("\r\n")
    return _admin(
        args,
        lambda database: create_account(database, args.company_id, args.email, args.role, password),
    )
