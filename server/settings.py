"""Server settings, read from environment variables, with defaults that work out of the box.

`Settings.from_env()` is the only place the service reads its environment; everything else gets a
`Settings` object passed in (tests build one directly). pydantic-settings reads the variables:
each field `x` comes from `INSPECTLANG_X` (the database's URL from `DATABASE_URL`), typed and
bounded by its annotation; an empty variable counts as unset. No `.env` file is read on purpose.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import AliasChoices, Field, ValidationError, field_validator, model_validator
from pydantic_settings import (
    BaseSettings,
    EnvSettingsSource,
    NoDecode,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)
from pydantic_settings.sources.utils import parse_env_vars

from server.errors import ServerError

#: Default request body limit: enough for a few high resolution photos in one multipart upload.
DEFAULT_MAX_BODY_BYTES = 20 * 1024 * 1024
#: Name of the file, inside the data directory, holding the generated server secret.
SECRET_FILE_NAME = "server-secret"
#: Prefix of every variable but `DATABASE_URL`.
ENV_PREFIX = "INSPECTLANG_"

Environment = Literal["development", "production"]


def _is_zone(name: str) -> bool:
    """Whether `name` is a time zone this machine knows (`UTC` or an IANA name)."""
    if name.upper() == "UTC":
        return True
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return False
    return True


class SettingsError(ServerError, ValueError):
    """An environment variable holds a value the server cannot use."""


class Settings(BaseSettings):
    """Everything the server needs to know about its surroundings."""

    model_config = SettingsConfigDict(
        frozen=True, env_prefix=ENV_PREFIX, env_ignore_empty=True, extra="ignore"
    )

    #: SQLAlchemy URL; `sqlite:///<data_dir>/inspectlang.sqlite3` when unset.
    database_url: str = Field(
        default="", validation_alias=AliasChoices("database_url", "DATABASE_URL")
    )
    #: Directory for the SQLite file, blobs (images, PDFs), the secret and the demo keys.
    data_dir: Path = Path("data")
    #: Base URL clients use to reach the service (links in responses, report URLs).
    public_url: str = "http://127.0.0.1:8000"
    #: Server secret for HMAC tokens and signed links. Never logged.
    #: When none is given, one is generated once and kept in the data directory, so tokens and
    #: signed links stay valid across restarts.
    secret: str = Field(default="", repr=False)
    env: Environment = "development"
    #: Allow webhook callbacks to loopback/private addresses (development and tests only).
    allow_loopback_webhooks: bool = False
    #: Allow outside analysis providers (`validation_providers`) on loopback addresses
    #: (development and tests only): otherwise a provider URL must resolve to public addresses,
    #: checked at start-up and before each call (`server.urlsafety.check_provider_urls`).
    allow_loopback_providers: bool = False
    #: Largest request body accepted, in bytes; larger ones get 413 `body_too_large`.
    max_body_bytes: int = Field(default=DEFAULT_MAX_BODY_BYTES, ge=1)
    #: Run the background job worker inside the server process.
    worker: bool = True
    #: SQLite: `serve` and `worker` hold the database file for their process alone, with the
    #: WAL index in memory instead of a mapped `-shm` file (`server.db.Database`): a data
    #: directory made read-only under them answers 503 instead of killing them with SIGBUS.
    #: Turn it off only to let another process use the file while one runs (a benchmark).
    sqlite_exclusive: bool = True
    #: Seconds between the worker's sweeps that block inspections past their expiry (0: never).
    expiry_sweep_seconds: int = Field(default=60, ge=0)
    #: Where images and PDFs are kept (`server.blobs.open_store`): `file:///dir` (default:
    #: `<data_dir>/blobs`), `s3://bucket/prefix`, or `postgresql` (chunked rows in the database).
    blob_url: str | None = None
    #: S3 endpoint (an S3-compatible server; None: AWS's), region and credentials (None: boto3's
    #: own chain: environment, shared files, instance roles).
    s3_endpoint_url: str | None = None
    s3_region: str | None = None
    s3_access_key_id: str | None = Field(default=None, repr=False)
    s3_secret_access_key: str | None = Field(default=None, repr=False)
    #: Requests allowed per API key per window (`server.ratelimit`; 0: no limit), and the window.
    rate_limit_requests: int = Field(default=1200, ge=0)
    rate_limit_window_seconds: int = Field(default=60, ge=1)
    #: `redis://host:port/db` to keep rate-limit counters in Redis; None: in PostgreSQL/SQLite.
    redis_url: str | None = None
    #: Magic-link delivery (docs/delivery.md). Email over SMTP: `smtp://user:pass@host:587`
    #: (STARTTLS when offered) or `smtps://...` (implicit TLS); the sender's address.
    smtp_url: str | None = Field(default=None, repr=False)
    mail_from: str = "inspectlang <no-reply@localhost>"
    #: SMS and WhatsApp through Twilio's Messages API.
    twilio_account_sid: str | None = None
    twilio_auth_token: str | None = Field(default=None, repr=False)
    twilio_from: str | None = None
    twilio_whatsapp_from: str | None = None
    twilio_base_url: str = "https://api.twilio.com"
    #: WhatsApp through Meta's Cloud API (a template message).
    meta_whatsapp_token: str | None = Field(default=None, repr=False)
    meta_phone_number_id: str | None = None
    meta_base_url: str = "https://graph.facebook.com/v20.0"
    meta_template: str = "inspection_link"
    #: Run the photo analyzers of `runtime.vision` (plate, face, ID document, serial number,
    #: color) in the worker when the `vision` extra is installed (docs/vision.md).
    vision: bool = True
    #: Validation name -> URL of an outside analysis service the worker posts the photo to
    #: (docs/vision.md has the JSON contract); for names with no analyzer here (make, model,
    #: damage...), or to replace one.
    validation_providers: Annotated[dict[str, str], NoDecode] = Field(default_factory=dict)
    #: Key of the HMAC-SHA256 signature on every request to a validation provider.
    validation_provider_secret: str | None = Field(default=None, repr=False)
    #: Seconds a validation provider may take to answer before the attempt counts as failed.
    validation_provider_timeout_seconds: int = Field(default=30, ge=1)
    #: Validation names the company's own service posts results for through the API
    #: (`POST .../validation`): routed to a machine, not to a person (docs/review.md). A
    #: comma-separated list in INSPECTLANG_POSTED_VALIDATIONS.
    posted_validations: Annotated[frozenset[str], NoDecode] = frozenset()
    #: The company's time zone (an IANA name: `America/Argentina/Buenos_Aires`): every moment
    #: on the pages, in the PDF reports and in the exports is shown in it, with its name.
    time_zone: str = "UTC"

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Building `Settings(...)` uses what it is given: only `from_env` reads variables."""
        return (init_settings,)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
        """Build settings from `environ` (default `os.environ`); keyword overrides win (None
        means not given). A value the server cannot use is a `SettingsError` naming its
        variable."""
        given = {key: value for key, value in overrides.items() if value is not None}
        source = _Environment(cls, os.environ if environ is None else environ)
        try:
            return cls(**{**source(), **given})
        except ValidationError as error:
            raise SettingsError(_explain(error)) from None

    @field_validator("data_dir")
    @classmethod
    def _resolve_data_dir(cls, value: Path) -> Path:
        return value.expanduser().resolve()

    @field_validator("posted_validations", mode="before")
    @classmethod
    def _posted(cls, value: Any) -> Any:
        if isinstance(value, str):
            return frozenset(name.strip() for name in value.split(",") if name.strip())
        return value

    @field_validator("time_zone")
    @classmethod
    def _zone(cls, value: str) -> str:
        if not _is_zone(value):
            raise ValueError(f"{value!r} is not a time zone name (e.g. America/Sao_Paulo)")
        return value

    @field_validator("validation_providers", mode="before")
    @classmethod
    def _providers(cls, value: Any) -> Any:
        return parse_providers(value) if isinstance(value, str) else value

    @model_validator(mode="after")
    def _complete(self) -> Settings:
        """The defaults that depend on other settings, and the checks across settings."""
        if self.validation_providers and not self.validation_provider_secret:
            raise ValueError(
                "INSPECTLANG_VALIDATION_PROVIDERS is set: INSPECTLANG_VALIDATION_PROVIDER_SECRET "
                "must hold the key the providers verify signatures with"
            )
        if not self.database_url:
            object.__setattr__(self, "database_url", default_database_url(self.data_dir))
        if not self.secret:
            object.__setattr__(self, "secret", load_or_create_secret(self.data_dir))
        return self

    @property
    def public_base(self) -> str:
        """`public_url` without a trailing slash, ready to have a path appended."""
        return self.public_url.rstrip("/")


