"""One of each: one exception base per package, one timestamp formatter.

Every exception class defined in `inspectlang`, `runtime` or `server` derives from its package's
base (`InspectlangError`, `InspectionRuntimeError`, `ServerError`), so an embedder catches a
package's own failures with one clause; classes that were a `ValueError` or `KeyError` stay one.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from datetime import UTC, datetime, timedelta, timezone

import pytest

from inspectlang.errors import InspectlangError
from inspectlang.timestamps import utc_timestamp
from runtime.errors import InspectionRuntimeError

PACKAGES = ("inspectlang", "runtime", "server")


def _bases() -> dict[str, type[Exception]]:
    from server.errors import ServerError

    return {
        "inspectlang": InspectlangError,
        "runtime": InspectionRuntimeError,
        "server": ServerError,
    }


#: Alembic's environment and revision scripts run only inside Alembic (they define no classes).
MIGRATION_SCRIPTS = "server.migrations"


def _exception_classes(package: str) -> list[type[BaseException]]:
    """Every exception class defined by a module of `package` (each module imported)."""
    root = importlib.import_module(package)
    found: list[type[BaseException]] = []
    for info in pkgutil.walk_packages(root.__path__, prefix=f"{package}."):
        if info.name.startswith(MIGRATION_SCRIPTS):
            continue
        module = importlib.import_module(info.name)
        found.extend(
            value
            for value in vars(module).values()
            if inspect.isclass(value)
            and issubclass(value, BaseException)
            and value.__module__ == module.__name__
        )
    return found


@pytest.mark.parametrize("package", PACKAGES)
def test_every_exception_derives_from_its_package_base(package: str) -> None:
    base = _bases()[package]
    classes = _exception_classes(package)
    assert base in classes
    # before: TemplateError, InspectionError, SettingsError, BlobNotFound, GiveUp, ... derived
    # from builtin exceptions only
    assert [c.__qualname__ for c in classes if not issubclass(c, base)] == []


def test_public_names_and_builtin_bases_are_kept() -> None:
    import inspectlang
    import runtime
    from server.blobs import BlobNotFound, InvalidBlobKey
    from server.errors import ApiError, ServerError
    from server.settings import SettingsError
    from server.tokens import TokenError
    from server.urlsafety import UnsafeURLError

    assert issubclass(inspectlang.TemplateError, inspectlang.InspectlangError)
    assert issubclass(runtime.InspectionError, runtime.InspectionRuntimeError)
    assert issubclass(runtime.InvalidProgram, runtime.InspectionRuntimeError)
    assert issubclass(TokenError, ApiError) and issubclass(ApiError, ServerError)
    assert issubclass(BlobNotFound, KeyError) and issubclass(InvalidBlobKey, ValueError)
    assert issubclass(SettingsError, ValueError) and issubclass(UnsafeURLError, ValueError)


def test_the_timestamp_form() -> None:
    moment = datetime(2026, 5, 4, 10, 20, 30, 123456, tzinfo=UTC)
    assert utc_timestamp(moment) == "2026-05-04T10:20:30.123456Z"
    assert utc_timestamp(moment, milliseconds=True) == "2026-05-04T10:20:30.123Z"
    assert utc_timestamp(moment.replace(microsecond=0)) == "2026-05-04T10:20:30Z"
    assert utc_timestamp(moment.replace(microsecond=0), milliseconds=True) == (
        "2026-05-04T10:20:30.000Z"
    )
    plus_two = moment.astimezone(timezone(timedelta(hours=2)))
    assert utc_timestamp(plus_two) == "2026-05-04T10:20:30.123456Z"
    with pytest.raises(ValueError, match="aware"):
        utc_timestamp(datetime(2026, 5, 4, 10, 20, 30))
