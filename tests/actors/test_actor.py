"""The actor base under supervision: handle, acknowledge, crash, restart, ask."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
import trio

from coterie.actors import STOP, Actor, ActorContext, actor_spec
from coterie.errors import AskTimeout, UnknownActor
from coterie.events import EventLog
from coterie.mailbox import PostOffice
from coterie.messages import Message
from coterie.supervisors import Restart, Supervisor

if TYPE_CHECKING:
    from pathlib import Path


class Recorder(Actor):
    """Appends every body it handles to a shared list; crashes on request."""

    def __init__(self, log: list[Any], crash_on: set[int] | None = None) -> None:
        self.log = log
        self.crash_on = crash_on if crash_on is not None else set()

    async def handle(self, ctx: ActorContext, message: Message) -> None:
        n = message.body["n"]
        if n in self.crash_on:
            self.crash_on.discard(n)  # crash once
            raise RuntimeError(f"boom on {n}")
        self.log.append((n, ctx.redelivered))


class Echo(Actor):
    async def handle(self, ctx: ActorContext, message: Message) -> None:
        if message.kind == "ping":
            await ctx.reply(message, "pong", {"echo": message.body})


async def send_n(post: PostOffice, to: str, *ns: int) -> None:
    for n in ns:
        await post.send(Message.new("tester", to, "n", {"n": n}))


async def wait_until(predicate: Any) -> None:
    while not predicate():
        await trio.sleep(0.01)


async def test_an_actor_handles_its_messages_in_order(
    post_office: PostOffice, autojump_clock: object
) -> None:
    log: list[Any] = []
    sup = Supervisor("root", [actor_spec("worker", lambda _: Recorder(log), post_office)])
    async with trio.open_nursery() as nursery:
        await nursery.start(sup.run)
        await send_n(post_office, "worker", 1, 2, 3)
        await wait_until(lambda: len(log) == 3)
        await sup.stop()
    assert [n for n, _ in log] == [1, 2, 3]
    assert post_office["worker"].statistics().acknowledged == 3


async def test_a_crash_is_restarted_and_the_message_redelivered(
    post_office: PostOffice, autojump_clock: object
) -> None:
    log: list[Any] = []
    crash_on = {2}
    events = EventLog()
    spec = actor_spec("worker", lambda _: Recorder(log, crash_on), post_office, events=events)
    sup = Supervisor("root", [spec], events=events)
    async with trio.open_nursery() as nursery:
        await nursery.start(sup.run)
        await send_n(post_office, "worker", 1, 2, 3)
        await wait_until(lambda: len(log) == 3)
        await sup.stop()
    assert log == [(1, False), (2, True), (3, False)]
    crashed = events.of_type("actor.crashed")
    assert len(crashed) == 1
    assert "boom on 2" in crashed[0].data["reason"]
    assert len(events.of_type("actor.restarted")) == 1


async def test_a_message_handled_but_not_acknowledged_is_not_handled_twice(
    post_office: PostOffice, autojump_clock: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The crash falls between handling and acknowledging: the redelivery is skipped."""
    log: list[Any] = []
    box = post_office.open("worker")
    real_ack = box.ack
    failed = []

    async def flaky_ack(*deliveries: Any) -> None:
        if not failed:
            failed.append(True)
            raise OSError("disk hiccup")
        await real_ack(*deliveries)

    monkeypatch.setattr(box, "ack", flaky_ack)
    sup = Supervisor("root", [actor_spec("worker", lambda _: Recorder(log), post_office)])
    async with trio.open_nursery() as nursery:
        await nursery.start(sup.run)
        await send_n(post_office, "worker", 1, 2)
        await wait_until(lambda: len(log) == 2 and box.statistics().acknowledged == 2)
        await sup.stop()
    assert [n for n, _ in log] == [1, 2]


async def test_a_stop_message_ends_a_transient_actor_for_good(
    post_office: PostOffice, autojump_clock: object
) -> None:
    log: list[Any] = []
    events = EventLog()
    spec = actor_spec(
        "worker", lambda _: Recorder(log), post_office, restart=Restart.TRANSIENT, events=events
    )
    sup = Supervisor("root", [spec], events=events)
    async with trio.open_nursery() as nursery:
        await nursery.start(sup.run)
        await send_n(post_office, "worker", 1)
        await post_office.send(Message.new("tester", "worker", STOP))
        await send_n(post_office, "worker", 2)
        await wait_until(lambda: events.of_type("actor.exited"))
        await trio.sleep(1)
        await sup.stop()
    assert [n for n, _ in log] == [1]
    assert post_office["worker"].statistics().pending == 1  # 2 waits for a next incarnation
    assert not events.of_type("actor.restarted")


async def test_ask_gets_the_reply(post_office: PostOffice, autojump_clock: object) -> None:
    sup = Supervisor("root", [actor_spec("echo", lambda _: Echo(), post_office)])
    asker = ActorContext(name="asker", mailbox=post_office.open("asker"), post=post_office)
    async with trio.open_nursery() as nursery:
        await nursery.start(sup.run)
        reply = await asker.call("echo", "ping", {"x": 1}, timeout=5)
        await sup.stop()
    assert reply.kind == "pong"
    assert reply.body == {"echo": {"x": 1}}
    assert reply.correlation_id is not None


async def test_ask_times_out_and_a_late_reply_is_reported(
    post_office: PostOffice, autojump_clock: object
) -> None:
    events = EventLog()
    box = post_office.open("asker")
    post_office.open("silent")
    asker = ActorContext(name="asker", mailbox=box, post=post_office, events=events)
    with pytest.raises(AskTimeout, match="silent"):
        await asker.call("silent", "ping", timeout=2)
    (request,) = [(await post_office["silent"].receive()).message]
    await post_office.send(Message.new("silent", "asker", "pong", correlation_id=request.id))
    sup = Supervisor("root", [actor_spec("asker", lambda _: Echo(), post_office, events=events)])
    async with trio.open_nursery() as nursery:
        await nursery.start(sup.run)
        await wait_until(lambda: events.of_type("actor.late_reply"))
        await sup.stop()
    assert box.statistics().acknowledged == 1


async def test_sending_to_an_unknown_actor_fails_in_the_sender(post_office: PostOffice) -> None:
    ctx = ActorContext(name="a", mailbox=post_office.open("a"), post=post_office)
    with pytest.raises(UnknownActor):
        await ctx.send("ghost", "hello")


async def test_a_restarted_file_actor_resumes_after_reopen(
    tmp_path: Path, autojump_clock: object
) -> None:
    """A whole new process (post office reopened) redelivers what was not acknowledged."""
    root = tmp_path / "mailboxes"
    post = PostOffice(root)
    await send_n(post, post.open("worker") and "worker", 1, 2)
    first = await post["worker"].receive()
    await post["worker"].ack(first)
    await post.aclose()
    log: list[Any] = []
    post = PostOffice(root)
    sup = Supervisor("root", [actor_spec("worker", lambda _: Recorder(log), post)])
    async with trio.open_nursery() as nursery:
        await nursery.start(sup.run)
        await wait_until(lambda: log)
        await sup.stop()
    await post.aclose()
    assert log == [(2, True)]
