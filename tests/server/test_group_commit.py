"""Group commit: concurrent writes share transactions, each is written exactly once, a caller
returns only after its item committed, and one bad item fails alone."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from sqlalchemy import Column, Integer, MetaData, String, Table, insert, select
from sqlalchemy.exc import IntegrityError

from server.db import Database
from server.group_commit import GroupCommit

metadata = MetaData()
rows = Table(
    "group_commit_probe",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("name", String(40), nullable=False, unique=True),
)


@pytest.fixture
def table(db: Database) -> Iterator[Table]:
    metadata.drop_all(db.engine)
    metadata.create_all(db.engine)
    yield rows
    metadata.drop_all(db.engine)


def _writer(db: Database, delay: float = 0.0) -> tuple[GroupCommit[str], list[list[str]]]:
    """A group commit inserting names into the probe table; records each batch it wrote."""
    written: list[list[str]] = []

    def write_batch(names: list[str]) -> None:
        with db.session(immediate=True) as session:
            session.execute(insert(rows), [{"name": name} for name in names])
            time.sleep(delay)  # a slow commit: later callers queue up behind it
            session.commit()
        written.append(names)

    return GroupCommit(write_batch), written


def _names(db: Database) -> list[str]:
    with db.engine.connect() as connection:
        return sorted(connection.execute(select(rows.c.name)).scalars())


def test_a_lone_write_is_committed_before_write_returns(db: Database, table: Any) -> None:
    writer, written = _writer(db)
    writer.write("alone")
    assert _names(db) == ["alone"]
    assert written == [["alone"]]
    assert (writer.batches, writer.items) == (1, 1)


def test_concurrent_writes_share_transactions_and_none_is_lost(db: Database, table: Any) -> None:
    writer, written = _writer(db, delay=0.02)
    names = [f"item-{n}" for n in range(48)]
    with ThreadPoolExecutor(max_workers=16) as pool:
        list(pool.map(writer.write, names))
    assert _names(db) == sorted(names)
    assert sorted(name for batch in written for name in batch) == sorted(names)
    assert writer.items == 48
    assert writer.batches < 48  # callers that waited were written together


def test_one_bad_item_fails_alone_and_the_others_commit(db: Database, table: Any) -> None:
    writer, _ = _writer(db, delay=0.02)
    writer.write("taken")
    names = [f"ok-{n}" for n in range(12)] + ["taken"]  # the unique name breaks the batch
    outcomes: dict[str, BaseException | None] = {}
    lock = threading.Lock()

    def attempt(name: str) -> None:
        try:
            writer.write(name)
            error: BaseException | None = None
        except BaseException as caught:
            error = caught
        with lock:
            outcomes[name] = error

    with ThreadPoolExecutor(max_workers=13) as pool:
        list(pool.map(attempt, names))
    assert isinstance(outcomes.pop("taken"), IntegrityError)
    assert outcomes == {f"ok-{n}": None for n in range(12)}
    assert _names(db) == sorted(["taken", *(f"ok-{n}" for n in range(12))])


def test_a_lone_failure_is_raised_to_its_caller(db: Database, table: Any) -> None:
    def write_batch(items: list[str]) -> None:
        raise ValueError(f"refused {items}")

    writer: GroupCommit[str] = GroupCommit(write_batch)
    with pytest.raises(ValueError, match=r"refused \['x'\]"):
        writer.write("x")
    assert (writer.batches, writer.items) == (0, 0)
