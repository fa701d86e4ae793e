"""The event log on a Redis stream: every stored event copied, in order, none lost
while the server is away."""

from __future__ import annotations

from typing import TYPE_CHECKING

import trio

from coterie.backends.redis import eventstream
from coterie.backends.redis.client import connect, parse_backend
from coterie.backends.redis.eventstream import forward_events, read_stream
from coterie.events import LARGE_INPUT, EventLog
from tests.redis_server import LOSES_SERVER, collect_failed_connections, redis_server

if TYPE_CHECKING:
    from pathlib import Path

    import pytest


async def test_two_processes_events_in_one_stream_in_order(redis_url: str) -> None:
    target = parse_backend(redis_url)
    lead, worker = EventLog(), EventLog()
    async with connect(target) as client, trio.open_nursery() as nursery:
        a = await nursery.start(lambda task_status: forward_events(
            lead, client, target, "r1", origin="lead-host", task_status=task_status))  # fmt: skip
        b = await nursery.start(lambda task_status: forward_events(
            worker, client, target, "r1", origin="worker-1", task_status=task_status))  # fmt: skip
        lead.emit("actor.started", actor="lead")
        lead.publish("agent.text_delta", actor="lead", text="not stored")
        worker.emit("actor.started", actor="alice")
        worker.emit("agent.tool_call", actor="alice", input={"content": "x" * (LARGE_INPUT + 1)})
        lead.emit("actor.stopped", actor="lead")
        with trio.fail_after(5):
            while a.backlog or b.backlog:
                await trio.sleep(0.01)
        nursery.cancel_scope.cancel()
    async with connect(target) as client:
        seen = await read_stream(client, target, "r1")
        later = await read_stream(client, target, "r1", after=seen[1].id)
    # Each process's events in its order; the stream's ids order them all.
    by_origin = {
        origin: [(s.event.type, s.event.data.get("actor")) for s in seen if s.origin == origin]
        for origin in ("lead-host", "worker-1")
    }
    assert by_origin == {
        "lead-host": [("actor.started", "lead"), ("actor.stopped", "lead")],
        "worker-1": [("actor.started", "alice"), ("agent.tool_call", "alice")],
    }
    assert len(seen) == 4
    tool_call = next(s for s in seen if s.event.type == "agent.tool_call")
    assert tool_call.event.data["input"]["content"]["elided"] == "see the transcript"
    assert [s.id for s in later] == [s.id for s in seen[2:]]


async def test_events_emitted_close_together_go_in_one_round_trip(
    redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A batch gathers what follows its first event for GATHER seconds; a whole
    batch goes at once, without waiting for the rest of that time."""
    target = parse_backend(redis_url)
    log = EventLog()
    async with connect(target) as client, trio.open_nursery() as nursery:
        monkeypatch.setattr(eventstream, "GATHER", 0.5)
        fwd = await nursery.start(lambda task_status: forward_events(
            log, client, target, "r4", origin="me", task_status=task_status))  # fmt: skip
        for n in range(3):
            log.emit("loop.tick", n=n)
            await trio.sleep(0.02)
        with trio.fail_after(5):
            while fwd.backlog:
                await trio.sleep(0.01)
        assert (fwd.copied, fwd.batches) == (3, 1)
        monkeypatch.setattr(eventstream, "GATHER", 60.0)
        monkeypatch.setattr(eventstream, "BATCH", 4)
        for n in range(4):
            log.emit("loop.tick", n=n)
        with trio.fail_after(5):  # not the 60 s
            while fwd.backlog:
                await trio.sleep(0.01)
        assert (fwd.copied, fwd.batches) == (7, 2)
        nursery.cancel_scope.cancel()
    async with connect(target) as client:
        assert len(await read_stream(client, target, "r4")) == 7


@LOSES_SERVER
async def test_events_wait_in_memory_while_the_server_is_away(tmp_path: Path) -> None:
    log = EventLog()
    with redis_server(tmp_path, appendonly=True) as server:
        target = parse_backend(server.url)
        async with connect(target, connect_timeout=0.5) as client, trio.open_nursery() as n:
            fwd = await n.start(lambda task_status: forward_events(
                log, client, target, "r2", origin="me", task_status=task_status))  # fmt: skip
            log.emit("actor.started", actor="lead")
            with trio.fail_after(5):
                while fwd.backlog:
                    await trio.sleep(0.01)
            server.kill()
            log.emit("actor.crashed", actor="lead", reason="boom")  # emitting never blocks
            assert log.history[-1].type == "actor.crashed"
            await trio.sleep(0.3)
            server.start()
            log.emit("actor.restarted", actor="lead")
            with trio.fail_after(20):
                while fwd.backlog:
                    await trio.sleep(0.05)
            n.cancel_scope.cancel()
        collect_failed_connections()
        async with connect(target) as client:
            seen = await read_stream(client, target, "r2")
    assert [s.event.type for s in seen] == ["actor.started", "actor.crashed", "actor.restarted"]


async def test_a_reader_waits_for_the_next_event(redis_url: str) -> None:
    target = parse_backend(redis_url)
    log = EventLog()
    got: list[str] = []
    async with connect(target) as client, connect(target) as reader, trio.open_nursery() as n:
        await n.start(lambda task_status: forward_events(
            log, client, target, "r3", origin="me", task_status=task_status))  # fmt: skip

        async def wait() -> None:
            found = await read_stream(reader, target, "r3", after="$", block=5)
            got.extend(s.event.type for s in found)

        n.start_soon(wait)
        await trio.sleep(0.1)
        log.emit("loop.tick", n=1)
        with trio.fail_after(5):
            while not got:
                await trio.sleep(0.01)
        n.cancel_scope.cancel()
    assert got == ["loop.tick"]


async def test_a_stop_copies_what_is_left_on_a_connection_of_its_own(
    redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stop cancels the forwarder and its client's own tasks at once (their
    connection goes with them): what the forwarder still held is copied on a new
    connection, opened under its shield."""
    monkeypatch.setattr(eventstream, "GATHER", 60.0)  # held until the stop
    target = parse_backend(redis_url)
    log = EventLog()
    with trio.CancelScope() as stop:
        async with connect(target) as client, trio.open_nursery() as nursery:
            fwd = await nursery.start(lambda task_status: forward_events(
                log, client, target, "r5", origin="me", task_status=task_status))  # fmt: skip
            for n in range(3):
                log.emit("loop.tick", n=n)
            await trio.sleep(0.05)
            assert fwd.backlog == 3
            stop.cancel()
    assert fwd.backlog == 0
    async with connect(target) as client:
        assert [s.event.data["n"] for s in await read_stream(client, target, "r5")] == [0, 1, 2]


async def test_draining_sends_the_batch_being_gathered_at_once(
    redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run's stores closing drain their events before anything is cancelled."""
    monkeypatch.setattr(eventstream, "GATHER", 60.0)
    target = parse_backend(redis_url)
    log = EventLog()
    async with connect(target) as client, trio.open_nursery() as nursery:
        fwd = await nursery.start(lambda task_status: forward_events(
            log, client, target, "r6", origin="me", task_status=task_status))  # fmt: skip
        log.emit("loop.tick", n=0)
        log.emit("loop.tick", n=1)
        with trio.fail_after(5):
            await fwd.drain()
        assert (fwd.backlog, fwd.copied, fwd.batches) == (0, 2, 1)
        with trio.fail_after(5):
            await fwd.drain()  # nothing held: at once
        nursery.cancel_scope.cancel()
