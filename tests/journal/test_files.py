"""Whole writes, cutting a torn tail, and the writers' lock."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from hypothesis import given
from hypothesis import strategies as st

from coterie.journal import FileLock, Record, cut_tail, encode, scan, torn_tail, write_all
from tests.strategies import payloads

if TYPE_CHECKING:
    from pathlib import Path

    import pytest


@given(st.lists(payloads, max_size=6))
def test_a_log_of_whole_records_has_no_torn_tail(items: list[bytes]) -> None:
    assert torn_tail(b"".join(encode(p) for p in items)) is None


@given(st.lists(payloads, min_size=1, max_size=6), st.data())
def test_a_log_cut_inside_its_last_record_is_torn_where_that_record_starts(
    items: list[bytes], data: st.DataObject
) -> None:
    buf = b"".join(encode(p) for p in items)
    last = len(buf) - len(encode(items[-1]))
    cut = data.draw(st.integers(min_value=last + 1, max_value=len(buf) - 1))
    assert torn_tail(buf[:cut]) == last


def test_write_all_finishes_short_writes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real_write = os.write

    def one_byte(fd: int, data: bytes | memoryview) -> int:
        return real_write(fd, bytes(data[:1]))

    path = tmp_path / "log"
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    monkeypatch.setattr(os, "write", one_byte)
    try:
        write_all(fd, encode(b"hello"))
    finally:
        monkeypatch.undo()
        os.close(fd)
    assert [r.payload for r in scan(path.read_bytes()) if isinstance(r, Record)] == [b"hello"]


def test_cutting_a_torn_tail_keeps_its_bytes_and_leaves_whole_records(tmp_path: Path) -> None:
    path = tmp_path / "log"
    whole = encode(b"one") + encode(b"two")
    torn = encode(b"three")[:-2]
    path.write_bytes(whole + torn)
    at = torn_tail(path.read_bytes())
    assert at == len(whole)
    fd = os.open(path, os.O_RDWR)
    try:
        cut_tail(fd, at, path.read_bytes()[at:], tmp_path / "torn.bin", sync=True)
    finally:
        os.close(fd)
    assert path.read_bytes() == whole
    assert (tmp_path / "torn.bin").read_bytes() == torn


def test_an_exclusive_lock_keeps_every_other_holder_out(tmp_path: Path) -> None:
    first, second = FileLock(tmp_path / "lock"), FileLock(tmp_path / "lock")
    try:
        assert first.acquire()
        assert not second.acquire(blocking=False)
        assert not second.acquire(exclusive=False, blocking=False)
        first.release()
        assert second.acquire(blocking=False)
    finally:
        first.close()
        second.close()


def test_shared_locks_coexist_but_keep_a_writer_out(tmp_path: Path) -> None:
    readers = [FileLock(tmp_path / "lock") for _ in range(2)]
    writer = FileLock(tmp_path / "lock")
    try:
        assert all(r.acquire(exclusive=False, blocking=False) for r in readers)
        assert not writer.acquire(blocking=False)
    finally:
        for lock in [*readers, writer]:
            lock.close()
