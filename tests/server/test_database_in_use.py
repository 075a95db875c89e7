"""A command on a SQLite file that a running service holds alone (`INSPECTLANG_SQLITE_EXCLUSIVE`,
the `unix-excl` VFS) answers `database_in_use` at once, naming what to do, instead of waiting out
SQLite's 30 s busy timeout and failing with a driver's message."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from sqlalchemy import text

from server import migrate
from server.db import Database

ROOT = Path(__file__).resolve().parents[2]


def _command(data_dir: Path, *words: str) -> tuple[subprocess.CompletedProcess[str], float]:
    environment = {
        **{k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "INSPECTLANG_SECRET")},
        "PYTHONPATH": str(ROOT),
    }
    start = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "server", *words, "--data-dir", str(data_dir)],
        capture_output=True,
        text=True,
        env=environment,
        timeout=120,
    )
    return done, time.monotonic() - start


def test_outbox_and_admin_say_the_service_holds_the_file(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    file = data_dir / "inspectlang.sqlite3"
    made = Database(f"sqlite:///{file}")
    migrate.upgrade(made)
    made.dispose()
    held = Database(f"sqlite:///{file}", exclusive=True)  # as `serve` opens it
    try:
        with held.engine.connect() as connection:  # the lock is taken at the first read
            connection.execute(text("SELECT 1"))
            for words in (("outbox",), ("admin", "migrate")):
                done, seconds = _command(data_dir, *words)
                assert done.returncode == 1, done.stderr
                answer = json.loads(done.stderr.strip().splitlines()[-1])
                assert answer["code"] == "database_in_use", words
                assert "/dev/outbox" in answer["description"]
                assert seconds < 30  # not SQLite's busy timeout
    finally:
        held.dispose()
    done, _ = _command(data_dir, "outbox")  # the service gone, the file opens again
    assert done.returncode == 0, done.stderr