def parse_providers(raw: str) -> dict[str, str]:
    """`name=url` pairs separated by commas (`make=https://a.example/v1,damage=https://...`)."""
    providers: dict[str, str] = {}
    for pair in filter(None, (part.strip() for part in raw.split(","))):
        name, _, url = pair.partition("=")
        name, url = name.strip(), url.strip()
        if not name or not url.startswith(("http://", "https://")):
            raise SettingsError(
                "INSPECTLANG_VALIDATION_PROVIDERS takes name=URL pairs separated by commas "
                f"(URL with http:// or https://), not {pair!r}"
            )
        providers[name] = url
    return providers


def default_database_url(data_dir: Path) -> str:
    """The SQLite file inside the data directory."""
    return f"sqlite:///{data_dir / 'inspectlang.sqlite3'}"


def load_or_create_secret(data_dir: Path) -> str:
    """Read the server secret from the data directory, creating it (mode 0600) the first time."""
    data_dir.mkdir(parents=True, exist_ok=True)
    path = data_dir / SECRET_FILE_NAME
    try:
        return path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        pass
    secret = secrets.token_urlsafe(48)
    temporary = path.with_suffix(f".tmp-{secrets.token_hex(4)}")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(secret)
        handle.flush()
        os.fsync(handle.fileno())
    try:
        # link() fails when another process created the file first: then its secret wins.
        os.link(temporary, path)
    except FileExistsError:
        secret = path.read_text(encoding="utf-8").strip()
    finally:
        os.unlink(temporary)
    return secret


