"""Server settings, read from environment variables, with defaults that work out of the box.

`Settings.from_env()` is the only place the service reads its environment; everything else gets a
`Settings` object passed in (tests build one directly). No `.env` file is read on purpose.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from server.errors import ServerError

#: Default request body limit: enough for a few high resolution photos in one multipart upload.
DEFAULT_MAX_BODY_BYTES = 20 * 1024 * 1024
#: Name of the file, inside the data directory, holding the generated server secret.
SECRET_FILE_NAME = "server-secret"

Environment = Literal["development", "production"]

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


class SettingsError(ServerError, ValueError):
    """An environment variable holds a value the server cannot use."""


class Settings(BaseModel):
    """Everything the server needs to know about its surroundings."""

    model_config = ConfigDict(frozen=True)

    #: SQLAlchemy URL; `sqlite:///<data_dir>/inspectlang.sqlite3` when unset.
    database_url: str
    #: Directory for the SQLite file, blobs (images, PDFs), the secret and the demo keys.
    data_dir: Path
    #: Base URL clients use to reach the service (links in responses, report URLs).
    public_url: str = "http://127.0.0.1:8000"
    #: Server secret for HMAC tokens and signed links. Never logged.
    secret: str = Field(repr=False)
    env: Environment = "development"
    #: Allow webhook callbacks to loopback/private addresses (development and tests only).
    allow_loopback_webhooks: bool = False
    #: Largest request body accepted, in bytes; larger ones get 413 `body_too_large`.
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    #: Run the background job worker inside the server process.
    worker: bool = True
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
    validation_providers: dict[str, str] = Field(default_factory=dict)
    #: Key of the HMAC-SHA256 signature on every request to a validation provider.
    validation_provider_secret: str | None = Field(default=None, repr=False)
    #: Seconds a validation provider may take to answer before the attempt counts as failed.
    validation_provider_timeout_seconds: int = Field(default=30, ge=1)
    #: Validation names the company's own service posts results for through the API
    #: (`POST .../validation`): routed to a machine, not to a person (docs/review.md).
    posted_validations: frozenset[str] = frozenset()

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
        """Build settings from `environ` (default `os.environ`); keyword overrides win.

        When no secret is configured, one is generated once and kept in the data directory, so
        tokens and signed links stay valid across restarts.
        """
        env = os.environ if environ is None else environ
        data_dir = Path(
            overrides.pop("data_dir", None) or env.get("INSPECTLANG_DATA_DIR") or "data"
        )
        data_dir = data_dir.expanduser().resolve()
        values: dict[str, Any] = {
            "data_dir": data_dir,
            "database_url": env.get("DATABASE_URL") or default_database_url(data_dir),
            "public_url": env.get("INSPECTLANG_PUBLIC_URL") or "http://127.0.0.1:8000",
            "env": env.get("INSPECTLANG_ENV") or "development",
            "allow_loopback_webhooks": _parse_bool(
                env, "INSPECTLANG_ALLOW_LOOPBACK_WEBHOOKS", default=False
            ),
            "max_body_bytes": _parse_int(
                env, "INSPECTLANG_MAX_BODY_BYTES", default=DEFAULT_MAX_BODY_BYTES
            ),
            "worker": _parse_bool(env, "INSPECTLANG_WORKER", default=True),
            "expiry_sweep_seconds": _parse_int(env, "INSPECTLANG_EXPIRY_SWEEP_SECONDS", default=60),
            "blob_url": env.get("INSPECTLANG_BLOB_URL") or None,
            "s3_endpoint_url": env.get("INSPECTLANG_S3_ENDPOINT_URL") or None,
            "s3_region": env.get("INSPECTLANG_S3_REGION") or None,
            "s3_access_key_id": env.get("INSPECTLANG_S3_ACCESS_KEY_ID") or None,
            "s3_secret_access_key": env.get("INSPECTLANG_S3_SECRET_ACCESS_KEY") or None,
            "rate_limit_requests": _parse_int(
                env, "INSPECTLANG_RATE_LIMIT_REQUESTS", default=1200, allow_zero=True
            ),
            "rate_limit_window_seconds": _parse_int(
                env, "INSPECTLANG_RATE_LIMIT_WINDOW_SECONDS", default=60
            ),
            "redis_url": env.get("INSPECTLANG_REDIS_URL") or None,
            "vision": _parse_bool(env, "INSPECTLANG_VISION", default=True),
            "validation_providers": parse_providers(
                env.get("INSPECTLANG_VALIDATION_PROVIDERS") or ""
            ),
            "validation_provider_secret": env.get("INSPECTLANG_VALIDATION_PROVIDER_SECRET") or None,
            "validation_provider_timeout_seconds": _parse_int(
                env, "INSPECTLANG_VALIDATION_PROVIDER_TIMEOUT_SECONDS", default=30
            ),
            "posted_validations": frozenset(
                name.strip()
                for name in (env.get("INSPECTLANG_POSTED_VALIDATIONS") or "").split(",")
                if name.strip()
            ),
            **{
                setting: env[name]
                for setting, name in DELIVERY_ENVIRONMENT.items()
                if env.get(name)
            },
        }
        values.update({key: value for key, value in overrides.items() if value is not None})
        if values["env"] not in ("development", "production"):
            raise SettingsError(
                f"INSPECTLANG_ENV must be 'development' or 'production', not {values['env']!r}"
            )
        if values["validation_providers"] and not values["validation_provider_secret"]:
            raise SettingsError(
                "INSPECTLANG_VALIDATION_PROVIDERS is set: INSPECTLANG_VALIDATION_PROVIDER_SECRET "
                "must hold the key the providers verify signatures with"
            )
        if "secret" not in values:
            values["secret"] = env.get("INSPECTLANG_SECRET") or load_or_create_secret(data_dir)
        return cls(**values)

    @property
    def public_base(self) -> str:
        """`public_url` without a trailing slash, ready to have a path appended."""
        return self.public_url.rstrip("/")


#: Delivery settings and the environment variables they come from.
DELIVERY_ENVIRONMENT = {
    "smtp_url": "INSPECTLANG_SMTP_URL",
    "mail_from": "INSPECTLANG_MAIL_FROM",
    "twilio_account_sid": "INSPECTLANG_TWILIO_ACCOUNT_SID",
    "twilio_auth_token": "INSPECTLANG_TWILIO_AUTH_TOKEN",
    "twilio_from": "INSPECTLANG_TWILIO_FROM",
    "twilio_whatsapp_from": "INSPECTLANG_TWILIO_WHATSAPP_FROM",
    "twilio_base_url": "INSPECTLANG_TWILIO_BASE_URL",
    "meta_whatsapp_token": "INSPECTLANG_META_WHATSAPP_TOKEN",
    "meta_phone_number_id": "INSPECTLANG_META_PHONE_NUMBER_ID",
    "meta_base_url": "INSPECTLANG_META_BASE_URL",
    "meta_template": "INSPECTLANG_META_TEMPLATE",
}


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


def _parse_bool(env: Mapping[str, str], name: str, *, default: bool) -> bool:
    raw = env.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise SettingsError(f"{name} must be a boolean (1/0, true/false), not {raw!r}")


def _parse_int(env: Mapping[str, str], name: str, *, default: int, allow_zero: bool = False) -> int:
    raw = env.get(name)
    if raw is None or not raw.strip():
        return default
    try:
        value = int(raw)
    except ValueError:
        raise SettingsError(f"{name} must be an integer, not {raw!r}") from None
    if value < 0 or (value == 0 and not allow_zero):
        raise SettingsError(f"{name} must be positive, not {value}")
    return value
