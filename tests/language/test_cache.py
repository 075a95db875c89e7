"""`inspectlang.cache.write`: a cache file is written whole or not at all."""

from __future__ import annotations

from pathlib import Path
from typing import IO

from inspectlang import cache


def test_a_file_is_replaced_whole(tmp_path: Path) -> None:
    path = tmp_path / "kept"
    path.write_bytes(b"old")
    assert cache.write(str(path), lambda file: file.write(b"new"))
    assert path.read_bytes() == b"new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kept"]


def test_a_writer_that_fails_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    path = tmp_path / "kept"
    path.write_bytes(b"old")

    def half(file: IO[bytes]) -> None:
        file.write(b"ne")
        raise ValueError("cannot encode")

    assert not cache.write(str(path), half)
    assert path.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kept"]


def test_an_unwritable_place_is_no_error(tmp_path: Path) -> None:
    assert not cache.write(str(tmp_path / "missing" / "kept"), lambda file: file.write(b"x"))
    assert list(tmp_path.iterdir()) == []