class _Environment(EnvSettingsSource):
    """pydantic-settings' environment source over a given mapping (tests pass their own; the
    service passes `os.environ`), the way its `.env` source reads a file."""

    def __init__(self, settings_cls: type[BaseSettings], environ: Mapping[str, str]) -> None:
        self._environ = environ
        super().__init__(settings_cls)

    def _load_env_vars(self) -> Mapping[str, str | None]:
        return parse_env_vars(
            self._environ, self.case_sensitive, self.env_ignore_empty, self.env_parse_none_str
        )


def _variable(field: str) -> str:
    return "DATABASE_URL" if field == "database_url" else ENV_PREFIX + field.upper()


def _explain(error: ValidationError) -> str:
    """What is wrong, by environment variable, for a person reading the start-up error."""
    problems = []
    for item in error.errors():
        location = item.get("loc") or ()
        field = str(location[0]) if location else ""
        message = item.get("msg", "invalid")
        kind = item.get("type", "")
        if kind.startswith("bool"):
            message = "must be a boolean (1/0, true/false)"
        elif kind.startswith("int"):
            message = "must be an integer"
        elif kind in ("greater_than_equal", "greater_than"):
            message = "must be positive" if item.get("ctx", {}).get("ge") == 1 else message
        elif kind == "literal_error":
            message = f"must be one of {item.get('ctx', {}).get('expected')}"
        value = item.get("input")
        shown = f", not {value!r}" if field and isinstance(value, str | int) else ""
        problems.append(f"{_variable(field)} {message}{shown}" if field else message)
    return "; ".join(problems)
