"""The event log: file, history, live subscribers and listeners."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
import trio

from coterie.events import Event, EventLog, read_events

if TYPE_CHECKING:
    from pathlib import Path


def test_events_are_appended_as_json_lines_and_numbered(tmp_path: Path) -> None:
    log = EventLog(tmp_path / "events.jsonl")
    log.emit("actor.started", actor="a")
    log.emit("actor.crashed", actor="a", reason="boom")
    log.close()
    events = list(read_events(tmp_path / "events.jsonl"))
    assert [(e.seq, e.type) for e in events] == [(1, "actor.started"), (2, "actor.crashed")]
    assert events[1].data == {"actor": "a", "reason": "boom"}


def test_numbering_continues_after_reopen_and_a_torn_line_is_skipped(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    log = EventLog(path)
    log.emit("x")
    log.close()
    with open(path, "a") as f:
        f.write('{"seq": 2, "ts"')  # torn by a crash
    log = EventLog(path)
    assert log.emit("y").seq == 2
    log.close()


def test_published_events_reach_listeners_but_not_the_file(tmp_path: Path) -> None:
    log = EventLog(tmp_path / "events.jsonl")
    seen: list[Event] = []
    with log.listen(seen.append):
        log.publish("agent.text_delta", text="hi")
        log.emit("agent.message")
    log.emit("after")
    log.close()
    assert [e.type for e in seen] == ["agent.text_delta", "agent.message"]
    assert [e.type for e in read_events(tmp_path / "events.jsonl")] == ["agent.message", "after"]


async def test_subscribers_see_events_live() -> None:
    log = EventLog()
    with log.subscribe() as feed:
        log.emit("one")
        log.emit("two")
        got = [feed.receive_nowait().type, feed.receive_nowait().type]
    assert got == ["one", "two"]


async def test_a_slow_subscriber_loses_events_not_the_emitter() -> None:
    log = EventLog()
    with log.subscribe(buffer=1) as feed:
        log.emit("one")
        log.emit("two")
        assert feed.receive_nowait().type == "one"
        with pytest.raises(trio.WouldBlock):
            feed.receive_nowait()
    assert log.dropped == 1
