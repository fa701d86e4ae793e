"""Mailbox semantics shared by the memory mailbox and every file durability policy."""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

import pytest
import trio

from coterie.errors import InvalidActorName, InvalidMessage, UnknownActor
from coterie.mailbox import PostOffice
from coterie.messages import Message

if TYPE_CHECKING:
    from collections.abc import Callable
    from contextlib import AbstractAsyncContextManager


def msg(to: str, n: int, kind: str = "n", sender: str = "tester") -> Message:
    return Message.new(sender, to, kind, {"n": n})


async def test_messages_arrive_in_send_order(post_office: PostOffice) -> None:
    box = post_office.open("alice")
    for n in range(5):
        await post_office.send(msg("alice", n))
    got = [(await box.receive()).message.body["n"] for _ in range(5)]
    assert got == [0, 1, 2, 3, 4]


async def test_receive_waits_for_a_send(post_office: PostOffice, autojump_clock: object) -> None:
    box = post_office.open("alice")
    async with trio.open_nursery() as nursery:

        async def later() -> None:
            await trio.sleep(1)
            await post_office.send(msg("alice", 7))

        nursery.start_soon(later)
        delivery = await box.receive()
    assert delivery.message.body == {"n": 7}


async def test_receive_nowait_on_empty_raises_would_block(post_office: PostOffice) -> None:
    box = post_office.open("alice")
    with pytest.raises(trio.WouldBlock):
        box.receive_nowait()


async def test_selective_receive_leaves_others_in_place(post_office: PostOffice) -> None:
    box = post_office.open("alice")
    await post_office.send(msg("alice", 1, kind="work"))
    await post_office.send(msg("alice", 2, kind="shutdown_request"))
    first = await box.receive(where=lambda m: m.kind == "shutdown_request")
    assert first.message.body == {"n": 2}
    assert (await box.receive()).message.body == {"n": 1}


async def test_requeue_redelivers_unacknowledged_in_order(post_office: PostOffice) -> None:
    box = post_office.open("alice")
    for n in range(3):
        await post_office.send(msg("alice", n))
    a, b = await box.receive(), await box.receive()
    await box.ack(a)
    assert box.requeue_in_flight() == 1
    again = await box.receive()
    assert again.message.id == b.message.id
    assert again.redelivered
    assert (await box.receive()).message.body == {"n": 2}


async def test_acking_twice_is_harmless(post_office: PostOffice) -> None:
    box = post_office.open("alice")
    await post_office.send(msg("alice", 1))
    d = await box.receive()
    await box.ack(d)
    await box.ack(d)
    assert box.statistics().acknowledged == 1


async def test_statistics_count_the_traffic(post_office: PostOffice) -> None:
    box = post_office.open("alice")
    for n in range(3):
        await post_office.send(msg("alice", n))
    d = await box.receive()
    await box.ack(d)
    await box.receive()
    stats = box.statistics()
    assert (stats.sent, stats.received, stats.acknowledged) == (3, 2, 1)
    assert (stats.pending, stats.in_flight) == (1, 1)


async def test_closing_wakes_receivers_with_closed_resource_error(post_office: PostOffice) -> None:
    box = post_office.open("alice")
    with pytest.RaisesGroup(trio.ClosedResourceError):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(box.receive)
            await trio.testing.wait_all_tasks_blocked()
            await box.aclose()
    with pytest.raises(trio.ClosedResourceError):
        await box.send(msg("alice", 1))


async def test_unknown_recipient_is_refused_at_the_sender(post_office: PostOffice) -> None:
    post_office.open("alice")
    with pytest.raises(UnknownActor, match="nobody"):
        await post_office.send(msg("nobody", 1))


@pytest.mark.parametrize("bad", ["", "Alice", "-x", "a b", "a/b", "x" * 65, "../etc", "é"])
def test_invalid_actor_names_are_refused(bad: str) -> None:
    with pytest.raises(InvalidActorName):
        Message.new("tester", bad, "n")
    with pytest.raises(InvalidActorName):
        PostOffice(None).open(bad)


async def test_a_body_that_is_not_json_is_refused_and_nothing_is_written(
    post_office: PostOffice,
) -> None:
    box = post_office.open("alice")
    for bad in [{1, 2}, object(), float("nan"), {"k": b"bytes"}]:
        with pytest.raises(InvalidMessage, match="JSON"):
            await post_office.send(Message.new("tester", "alice", "n", bad))
    await post_office.send(msg("alice", 1))
    assert (await box.receive()).message.body == {"n": 1}
    assert box.statistics().pending == 0


async def test_a_message_for_someone_else_is_refused_by_a_mailbox(post_office: PostOffice) -> None:
    box = post_office.open("alice")
    post_office.open("bob")
    with pytest.raises(InvalidMessage, match="bob"):
        await box.send(msg("bob", 1))


async def test_after_sync_receive_nowait_sees_everything_sent_before(
    make_post_office: Callable[..., AbstractAsyncContextManager[PostOffice]], mailbox_kind: str
) -> None:
    """Sent from another post office (another process), unless in memory: once the
    receiver synced, nothing sent before waits for a reader to bring it (the
    team lead decides "nothing is waiting" on this)."""
    async with make_post_office() as here:
        box = here.open("alice")
        async with contextlib.AsyncExitStack() as stack:
            there = here
            if mailbox_kind != "memory":
                there = await stack.enter_async_context(make_post_office())
            for n in range(20):
                await there.send(msg("alice", n))
            await box.sync()
            got = [box.receive_nowait().message.body["n"] for _ in range(20)]
    assert got == list(range(20))
