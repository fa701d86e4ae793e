"""What only the Redis mailbox has: dead letters, takeover by a new consumer,
the server's AOF, run namespacing, and the refusals a network backend needs.
The semantics shared with the file mailbox run in test_semantics.py (kind
``redis``), the stateful machine and kill -9 in their own files."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
import trio
from hypothesis import given
from hypothesis import strategies as st

from coterie.backends.redis import RedisMailbox, open_redis_post_office
from coterie.backends.redis.client import connect, parse_backend
from coterie.backends.redis.link import entry_id, entry_position
from coterie.errors import MailboxError, UnknownActor
from coterie.events import EventLog
from coterie.messages import Message
from tests.redis_server import LOSES_SERVER, RedisServer, blocked_reads, redis_server

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

    from coterie.mailbox import PostOffice


def msg(n: int, to: str = "alice", *, durable: bool = True) -> Message:
    return Message.new("tester", to, "n", {"n": n}, durable=durable)


def payload_of(fields: Mapping[bytes | str, bytes | str]) -> Message:
    raw = fields[b"m"]
    return Message.from_json_bytes(raw if isinstance(raw, bytes) else raw.encode())


def opened(post: PostOffice, name: str = "alice") -> RedisMailbox:
    box = post.open(name)
    assert isinstance(box, RedisMailbox)
    return box


async def test_a_message_delivered_too_often_goes_to_the_dead_letters(redis_url: str) -> None:
    events = EventLog()
    target = parse_backend(redis_url)
    async with open_redis_post_office(target, "r1", max_deliveries=2, events=events) as post:
        box = opened(post)
        await post.send(msg(1))
        await post.send(msg(2))
        first = await box.receive()
        assert not first.redelivered
        box.requeue_in_flight()  # the actor crashed on it: delivery 2
        again = await box.receive()
        assert again.message.id == first.message.id
        assert again.redelivered
        box.requeue_in_flight()  # delivery 3 > 2: dead
        with trio.fail_after(5):
            while not events.of_type("mailbox.dead_letter"):
                await trio.sleep(0.01)
        other = await box.receive()
        assert other.message.body == {"n": 2}
        (event,) = events.of_type("mailbox.dead_letter")
        assert event.data["message_id"] == first.message.id
        assert event.data["deliveries"] == 3
        assert event.data["reason"] == "too many deliveries"
    async with connect(target) as client:
        dead = await client.xrange(target.key("run", "r1", "dead-letter", "alice"))
        assert len(dead) == 1
        assert payload_of(dead[0].field_values).id == first.message.id
        assert dead[0].field_values[b"deliveries"] == b"3"
        remaining = await client.xrange(target.key("run", "r1", "mailbox", "alice"))
        assert [payload_of(e.field_values).body for e in remaining] == [{"n": 2}]


async def test_deliveries_are_counted_across_openings(redis_url: str) -> None:
    events = EventLog()
    target = parse_backend(redis_url)
    seen: list[bool | None] = []
    for _ in range(3):
        async with open_redis_post_office(target, "r1", max_deliveries=2, events=events) as post:
            box = opened(post)
            if not seen:
                await post.send(msg(1))
            await box.sync()
            try:
                seen.append(box.receive_nowait().redelivered)
            except trio.WouldBlock:
                seen.append(None)
            with trio.fail_after(5):
                while len(seen) == 3 and not events.of_type("mailbox.dead_letter"):
                    await trio.sleep(0.01)
            # closed without an ack: a crash, as far as the server knows
    assert seen == [False, True, None]
    assert events.of_type("mailbox.dead_letter")[0].data["deliveries"] == 3


async def test_a_receiver_elsewhere_is_woken_by_its_blocking_read(redis_url: str) -> None:
    target = parse_backend(redis_url)
    async with (
        open_redis_post_office(target, "r1") as receiver_side,
        open_redis_post_office(target, "r1") as sender_side,
    ):
        box = opened(receiver_side)
        await box.sync()
        async with trio.open_nursery() as nursery:

            async def later() -> None:
                await trio.sleep(0.05)
                await sender_side.send(msg(7, durable=False))

            nursery.start_soon(later)
            with trio.fail_after(5):
                delivery = await box.receive()
        assert delivery.message.body == {"n": 7}
        assert not delivery.message.durable
        await box.ack(delivery)
        assert "alice" in sender_side.names()


async def test_send_nowait_is_refused_and_writes_nothing(redis_url: str) -> None:
    target = parse_backend(redis_url)
    async with open_redis_post_office(target, "r1") as post:
        box = opened(post)
        await box.sync()
        with pytest.raises(MailboxError, match="await send"):
            post.send_nowait(msg(1))
        with pytest.raises(MailboxError, match="await send"):
            box.send_nowait(msg(1))
        with pytest.raises(UnknownActor, match="bob"):
            await post.send(msg(1, to="bob"))
    async with connect(target) as client:
        assert await client.xlen(target.key("run", "r1", "mailbox", "alice")) == 0
        assert not await client.exists([target.key("run", "r1", "mailbox", "bob")])


async def test_runs_are_namespaced_and_every_key_has_the_prefix(redis_url: str) -> None:
    target = parse_backend(redis_url + "?prefix=team7")
    async with (
        open_redis_post_office(target, "run-a") as a,
        open_redis_post_office(target, "run-b") as b,
    ):
        await opened(a).sync()
        with pytest.raises(UnknownActor):
            await b.send(msg(1))
        await a.send(msg(1))
    async with connect(target) as client:
        keys = [k.decode() async for k in client.scan_iter()]
    assert keys
    assert all(k.startswith("team7:run:run-a:") for k in keys), keys


async def test_statistics_say_what_the_server_promises(redis_url: str) -> None:
    async with open_redis_post_office(parse_backend(redis_url), "r1") as post:
        box = opened(post)
        await box.sync()
        # the session's server runs without AOF: a restart loses everything
        assert box.statistics().durability == "redis:no-aof"


@LOSES_SERVER
async def test_a_server_restarted_with_aof_always_keeps_acknowledged_state(
    tmp_path: Path,
) -> None:
    with redis_server(tmp_path, appendonly=True, appendfsync="always") as server:
        target = parse_backend(server.url)
        async with open_redis_post_office(target, "r1") as post:
            box = opened(post)
            assert (await _synced(box)).statistics().durability == "redis:aof-always"
            sent = [msg(n) for n in range(5)]
            for m in sent:
                await post.send(m)
            held = [await box.receive() for _ in range(3)]
            await box.ack(held[0], held[2])
        server.restart()  # kill -9, then start from the AOF
        async with open_redis_post_office(target, "r1") as post:
            box = opened(post)
            await box.sync()
            back = []
            while True:
                try:
                    back.append(box.receive_nowait())
                except trio.WouldBlock:
                    break
        assert [d.message.id for d in back] == [sent[1].id, sent[3].id, sent[4].id]
        # All three were read ahead into the first consumer's buffer, so the
        # server counts them delivered once (docs/scale-out.md).
        assert all(d.redelivered for d in back)
    import gc

    gc.collect()


async def _synced(box: RedisMailbox) -> RedisMailbox:
    await box.sync()
    return box


async def test_replicas_asked_for_and_missing_fail_a_durable_send(redis_url: str) -> None:
    from coredis.exceptions import ReplicationError

    target = parse_backend(redis_url)
    async with open_redis_post_office(target, "r1", replicas=1, replica_timeout=0.05) as post:
        box = opened(post)
        await box.sync()
        with pytest.raises(ReplicationError):
            await post.send(msg(1))  # the session's server has no replica
        await post.send(msg(2, durable=False))  # no WAIT for what costs nothing to lose
        got = [(await box.receive()).message.body["n"] for _ in range(2)]
    assert got == [1, 2]  # written all the same: the sender may retry (at least once)


async def test_the_consumers_of_earlier_openings_are_removed(redis_url: str) -> None:
    target = parse_backend(redis_url)
    for n in range(3):
        async with open_redis_post_office(target, "r1") as post:
            box = opened(post)
            await post.send(msg(n))
            await box.receive()  # held, never acknowledged: the next opening takes it
    async with connect(target) as client:
        key = target.key("run", "r1", "mailbox", "alice")
        consumers = await client.xinfo_consumers(key, "receiver")
    assert [c[b"pending"] for c in consumers] == [3]  # the last opening's, holding all


async def test_a_server_that_lost_its_scripts_gets_them_again(redis_url: str) -> None:
    target = parse_backend(redis_url)
    async with open_redis_post_office(target, "r1") as post, connect(target) as client:
        box = opened(post)
        await post.send(msg(1))
        await post.send(msg(2))
        first = await box.receive()
        await box.ack(first)  # the ack script is cached on the server now
        await client.script_flush()  # what a restart does
        await box.ack(await box.receive())
        assert await client.xlen(target.key("run", "r1", "mailbox", "alice")) == 0


@given(st.integers(0, 2**48), st.integers(0, 2**32))
def test_entry_ids_and_positions_round_trip(ms: int, seq: int) -> None:
    assert entry_position(entry_id((ms, seq))) == (ms, seq)
    assert entry_position(entry_id((ms, seq)).encode()) == (ms, seq)


async def test_one_blocking_read_serves_every_mailbox_of_a_post_office(redis_url: str) -> None:
    """A reader per mailbox held a connection each: past 64 mailboxes in one
    process (a worker hosting many teammates) the client had none left."""
    target = parse_backend(redis_url)
    names = [f"mate{n}" for n in range(100)]
    async with (
        open_redis_post_office(target, "r1") as receiver_side,
        open_redis_post_office(target, "r1") as sender_side,
    ):
        boxes = [opened(receiver_side, name) for name in names]
        with trio.fail_after(20):  # the old code: no connection left, ever
            for box in boxes:
                await box.sync()
            assert await blocked_reads(target) == 1
            for n, name in enumerate(names):
                await sender_side.send(msg(n, name, durable=False))
            for n, box in enumerate(boxes):
                delivery = await box.receive()
                assert delivery.message.body == {"n": n}
                await box.ack(delivery)


async def test_mailboxes_closed_and_opened_again_leave_the_client_whole(redis_url: str) -> None:
    """Closing a mailbox cut its blocking read short, and coredis (6.9) gives no
    pool slot back for that: after 64 closes the post office could send nothing."""
    target = parse_backend(redis_url)
    async with (
        open_redis_post_office(target, "r1") as receiver_side,
        open_redis_post_office(target, "r1") as sender_side,
    ):
        with trio.fail_after(20):  # the old code: no connection left, ever
            for n in range(80):
                box = opened(receiver_side, f"short{n}")
                await box.sync()
                await trio.sleep(0.01)
                await box.aclose()
            box = opened(receiver_side, "alice")
            await box.sync()
            await sender_side.send(msg(1, durable=False))
            await receiver_side.send(msg(2, durable=False))
            assert [(await box.receive()).message.body["n"] for _ in range(2)] == [1, 2]


async def test_a_mailbox_opened_during_a_blocking_read_gets_its_mail_at_once(
    redis_url: str,
) -> None:
    target = parse_backend(redis_url)
    async with (
        open_redis_post_office(target, "r1") as receiver_side,
        open_redis_post_office(target, "r1") as sender_side,
    ):
        first = opened(receiver_side, "first")
        await first.sync()
        assert await blocked_reads(target) == 1  # the one read blocks, for "first" only
        late = opened(receiver_side, "late")
        await late.sync()
        start = trio.current_time()
        await sender_side.send(msg(1, "late", durable=False))
        with trio.fail_after(5):
            await late.receive()
        # well under the read's block (5 s): the read was woken to take "late" in
        assert trio.current_time() - start < 2.5


async def test_where_the_server_refuses_client_commands_a_new_mailbox_waits_out_the_read(
    redis_url: str, redis_session_server: RedisServer
) -> None:
    """Managed servers often refuse ``CLIENT``: the read is then not woken early,
    and a mailbox opened meanwhile is taken in when it ends (at most ``block``)."""
    redis_session_server.command(
        "ACL", "SETUSER", "noclient", "on", ">pw", "~*", "&*", "+@all", "-client"
    )
    try:
        target = parse_backend(redis_url.replace("redis://", "redis://noclient:pw@"))
        async with (
            open_redis_post_office(target, "r1", block=0.5) as receiver_side,
            open_redis_post_office(target, "r1", block=0.5) as sender_side,
        ):
            first = opened(receiver_side, "first")
            await first.sync()
            await trio.sleep(0.1)
            late = opened(receiver_side, "late")
            with trio.fail_after(5):
                await late.sync()
                await sender_side.send(msg(1, "late", durable=False))
                assert (await late.receive()).message.body == {"n": 1}
    finally:
        redis_session_server.command("ACL", "DELUSER", "noclient")
