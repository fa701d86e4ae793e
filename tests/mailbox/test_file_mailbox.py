"""What only the file-backed mailbox does: survive reopen, repair, refuse garbage."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
import trio

from coterie.errors import MailboxError
from coterie.events import EventLog
from coterie.journal import encode
from coterie.mailbox import (
    CorruptRecord,
    Durability,
    MailboxWriter,
    PostOffice,
    open_file_mailbox,
)
from coterie.mailbox._postoffice import WRITERS
from coterie.messages import Message


def msg(n: int, to: str = "alice") -> Message:
    return Message.new("tester", to, "n", {"n": n})


async def fill(directory: Path, count: int, **kwargs: object) -> None:
    box = open_file_mailbox(directory, durability=Durability.NONE, **kwargs)  # type: ignore[arg-type]
    for n in range(count):
        await box.send(msg(n))
    await box.aclose()


def drain(box: object) -> list[int]:
    out = []
    while True:
        try:
            out.append(box.receive_nowait().message.body["n"])  # type: ignore[attr-defined]
        except trio.WouldBlock:
            return out


async def test_unacknowledged_messages_come_back_after_reopen(tmp_path: Path) -> None:
    d = tmp_path / "alice"
    await fill(d, 4)
    box = open_file_mailbox(d)
    first = await box.receive()
    await box.ack(first)
    await box.receive()  # received, never acknowledged
    box.close()
    box = open_file_mailbox(d)
    again = await box.receive()
    assert again.message.body == {"n": 1}
    assert again.redelivered
    assert drain(box) == [2, 3]
    box.close()


async def test_out_of_order_acknowledgements_survive_reopen(tmp_path: Path) -> None:
    d = tmp_path / "alice"
    await fill(d, 4)
    box = open_file_mailbox(d)
    deliveries = [await box.receive() for _ in range(4)]
    await box.ack(deliveries[2], deliveries[0])
    box.close()
    box = open_file_mailbox(d)
    assert drain(box) == [1, 3]
    box.close()


async def test_fully_acknowledged_segments_are_removed(tmp_path: Path) -> None:
    d = tmp_path / "alice"
    await fill(d, 200, segment_bytes=1000)
    box = open_file_mailbox(d, segment_bytes=1000)
    segments_before = box.statistics().segments
    for _ in range(200):
        await box.ack(await box.receive())
    assert segments_before > 10
    assert box.statistics().segments == 1  # only the newest, still being written
    box.close()


async def test_a_torn_tail_is_cut_off_kept_aside_and_reported(tmp_path: Path) -> None:
    d = tmp_path / "alice"
    await fill(d, 3)
    (segment,) = d.glob("*.log")
    size = segment.stat().st_size
    with open(segment, "ab") as f:
        f.write(encode(msg(99).to_json_bytes())[:20])
    reports: list[CorruptRecord] = []
    box = open_file_mailbox(d, on_corruption=reports.append)
    assert segment.stat().st_size == size
    assert [r.action for r in reports] == ["truncated"]
    assert reports[0].saved_to is not None
    assert Path(reports[0].saved_to).stat().st_size == 20
    assert drain(box) == [0, 1, 2]
    await box.send(msg(3))
    assert drain(box) == [3]
    box.close()


async def test_a_corrupt_record_in_the_middle_is_skipped_and_reported(tmp_path: Path) -> None:
    d = tmp_path / "alice"
    await fill(d, 3)
    (segment,) = d.glob("*.log")
    data = bytearray(segment.read_bytes())
    second = len(encode(msg(0).to_json_bytes()))
    data[second + 30] ^= 0xFF
    segment.write_bytes(bytes(data))
    reports: list[CorruptRecord] = []
    box = open_file_mailbox(d, on_corruption=reports.append)
    assert drain(box) == [0, 2]
    assert [r.action for r in reports] == ["skipped"]
    assert box.statistics().corrupt_skipped == 1
    box.close()


async def test_corruption_goes_to_the_event_log(tmp_path: Path) -> None:
    root = tmp_path / "mailboxes"
    await fill(root / "alice", 2)
    (segment,) = (root / "alice").glob("*.log")
    data = bytearray(segment.read_bytes())
    data[20] ^= 0x01
    segment.write_bytes(bytes(data))
    events = EventLog()
    po = PostOffice(root, events=events)
    box = po.open("alice")
    assert drain(box) == [1]
    (event,) = events.of_type("mailbox.corrupt")
    assert event.data["actor"] == "alice"
    await po.aclose()


@pytest.mark.parametrize(
    "garbage",
    ["notes.txt", "0001.log", "cursor.bak", "subdir/"],
)
async def test_a_directory_with_foreign_files_is_refused_unchanged(
    tmp_path: Path, garbage: str
) -> None:
    d = tmp_path / "alice"
    await fill(d, 1)
    if garbage.endswith("/"):
        (d / garbage.rstrip("/")).mkdir()
    else:
        (d / garbage).write_text("hello")
    before = sorted((p.name, p.stat().st_size) for p in d.iterdir())
    with pytest.raises(MailboxError, match=garbage.rstrip("/")):
        open_file_mailbox(d)
    assert sorted((p.name, p.stat().st_size) for p in d.iterdir()) == before


async def test_a_garbage_cursor_is_refused_with_its_path(tmp_path: Path) -> None:
    d = tmp_path / "alice"
    await fill(d, 1)
    (d / "cursor").write_text("{not json")
    with pytest.raises(MailboxError, match="cursor"):
        open_file_mailbox(d)
    assert (d / "cursor").read_text() == "{not json"


async def test_a_file_where_the_mailbox_should_be_is_refused(tmp_path: Path) -> None:
    (tmp_path / "alice").write_text("x")
    with pytest.raises(MailboxError, match="not a directory"):
        open_file_mailbox(tmp_path / "alice")


async def test_a_mailbox_root_with_a_bad_actor_directory_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "mailboxes"
    (root / "Not Valid").mkdir(parents=True)
    po = PostOffice(root)
    with pytest.raises(MailboxError, match="Not Valid"):
        po.names()


async def test_opening_the_same_mailbox_twice_in_one_process_is_refused(tmp_path: Path) -> None:
    box = open_file_mailbox(tmp_path / "alice")
    with pytest.raises(MailboxError, match="already open"):
        open_file_mailbox(tmp_path / "alice")
    box.close()


async def test_a_writer_elsewhere_is_noticed_by_polling(
    tmp_path: Path, autojump_clock: object
) -> None:
    """Without inotify: a sender that does not share the owner object is seen on a poll."""
    box = open_file_mailbox(tmp_path / "alice", poll_interval=0.05, watch=False)
    writer = MailboxWriter(tmp_path / "alice")
    async with trio.open_nursery() as nursery:

        async def later() -> None:
            await trio.sleep(1)
            await writer.send(msg(5))

        nursery.start_soon(later)
        start = trio.current_time()
        delivery = await box.receive()
        waited = trio.current_time() - start
    assert delivery.message.body == {"n": 5}
    assert 1 <= waited <= 1.05 + 1e-9
    writer.close()
    box.close()


async def test_in_process_senders_wake_receivers_without_polling(tmp_path: Path) -> None:
    po = PostOffice(tmp_path / "mailboxes", poll_interval=None)
    box = po.open("alice")
    async with trio.open_nursery() as nursery:
        nursery.start_soon(po.send, msg(1))
        delivery = await box.receive()
    assert delivery.message.body == {"n": 1}
    await po.aclose()


async def test_a_post_office_elsewhere_reaches_an_existing_mailbox(tmp_path: Path) -> None:
    root = tmp_path / "mailboxes"
    owner = PostOffice(root)
    box = owner.open("alice")
    other = PostOffice(root)  # knows alice only from the directory on disk
    assert "alice" in other
    await other.send(msg(3))
    assert (await box.receive()).message.body == {"n": 3}
    await other.aclose()
    await owner.aclose()


async def test_send_nowait_is_durable_at_once(tmp_path: Path) -> None:
    box = open_file_mailbox(tmp_path / "alice", durability=Durability.ALWAYS)
    box.send_nowait(msg(1))
    box.close()
    box = open_file_mailbox(tmp_path / "alice")
    assert drain(box) == [1]
    box.close()


async def test_batch_senders_share_fsyncs(tmp_path: Path) -> None:
    box = open_file_mailbox(tmp_path / "alice", durability=Durability.BATCH)
    async with trio.open_nursery() as nursery:
        for n in range(32):
            nursery.start_soon(box.send, msg(n))
    flushes = box._writer.flushes
    assert 1 <= flushes < 32
    assert sorted(drain(box)) == list(range(32))
    box.close()


def test_lock_and_cursor_files_are_all_a_mailbox_directory_holds(tmp_path: Path) -> None:
    async def main() -> None:
        await fill(tmp_path / "alice", 2)
        box = open_file_mailbox(tmp_path / "alice")
        await box.ack(await box.receive())
        box.close()

    trio.run(main)
    names = sorted(os.listdir(tmp_path / "alice"))
    assert names == ["0000000000000001.log", "cursor", "lock"]


async def test_a_writer_in_another_process_wakes_the_receiver_without_polling(
    tmp_path: Path,
) -> None:
    """inotify: no poll interval at all, yet the record from the child is seen."""

    import sys

    box = open_file_mailbox(tmp_path / "alice", poll_interval=None)
    script = (
        "import sys, trio\n"
        "from pathlib import Path\n"
        "from coterie.mailbox import MailboxWriter\n"
        "from coterie.messages import Message\n"
        "w = MailboxWriter(Path(sys.argv[1]))\n"
        "trio.run(w.send, Message.new('child', 'alice', 'n', {'n': 42}))\n"
    )
    async with trio.open_nursery() as nursery:

        async def child() -> None:
            await trio.testing.wait_all_tasks_blocked()
            await trio.run_process([sys.executable, "-c", script, str(tmp_path / "alice")])

        nursery.start_soon(child)
        with trio.fail_after(30):
            delivery = await box.receive()
    assert delivery.message.body == {"n": 42}
    box.close()


async def test_a_cancelled_acknowledgement_still_reaches_the_disk(tmp_path: Path) -> None:
    """A stop that cancels an actor mid-ack must not redeliver what it handled."""
    d = tmp_path / "alice"
    await fill(d, 2)
    box = open_file_mailbox(d, durability=Durability.BATCH)
    first, second = await box.receive(), await box.receive()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(box.ack, first)  # leads a flush
        await trio.sleep(0)
        with trio.CancelScope() as scope:
            scope.cancel()
            await box.ack(second)  # waits for the next flush, cancelled meanwhile
    box.close()
    box = open_file_mailbox(d)
    assert drain(box) == []
    box.close()


async def test_a_sealed_newest_segment_is_never_deleted(tmp_path: Path) -> None:
    """A writer killed between sealing a segment and creating the next one:
    acknowledging everything must not delete the sealed segment, or the next
    writer would restart the numbering below the cursor and be lost."""
    from coterie.journal import SEAL
    from coterie.mailbox._segments import list_segments, segment_path

    d = tmp_path / "alice"
    await fill(d, 3)
    with open(segment_path(d, 1), "ab") as f:
        f.write(SEAL)  # the writer died right after sealing
    box = open_file_mailbox(d)
    for _ in range(3):
        await box.ack(await box.receive())
    box.close()
    assert list_segments(d) == [1]
    await fill(d, 1)  # the next writer goes on at segment 2
    box = open_file_mailbox(d)
    assert drain(box) == [0]
    box.close()


@pytest.mark.parametrize("durability", [Durability.BATCH, Durability.ALWAYS])
async def test_concurrent_senders_never_strand_a_message(
    tmp_path: Path, durability: Durability
) -> None:
    """Sends completing out of order (group commit) must all reach the receiver."""
    box = open_file_mailbox(tmp_path / "alice", durability=durability, poll_interval=None)
    senders, each = 16, 40
    got: list[int] = []
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:

            async def sender(k: int) -> None:
                for n in range(each):
                    await box.send(msg(k * 1000 + n))

            for k in range(senders):
                nursery.start_soon(sender, k)
            while len(got) < senders * each:
                delivery = await box.receive()
                got.append(delivery.message.body["n"])
                await box.ack(delivery)
    assert sorted(got) == sorted(k * 1000 + n for k in range(senders) for n in range(each))
    box.close()


async def test_a_message_held_unacknowledged_keeps_the_cursor_small(tmp_path: Path) -> None:
    """A lead holds its request all run: the cursor lists that one hole, not every
    message acknowledged after it, and a reopen still knows exactly what is done."""
    d = tmp_path / "alice"
    await fill(d, 201)
    box = open_file_mailbox(d)
    held = await box.receive()
    for _ in range(200):
        await box.ack(await box.receive())
    assert len((d / "cursor").read_bytes()) < 200
    box.close()
    box = open_file_mailbox(d)
    again = await box.receive()
    assert again.message.id == held.message.id
    assert drain(box) == []
    await box.ack(again)
    box.close()
    reopened = open_file_mailbox(d)
    assert drain(reopened) == []
    reopened.close()


async def test_a_cursor_written_before_the_compact_format_still_reads(tmp_path: Path) -> None:
    d = tmp_path / "alice"
    await fill(d, 3)
    box = open_file_mailbox(d)
    first = await box.receive()
    third = [await box.receive() for _ in range(2)][1]
    box.close()
    at, acked = list(first.position), [list(third.position)]
    (d / "cursor").write_text(f'{{"v":1,"at":{at},"acked":[{acked[0]}]}}'.replace(" ", ""))
    box = open_file_mailbox(d)
    assert drain(box) == [0, 1]
    box.close()


async def test_a_post_office_keeps_few_writers_open_for_mailboxes_owned_elsewhere(
    tmp_path: Path,
) -> None:
    """A run answers many short-lived reply mailboxes (the observer asks once a
    second): their writers must not pile up as open files."""
    root = tmp_path / "mailboxes"
    post = PostOffice(root, durability=Durability.NONE)
    before = len(os.listdir("/proc/self/fd"))
    for n in range(200):
        name = f"reply-{n}"
        other = PostOffice(root, durability=Durability.NONE)
        other.open(name)  # owned by "another process" that then goes away
        await other.aclose()
        await post.send(Message.new(sender="control", recipient=name, kind="answer"))
        shutil.rmtree(root / name)
    assert len(os.listdir("/proc/self/fd")) - before <= 2 * WRITERS
    await post.aclose()
    assert len(os.listdir("/proc/self/fd")) <= before
