"""Group commit and the durability policies: each wait ends after a flush that covers it."""

from __future__ import annotations

import os
import threading
from typing import TYPE_CHECKING

import pytest
import trio
from hypothesis import given, settings
from hypothesis import strategies as st

from coterie.journal import Durability, GroupCommit, SyncPolicy, SyncRunner, ThreadGroupCommit

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path


class Flushes:
    """A flush job recorder: which write count each flush covered, once it finished."""

    def __init__(self) -> None:
        self.written = 0
        self.covered: list[int] = []

    def prepare(self) -> Callable[[], None]:
        target = self.written
        return lambda: self.covered.append(target)


async def test_concurrent_writers_share_flushes() -> None:
    flushes = Flushes()
    commit = GroupCommit(flushes.prepare, runner=SyncRunner(inline_below=10.0))
    done: list[tuple[int, int]] = []  # (generation, flushes finished when it returned)

    async def writer() -> None:
        flushes.written += 1
        generation = commit.note_write()
        await commit.wait_durable(generation)
        done.append((generation, max(flushes.covered)))

    async with trio.open_nursery() as nursery:
        for _ in range(16):
            nursery.start_soon(writer)
    assert len(done) == 16
    assert all(covered >= generation for generation, covered in done)
    assert commit.flushes == len(flushes.covered) < 16


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(0, 3), min_size=1, max_size=12))
def test_every_wait_returns_after_a_flush_covering_its_write(delays: list[int]) -> None:
    """Writers arriving at random moments (checkpoints) never return before they are covered."""

    async def main() -> list[tuple[int, int]]:
        flushes = Flushes()
        commit = GroupCommit(flushes.prepare, runner=SyncRunner(inline_below=10.0))
        done: list[tuple[int, int]] = []

        async def writer(delay: int) -> None:
            for _ in range(delay):
                await trio.lowlevel.checkpoint()
            flushes.written += 1
            generation = commit.note_write()
            await commit.wait_durable(generation)
            done.append((generation, max(flushes.covered)))

        async with trio.open_nursery() as nursery:
            for delay in delays:
                nursery.start_soon(writer, delay)
        assert not commit.unflushed
        return done

    done = trio.run(main)
    assert len(done) == len(delays)
    assert all(covered >= generation for generation, covered in done)


def test_flush_now_covers_everything_written() -> None:
    flushes = Flushes()
    commit = GroupCommit(flushes.prepare)
    flushes.written = commit.note_write()
    assert commit.unflushed
    commit.flush_now()
    assert not commit.unflushed
    assert flushes.covered == [1]


def test_threads_share_flushes_and_each_is_covered() -> None:
    covered: list[int] = []
    start_flush = threading.Event()
    commit: ThreadGroupCommit

    def flush() -> None:
        start_flush.wait()  # hold the first flush so that the others pile up
        covered.append(commit.written)

    commit = ThreadGroupCommit(flush)
    results: list[tuple[int, int]] = []
    lock = threading.Lock()

    def writer() -> None:
        generation = commit.note_write()
        commit.wait_durable(generation)
        with lock:
            results.append((generation, max(covered)))

    threads = [threading.Thread(target=writer) for _ in range(8)]
    for t in threads:
        t.start()
    start_flush.set()
    for t in threads:
        t.join(timeout=10)
    assert len(results) == 8
    assert all(c >= g for g, c in results)
    assert commit.flushes == len(covered) <= 8


def test_a_failed_thread_flush_raises_in_its_leader_and_the_next_wait_retries() -> None:
    calls: list[int] = []

    def flush() -> None:
        calls.append(1)
        if len(calls) == 1:
            raise OSError("disk full")

    commit = ThreadGroupCommit(flush)
    generation = commit.note_write()
    with pytest.raises(OSError, match="disk full"):
        commit.wait_durable(generation)
    commit.wait_durable(generation)
    assert (len(calls), commit.flushes, commit.durable) == (2, 1, 1)


def test_without_a_flush_nothing_waits() -> None:
    commit = ThreadGroupCommit(None)
    commit.wait_durable(commit.note_write())
    assert (commit.flushes, commit.durable) == (0, 1)


# -- the policies ----------------------------------------------------------------


@pytest.fixture
def synced(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The descriptors fdatasync'ed during the test, in order."""
    calls: list[int] = []
    real = os.fdatasync

    def record(fd: int) -> None:
        calls.append(fd)
        real(fd)

    monkeypatch.setattr(os, "fdatasync", record)
    return calls


async def appends(policy: SyncPolicy, fd: int, count: int) -> None:
    async with trio.open_nursery() as nursery:
        for _ in range(count):
            nursery.start_soon(policy.sync, fd)


@pytest.mark.parametrize(
    ("durability", "expected"),
    [(Durability.NONE, 0), (Durability.ALWAYS, 8)],
)
async def test_none_never_syncs_and_always_syncs_every_append(
    tmp_path: Path, synced: list[int], durability: Durability, expected: int
) -> None:
    fd = os.open(tmp_path / "log", os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        await appends(SyncPolicy(durability, lambda: [fd]), fd, 8)
    finally:
        os.close(fd)
    assert synced == [fd] * expected


async def test_batch_shares_fsyncs_and_flushes_every_file_it_is_given(
    tmp_path: Path, synced: list[int]
) -> None:
    fds = [os.open(tmp_path / f"seg{n}", os.O_WRONLY | os.O_CREAT, 0o644) for n in range(2)]
    try:
        policy = SyncPolicy(Durability.BATCH, lambda: fds)
        await appends(policy, fds[1], 8)
    finally:
        for fd in fds:
            os.close(fd)
    assert 1 <= policy.flushes < 8
    assert synced == fds * policy.flushes


@pytest.mark.parametrize(
    ("durability", "expected"),
    [(Durability.NONE, 0), (Durability.ALWAYS, 1), (Durability.BATCH, 1)],
)
def test_sync_now_blocks_for_one_fsync_unless_none(
    tmp_path: Path, synced: list[int], durability: Durability, expected: int
) -> None:
    fd = os.open(tmp_path / "log", os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        SyncPolicy(durability, lambda: [fd]).sync_now(fd)
    finally:
        os.close(fd)
    assert synced == [fd] * expected
