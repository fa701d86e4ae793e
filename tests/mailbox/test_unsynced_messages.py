"""Messages that need no fsync (``Message.durable`` false), in a durable mailbox."""

from __future__ import annotations

import os
import shutil
from typing import TYPE_CHECKING, Any

import pytest
import trio
from hypothesis import given
from hypothesis import strategies as st

from coterie.mailbox import Durability, MailboxWriter, open_file_mailbox
from coterie.mailbox._file import UNSYNCED_ACKS_PER_WRITE
from coterie.messages import Message

if TYPE_CHECKING:
    from pathlib import Path


def msg(n: int, *, durable: bool) -> Message:
    return Message.new("tester", "alice", "n", {"n": n}, durable=durable)


@pytest.fixture
def syncs(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every fsync and fdatasync call, by name, while the test runs."""
    calls: list[str] = []
    fsync, fdatasync = os.fsync, os.fdatasync

    def counted_fsync(fd: Any) -> None:
        calls.append("fsync")
        fsync(fd)

    def counted_fdatasync(fd: Any) -> None:
        calls.append("fdatasync")
        fdatasync(fd)

    monkeypatch.setattr(os, "fsync", counted_fsync)
    monkeypatch.setattr(os, "fdatasync", counted_fdatasync)
    return calls


@given(durable=st.booleans(), n=st.integers())
def test_the_flag_survives_the_record_and_durable_records_read_as_before(
    durable: bool, n: int
) -> None:
    message = msg(n, durable=durable)
    data = message.to_json_bytes()
    assert Message.from_json_bytes(data) == message
    assert (b'"durable"' in data) is not durable


@pytest.mark.parametrize("policy", [Durability.ALWAYS, Durability.BATCH])
async def test_unsynced_messages_cost_no_fsync_and_are_delivered(
    tmp_path: Path, syncs: list[str], policy: Durability
) -> None:
    box = open_file_mailbox(tmp_path / "alice", durability=policy, poll_interval=None)
    await box.send(msg(-1, durable=True))  # creating the segment fsyncs the directory
    await box.ack(await box.receive())
    syncs.clear()
    for n in range(5):
        await box.send(msg(n, durable=False))
    writer = MailboxWriter(tmp_path / "alice", policy)
    await writer.send(msg(5, durable=False))
    writer.send_nowait(msg(6, durable=False))
    box.send_nowait(msg(7, durable=False))
    got = []
    for _ in range(8):
        delivery = await box.receive()
        got.append(delivery.message.body["n"])
        await box.ack(delivery)
    assert sorted(got) == list(range(8))
    assert syncs == [], "neither the sends nor the acknowledgements were to fsync"
    await box.send(msg(8, durable=True))
    assert syncs, "a durable message is fsynced as before"
    writer.close()
    await box.aclose()


async def test_unsynced_acks_reach_the_cursor_file_in_bounded_batches(tmp_path: Path) -> None:
    directory = tmp_path / "alice"
    box = open_file_mailbox(directory, durability=Durability.BATCH, poll_interval=None)
    total = UNSYNCED_ACKS_PER_WRITE + 3
    for n in range(total):
        await box.send(msg(n, durable=False))
    for _ in range(total):
        await box.ack(await box.receive())
    # A kill -9 now: the files as they are (the page cache survives it).
    crashed = tmp_path / "crashed"
    shutil.copytree(directory, crashed)
    await box.aclose()

    async def left(where: Path) -> list[tuple[int, bool]]:
        reopened = open_file_mailbox(where, durability=Durability.BATCH, poll_interval=None)
        out = []
        while True:
            try:
                delivery = reopened.receive_nowait()
            except trio.WouldBlock:
                break
            out.append((delivery.message.body["n"], delivery.redelivered))
        await reopened.aclose()
        return out

    # After the kill, at most the last batch comes back, flagged as redelivered.
    assert await left(crashed) == [(n, True) for n in range(UNSYNCED_ACKS_PER_WRITE, total)]
    # A clean close wrote everything.
    assert await left(directory) == []


async def test_a_durable_ack_carries_the_unsynced_ones_before_it(tmp_path: Path) -> None:
    directory = tmp_path / "alice"
    box = open_file_mailbox(directory, durability=Durability.BATCH, poll_interval=None)
    await box.send(msg(0, durable=False))
    await box.send(msg(1, durable=True))
    await box.ack(await box.receive())  # unsynced: not in the file yet
    await box.ack(await box.receive())  # durable: the cursor file says both
    crashed = tmp_path / "crashed"
    shutil.copytree(directory, crashed)
    await box.aclose()
    reopened = open_file_mailbox(crashed, poll_interval=None)
    with pytest.raises(trio.WouldBlock):
        reopened.receive_nowait()
    await reopened.aclose()
