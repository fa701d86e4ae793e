"""The pure pieces of ``coterie watch``: log lines in, events out; replay waits; the
board at a moment (coterie/ui/follow.py)."""

from __future__ import annotations

import itertools
import math
from typing import TYPE_CHECKING

import pytest
from hypothesis import given
from hypothesis import strategies as st

from coterie.board import LogEntry
from coterie.events import Event
from coterie.ui.follow import MAX_GAP, LineSplitter, ReplaySchedule, board_at
from tests.strategies import cut_points, event_logs

if TYPE_CHECKING:
    from collections.abc import Sequence

BASE = 1_700_000_000.0


def _log(triples: Sequence[tuple[float, str, str]]) -> tuple[list[Event], bytes]:
    events, ts = [], BASE
    for seq, (gap, kind, text) in enumerate(triples, start=1):
        ts += gap
        events.append(Event(seq, ts, kind, {"actor": "a", "text": text}))
    return events, b"".join((e.to_json() + "\n").encode() for e in events)


@given(event_logs, cut_points)
def test_however_the_log_arrives_every_event_comes_out_once_in_order(
    triples: list[tuple[float, str, str]], cuts: list[int]
) -> None:
    events, data = _log(triples)
    splitter, got, start = LineSplitter(), [], 0
    for cut in sorted(min(c, len(data)) for c in cuts):
        got += splitter.feed(data[start:cut])
        start = cut
    got += splitter.feed(data[start:])
    assert got == events
    assert not splitter.pending
    assert splitter.skipped == 0


def test_a_line_being_written_waits_for_its_end() -> None:
    line = (Event(1, BASE, "actor.crashed", {"actor": "a"}).to_json() + "\n").encode()
    splitter = LineSplitter()
    assert splitter.feed(line[:10]) == []
    assert splitter.pending
    assert [e.type for e in splitter.feed(line[10:])] == ["actor.crashed"]
    assert not splitter.pending


def test_a_torn_line_followed_by_more_is_skipped_not_raised() -> None:
    """A writer killed mid-line, then another appending after it (a resumed run)."""
    whole = Event(2, BASE, "actor.started", {"actor": "b"}).to_json() + "\n"
    splitter = LineSplitter()
    got = splitter.feed(b'{"seq":1,"ts":17' + whole.encode() + whole.encode())
    assert [e.seq for e in got] == [2]
    assert splitter.skipped == 1


@given(st.binary(max_size=200))
def test_no_bytes_make_the_splitter_raise(data: bytes) -> None:
    splitter = LineSplitter()
    splitter.feed(data)
    splitter.drop_pending()
    assert not splitter.pending


def test_a_replay_waits_the_recorded_gaps_divided_by_the_speed() -> None:
    schedule = ReplaySchedule(2.0)
    assert [schedule.delay(BASE + t) for t in (0.0, 1.0, 1.5, 4.5)] == [0.0, 0.5, 0.25, 1.5]


def test_speed_zero_never_waits() -> None:
    schedule = ReplaySchedule(0)
    assert [schedule.delay(BASE + t) for t in (0, 3, 9)] == [0, 0, 0]


def test_a_long_pause_is_cut_to_the_longest_gap() -> None:
    """A run resumed an hour after its kill -9 replays in seconds."""
    schedule = ReplaySchedule(1.0)
    schedule.delay(BASE)
    assert schedule.delay(BASE + 3600) == MAX_GAP


@given(event_logs, st.floats(min_value=0.01, max_value=100))
def test_a_whole_replay_takes_the_recorded_time_over_the_speed(
    triples: list[tuple[float, str, str]], speed: float
) -> None:
    stamps = [e.ts for e in _log(triples)[0]]
    expected = sum(min(b - a, MAX_GAP) for a, b in itertools.pairwise(stamps))
    assert math.isclose(ReplaySchedule(speed).total(stamps), expected / speed, abs_tol=1e-6)


def test_events_out_of_time_order_never_make_a_negative_wait() -> None:
    schedule = ReplaySchedule(1.0)
    assert [schedule.delay(BASE + t) for t in (5, 2, 6)] == [0.0, 0.0, 1.0]


@pytest.mark.parametrize("speed", [-1.0, math.inf, math.nan])
def test_a_speed_that_is_no_pace_is_refused(speed: float) -> None:
    with pytest.raises(ValueError, match="speed"):
        ReplaySchedule(speed)


def _entry(seq: int, time: float, op: str, task: str, **fields: object) -> LogEntry:
    return LogEntry(seq=seq, time=time, op=op, task_id=task, fields=dict(fields))


def test_the_board_at_a_moment_has_the_changes_made_by_then() -> None:
    entries = [
        _entry(1, 10, "create", "task_1", id="task_1", status="pending", owner=None),
        _entry(2, 20, "claim", "task_1", status="in_progress", owner="alice"),
        _entry(3, 30, "complete", "task_1", status="completed"),
    ]
    assert board_at(entries, 5) == []
    assert board_at(entries, 25)[0]["status"] == "in_progress"
    assert board_at(entries)[0] == {"id": "task_1", "status": "completed", "owner": "alice"}
