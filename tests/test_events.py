"""The event log: file, history, live subscribers and listeners."""

from __future__ import annotations

import ast
import re
import typing
from pathlib import Path
from typing import Any

import pytest
import trio
from hypothesis import given
from hypothesis import strategies as st

import coterie
from coterie.events import EVENT_TYPES, Event, EventLog, EventType, read_events
from tests.strategies import json_values


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
    log.emit("board.changed")
    log.close()
    with open(path, "a") as f:
        f.write('{"seq": 2, "ts"')  # torn by a crash
    log = EventLog(path)
    assert log.emit("board.changed").seq == 2
    log.close()


def test_published_events_reach_listeners_but_not_the_file(tmp_path: Path) -> None:
    log = EventLog(tmp_path / "events.jsonl")
    seen: list[Event] = []
    with log.listen(seen.append):
        log.publish("agent.text_delta", text="hi")
        log.emit("agent.message")
    log.emit("agent.result")
    log.close()
    assert [e.type for e in seen] == ["agent.text_delta", "agent.message"]
    stored = [e.type for e in read_events(tmp_path / "events.jsonl")]
    assert stored == ["agent.message", "agent.result"]


async def test_subscribers_see_events_live() -> None:
    log = EventLog()
    with log.subscribe() as feed:
        log.emit("loop.tick")
        log.emit("loop.ended")
        got = [feed.receive_nowait().type, feed.receive_nowait().type]
    assert got == ["loop.tick", "loop.ended"]


async def test_a_slow_subscriber_loses_events_not_the_emitter() -> None:
    log = EventLog()
    with log.subscribe(buffer=1) as feed:
        log.emit("loop.tick")
        log.emit("loop.ended")
        assert feed.receive_nowait().type == "loop.tick"
        with pytest.raises(trio.WouldBlock):
            feed.receive_nowait()
    assert log.dropped == 1


# -- the catalogue of event types ------------------------------------------------

PACKAGE = Path(coterie.__file__).parent
RUNTIME_DOC = PACKAGE.parent / "docs" / "runtime.md"
EMITTERS = {"emit", "_emit", "publish"}
EVENT_LIKE = re.compile(r"^[a-z_]+\.[a-z_]+$")


def _sources() -> list[tuple[Path, ast.Module]]:
    return [(p, ast.parse(p.read_text(), str(p))) for p in sorted(PACKAGE.rglob("*.py"))]


def _call_name(call: ast.Call) -> str | None:
    func = call.func
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else None


def _emitted() -> list[tuple[str, str, set[str]]]:
    """(type, where, explicit keyword fields) of every emit call with a literal type.

    The type is the first positional string constant: ``tools._registry._emit``
    takes the tool context first.
    """
    found = []
    for path, tree in _sources():
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call) or _call_name(node) not in EMITTERS:
                continue
            for arg in node.args[:2]:
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    fields = {k.arg for k in node.keywords if k.arg is not None}
                    where = f"{path.relative_to(PACKAGE.parent)}:{node.lineno}"
                    found.append((arg.value, where, fields))
                    break
    return found


def _read_literals() -> list[tuple[str, str]]:
    """(string, where) for every string that code compares with, or matches, an event type.

    Readers compare ``event.type`` (or a ``kind`` unpacked from it) with
    literals and ``match`` on it; any such literal shaped like an event type of
    a catalogued family must be catalogued, or a display waits for an event
    that never comes.
    """
    families = {t.split(".")[0] for t in EVENT_TYPES}
    found = []
    for path, tree in _sources():
        for node in ast.walk(tree):
            candidates: list[ast.expr] = []
            if isinstance(node, ast.Compare):
                candidates = [node.left, *node.comparators]
            elif isinstance(node, ast.MatchValue):
                candidates = [node.value]
            for c in candidates:
                if (
                    isinstance(c, ast.Constant)
                    and isinstance(c.value, str)
                    and EVENT_LIKE.match(c.value)
                    and c.value.split(".")[0] in families
                ):
                    found.append((c.value, f"{path.relative_to(PACKAGE.parent)}:{c.lineno}"))
    return found


def _documented() -> dict[str, set[str]]:
    """The events table of docs/runtime.md: type -> documented fields."""
    text = RUNTIME_DOC.read_text()
    section = text[text.index("## Events") :]
    section = section[: section.index("\n## ", 1)]
    table: dict[str, set[str]] = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and re.fullmatch(r"`[a-z_.]+`", cells[0]):
            # Only the field names: a cell may add notes in parentheses.
            fields = re.sub(r"\([^)]*\)", "", cells[2])
            table[cells[0].strip("`")] = set(re.findall(r"`([a-z_]+)`", fields))
    return table


def test_every_event_type_emitted_is_in_the_catalogue() -> None:
    unknown = [(t, where) for t, where, _ in _emitted() if t not in EVENT_TYPES]
    assert unknown == []


def test_every_catalogued_event_type_is_emitted_somewhere() -> None:
    assert EVENT_TYPES - {t for t, _, _ in _emitted()} == set()


def test_every_event_type_code_reads_is_in_the_catalogue() -> None:
    unknown = [(t, where) for t, where in _read_literals() if t not in EVENT_TYPES]
    assert unknown == []


def test_the_events_table_in_the_docs_lists_exactly_the_catalogue() -> None:
    assert set(_documented()) == set(EVENT_TYPES)


def test_the_events_table_documents_every_field_an_emitter_names() -> None:
    table = _documented()
    missing = [
        (t, where, sorted(fields - table.get(t, set())))
        for t, where, fields in _emitted()
        if fields - table.get(t, set())
    ]
    assert missing == []


def test_the_catalogue_needs_nothing_but_typing() -> None:
    """Pure state machines may import it without Trio or the rest of coterie."""
    tree = ast.parse((PACKAGE / "eventtypes.py").read_text())
    imported = {
        alias.name.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    } | {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert imported <= {"__future__", "typing"}


def test_emit_takes_the_catalogue_type() -> None:
    """The annotation mypy checks call sites against is the catalogue itself."""
    hints = typing.get_type_hints(EventLog.emit)
    assert hints["type"] is EventType
    assert typing.get_type_hints(EventLog.publish)["type"] is EventType
    assert frozenset(typing.get_args(EventType)) == EVENT_TYPES


_RESERVED = {"seq", "ts", "type"}


@given(
    type=st.sampled_from(sorted(EVENT_TYPES)),
    data=st.dictionaries(
        st.from_regex(r"\A[a-z_]{1,12}\Z").filter(lambda k: k not in _RESERVED),
        json_values,
        max_size=5,
    ),
)
def test_an_event_survives_its_json_line(type: str, data: dict[str, Any]) -> None:
    event = Event(seq=7, ts=1.5, type=type, data=data)
    assert Event.from_json(event.to_json()) == event
