"""DenialTracker: 3 blocks in a row or 20 in all hand decisions back to a person."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from coterie.autonomy import CONSECUTIVE_LIMIT, TOTAL_LIMIT, DenialTracker


def test_the_limits_are_three_in_a_row_and_twenty_in_all() -> None:
    assert (CONSECUTIVE_LIMIT, TOTAL_LIMIT) == (3, 20)
    tracker = DenialTracker()
    assert (tracker.consecutive_limit, tracker.total_limit) == (3, 20)


def test_a_fresh_tracker_lets_the_classifier_decide() -> None:
    tracker = DenialTracker()
    assert not tracker.needs_human
    assert tracker.reason is None


def test_three_blocks_in_a_row_need_a_person() -> None:
    tracker = DenialTracker()
    for _ in range(2):
        tracker.record(blocked=True)
    assert not tracker.needs_human
    tracker.record(blocked=True)
    assert tracker.needs_human
    assert tracker.reason is not None
    assert "3 actions in a row" in tracker.reason


def test_an_allowed_action_ends_the_run_of_blocks() -> None:
    tracker = DenialTracker()
    for blocked in (True, True, False, True, True):
        tracker.record(blocked)
    assert (tracker.consecutive, tracker.total) == (2, 4)
    assert not tracker.needs_human


def test_a_persons_answer_ends_the_run_of_blocks() -> None:
    tracker = DenialTracker()
    for _ in range(3):
        tracker.record(blocked=True)
    tracker.human_answered()
    assert not tracker.needs_human
    assert tracker.total == 3


def test_twenty_blocks_in_all_need_a_person_for_good() -> None:
    tracker = DenialTracker()
    for _ in range(10):
        tracker.record(blocked=True)
        tracker.record(blocked=True)
        tracker.record(blocked=False)
    assert tracker.total == 20
    assert tracker.needs_human
    tracker.human_answered()
    tracker.record(blocked=False)
    assert tracker.needs_human
    assert tracker.reason is not None
    assert "20 actions in this session" in tracker.reason


def test_limits_are_configurable_and_positive() -> None:
    tracker = DenialTracker(consecutive_limit=1, total_limit=5)
    tracker.record(blocked=True)
    assert tracker.needs_human
    with pytest.raises(ValueError, match="at least 1"):
        DenialTracker(consecutive_limit=0)


_events = st.lists(st.sampled_from(["block", "allow", "human"]), max_size=60)


@given(_events)
def test_the_tracker_matches_its_specification(events: list[str]) -> None:
    tracker = DenialTracker()
    run = total = 0
    for event in events:
        if event == "human":
            tracker.human_answered()
            run = 0
        else:
            tracker.record(blocked=event == "block")
            run = run + 1 if event == "block" else 0
            total += event == "block"
        assert (tracker.consecutive, tracker.total) == (run, total)
        assert tracker.needs_human == (run >= 3 or total >= 20)
        assert (tracker.reason is None) == (not tracker.needs_human)
