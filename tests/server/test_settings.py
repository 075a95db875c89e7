"""Settings from the environment, the generated secret, the database and the blob store."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
from sqlalchemy import text

from server.blobs import BlobNotFound, InvalidBlobKey, LocalBlobStore
from server.db import Database, DatabaseUrlError, normalize_url
from server.settings import DEFAULT_MAX_BODY_BYTES, SECRET_FILE_NAME, Settings, SettingsError


def test_defaults_work_out_of_the_box(tmp_path: Path) -> None:
    settings = Settings.from_env({}, data_dir=tmp_path)
    assert settings.data_dir == tmp_path.resolve()
    assert settings.database_url == f"sqlite:///{tmp_path.resolve() / 'inspectlang.sqlite3'}"
    assert settings.public_url == "http://127.0.0.1:8000"
    assert settings.env == "development"
    assert settings.allow_loopback_webhooks is False
    assert settings.max_body_bytes == DEFAULT_MAX_BODY_BYTES
    assert settings.worker is True
    assert len(settings.secret) >= 32


def test_data_dir_defaults_to_dot_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    settings = Settings.from_env({})
    assert settings.data_dir == tmp_path.resolve() / "data"


def test_environment_variables_are_read(tmp_path: Path) -> None:
    environ = {
        "DATABASE_URL": "postgresql://u@db:5432/x",
        "INSPECTLANG_DATA_DIR": str(tmp_path / "d"),
        "INSPECTLANG_PUBLIC_URL": "https://inspect.example.com/",
        "INSPECTLANG_SECRET": "s" * 40,
        "INSPECTLANG_ENV": "production",
        "INSPECTLANG_ALLOW_LOOPBACK_WEBHOOKS": "true",
        "INSPECTLANG_MAX_BODY_BYTES": "1234",
        "INSPECTLANG_WORKER": "0",
    }
    settings = Settings.from_env(environ)
    assert settings.database_url == "postgresql://u@db:5432/x"
    assert settings.data_dir == (tmp_path / "d").resolve()
    assert settings.public_base == "https://inspect.example.com"
    assert settings.secret == "s" * 40
    assert settings.env == "production"
    assert settings.allow_loopback_webhooks is True
    assert settings.max_body_bytes == 1234
    assert settings.worker is False
    assert not (tmp_path / "d" / SECRET_FILE_NAME).exists()


def test_overrides_win_over_the_environment(tmp_path: Path) -> None:
    environ = {"DATABASE_URL": "sqlite:////nowhere.db", "INSPECTLANG_WORKER": "1"}
    settings = Settings.from_env(
        environ, data_dir=tmp_path, database_url="sqlite:////else.db", worker=False
    )
    assert settings.database_url == "sqlite:////else.db"
    assert settings.worker is False
    # None means "not given": the environment value stays.
    assert Settings.from_env(environ, database_url=None).database_url == "sqlite:////nowhere.db"


def test_secret_is_generated_once_and_kept(tmp_path: Path) -> None:
    first = Settings.from_env({}, data_dir=tmp_path).secret
    second = Settings.from_env({}, data_dir=tmp_path).secret
    assert first == second
    path = tmp_path / SECRET_FILE_NAME
    assert path.read_text() == first
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert Settings.from_env({}, data_dir=tmp_path / "other").secret != first


def test_secret_is_not_in_the_repr(tmp_path: Path) -> None:
    settings = Settings.from_env({"INSPECTLANG_SECRET": "do-not-print-me" * 3}, data_dir=tmp_path)
    assert "do-not-print-me" not in repr(settings)


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("INSPECTLANG_WORKER", "maybe", "boolean"),
        ("INSPECTLANG_ALLOW_LOOPBACK_WEBHOOKS", "2", "boolean"),
        ("INSPECTLANG_MAX_BODY_BYTES", "ten", "integer"),
        ("INSPECTLANG_MAX_BODY_BYTES", "-5", "positive"),
        ("INSPECTLANG_ENV", "staging", "development"),
        ("INSPECTLANG_TIME_ZONE", "Mars/Olympus", "time zone"),
    ],
)
def test_bad_values_are_refused_by_name(
    tmp_path: Path, name: str, value: str, message: str
) -> None:
    with pytest.raises(SettingsError) as caught:
        Settings.from_env({name: value, "INSPECTLANG_SECRET": "x" * 40}, data_dir=tmp_path)
    assert name in str(caught.value) or message in str(caught.value)
    assert message in str(caught.value)


@pytest.mark.parametrize(
    ("url", "driver"),
    [
        ("postgresql://u@h/db", "postgresql+psycopg"),
        ("postgres://u@h/db", "postgresql+psycopg"),
        ("postgresql+psycopg://u@h/db", "postgresql+psycopg"),
        ("sqlite:////tmp/x.sqlite3", "sqlite"),
    ],
)
def test_database_urls_are_normalized(url: str, driver: str) -> None:
    assert normalize_url(url).drivername == driver


def test_unsupported_database_is_refused() -> None:
    with pytest.raises(DatabaseUrlError):
        Database("mysql://u@h/db")


def test_sqlite_runs_in_wal_with_full_sync(tmp_path: Path) -> None:
    database = Database(f"sqlite:///{tmp_path / 'sub' / 'x.sqlite3'}")
    try:
        with database.engine.connect() as connection:
            assert connection.execute(text("PRAGMA journal_mode")).scalar() == "wal"
            assert connection.execute(text("PRAGMA synchronous")).scalar() == 2  # FULL
            assert connection.execute(text("PRAGMA foreign_keys")).scalar() == 1
            assert connection.execute(text("PRAGMA busy_timeout")).scalar() >= 1000
    finally:
        database.dispose()
    assert database.dialect == "sqlite"


def test_create_all_makes_the_foundation_tables(db: Database) -> None:
    from sqlalchemy import inspect

    db.create_all()  # twice is fine
    tables = set(inspect(db.engine).get_table_names())
    assert {"companies", "members", "api_keys", "idempotency_records"} <= tables


def test_immediate_session_commits_and_rolls_back(db: Database) -> None:
    from server.tables import Company

    with db.session(immediate=True) as session:
        company = Company(name="Immediate")
        session.add(company)
        session.commit()
    with db.session(immediate=True) as session:
        stored = session.get(Company, company.id)
        assert stored is not None
        stored.name = "Changed but rolled back"
        session.add(stored)
        session.flush()
        session.rollback()
    with db.session() as session:
        again = session.get(Company, company.id)
        assert again is not None and again.name == "Immediate"


def test_blob_store_round_trip(tmp_path: Path) -> None:
    store = LocalBlobStore(tmp_path)
    store.put("images/c1/a.jpg", b"first")
    store.put("images/c1/a.jpg", b"second")
    assert store.get("images/c1/a.jpg") == b"second"
    assert store.exists("images/c1/a.jpg")
    assert not list((tmp_path / "blobs" / "images" / "c1").glob("*.tmp"))
    store.delete("images/c1/a.jpg")
    store.delete("images/c1/a.jpg")
    assert not store.exists("images/c1/a.jpg")
    with pytest.raises(BlobNotFound):
        store.get("images/c1/a.jpg")


@pytest.mark.parametrize(
    "bad_key", ["", "../x", "a/../../b", "/abs", "a//b", ".hidden", "a/./b", "a\\b", "x" * 600]
)
def test_blob_store_refuses_escaping_keys(tmp_path: Path, bad_key: str) -> None:
    store = LocalBlobStore(tmp_path)
    with pytest.raises(InvalidBlobKey):
        store.put(bad_key, b"x")


def test_the_company_time_zone_is_one_rule_for_every_moment(tmp_path: Path) -> None:
    """Pages, the PDF and the exports show a moment in the company's zone, with its name."""
    from datetime import datetime
    from zoneinfo import ZoneInfo

    from babel import dates

    from server.web.moments import format_moment

    settings = Settings.from_env(
        {"INSPECTLANG_TIME_ZONE": "America/Sao_Paulo", "INSPECTLANG_SECRET": "x" * 40},
        data_dir=tmp_path,
    )
    moment = "2026-11-20T13:00:00Z"
    local = datetime(2026, 11, 20, 10, tzinfo=ZoneInfo("America/Sao_Paulo"))
    clock = dates.format_datetime(local, "medium", tzinfo=local.tzinfo, locale="pt_BR")
    assert format_moment(moment, "pt_BR", settings.time_zone) == f"{clock} (Horário de Brasília)"
    assert format_moment(moment, "en_US", None).endswith("(UTC)")
    assert format_moment("not a moment", "en_US", "UTC") == "not a moment"
