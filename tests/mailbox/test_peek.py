"""peek_mailbox: a file mailbox's unacknowledged messages, read from outside without a trace."""

from __future__ import annotations

import fcntl
import json
import os
from typing import TYPE_CHECKING

from coterie.journal import encode
from coterie.mailbox import Durability, FileMailbox, MailboxWriter, open_file_mailbox, peek_mailbox
from coterie.messages import Message

if TYPE_CHECKING:
    from pathlib import Path


def msg(n: int, to: str = "alice") -> Message:
    return Message.new("lead", to, "note", {"n": n})


def numbers(messages: list[Message]) -> list[int]:
    return [m.body["n"] for m in messages]


def snapshot(directory: Path) -> dict[str, tuple[bytes, int]]:
    """Every file's bytes and modification time."""
    return {
        p.name: (p.read_bytes(), p.stat().st_mtime_ns)
        for p in sorted(directory.iterdir())
        if p.is_file()
    }


async def mailbox_with(directory: Path, count: int, **kwargs: object) -> FileMailbox:
    box = open_file_mailbox(directory, durability=Durability.NONE, **kwargs)  # type: ignore[arg-type]
    for n in range(count):
        await box.send(msg(n))
    return box


def newest_segment(directory: Path) -> Path:
    return sorted(directory.glob("*.log"))[-1]


def test_a_missing_mailbox_holds_nothing(tmp_path: Path) -> None:
    assert peek_mailbox(tmp_path / "nobody") == []


async def test_everything_sent_is_pending_until_acknowledged(tmp_path: Path) -> None:
    box = await mailbox_with(tmp_path / "alice", 3)
    assert numbers(peek_mailbox(tmp_path / "alice")) == [0, 1, 2]
    box.close()


async def test_acknowledged_messages_are_left_out_even_out_of_order(tmp_path: Path) -> None:
    """Received but unacknowledged (in flight) still counts as pending."""
    box = await mailbox_with(tmp_path / "alice", 5)
    deliveries = [await box.receive() for _ in range(4)]
    await box.ack(deliveries[0], deliveries[2])
    assert numbers(peek_mailbox(tmp_path / "alice")) == [1, 3, 4]
    box.close()
    assert numbers(peek_mailbox(tmp_path / "alice")) == [1, 3, 4]


async def test_peeking_changes_no_file(tmp_path: Path) -> None:
    d = tmp_path / "alice"
    box = await mailbox_with(d, 3)
    await box.ack(await box.receive())
    before = snapshot(d)
    peek_mailbox(d)
    assert snapshot(d) == before
    box.close()


async def test_peeking_takes_no_lock(tmp_path: Path) -> None:
    """A writer holding the mailbox's lock (mid-append) does not block a peek."""
    d = tmp_path / "alice"
    box = await mailbox_with(d, 2)
    fd = os.open(d / "lock", os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        assert numbers(peek_mailbox(d)) == [0, 1]
    finally:
        os.close(fd)
        box.close()


async def test_a_torn_tail_is_ignored_and_kept(tmp_path: Path) -> None:
    d = tmp_path / "alice"
    (await mailbox_with(d, 2)).close()
    segment = newest_segment(d)
    torn = encode(msg(9).to_json_bytes())[:-5]
    with open(segment, "ab") as f:
        f.write(torn)
    size = segment.stat().st_size
    assert numbers(peek_mailbox(d)) == [0, 1]
    assert segment.stat().st_size == size


async def test_a_corrupt_record_is_skipped(tmp_path: Path) -> None:
    d = tmp_path / "alice"
    (await mailbox_with(d, 3)).close()
    segment = newest_segment(d)
    data = bytearray(segment.read_bytes())
    second = data.index(b'"n":1')
    data[second + 4] ^= 0xFF  # the payload no longer matches its checksum
    segment.write_bytes(bytes(data))
    assert numbers(peek_mailbox(d)) == [0, 2]


async def test_a_record_that_is_not_a_message_is_skipped(tmp_path: Path) -> None:
    d = tmp_path / "alice"
    (await mailbox_with(d, 1)).close()
    with open(newest_segment(d), "ab") as f:
        f.write(encode(json.dumps({"not": "a message"}).encode()))
        f.write(encode(msg(1).to_json_bytes()))
    assert numbers(peek_mailbox(d)) == [0, 1]


async def test_segments_rotated_and_removed_are_followed(tmp_path: Path) -> None:
    d = tmp_path / "alice"
    box = await mailbox_with(d, 12, segment_bytes=300)
    segments = len(list(d.glob("*.log")))
    assert segments > 2
    for _ in range(7):
        await box.ack(await box.receive())
    assert len(list(d.glob("*.log"))) < segments
    assert numbers(peek_mailbox(d)) == list(range(7, 12))
    box.close()


async def test_messages_from_another_writer_with_no_owner_open_are_pending(
    tmp_path: Path,
) -> None:
    d = tmp_path / "alice"
    (await mailbox_with(d, 1)).close()
    writer = MailboxWriter(d, durability=Durability.NONE)
    writer.send_nowait(msg(1))
    writer.close()
    assert numbers(peek_mailbox(d)) == [0, 1]
