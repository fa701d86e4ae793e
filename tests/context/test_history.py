"""History helpers: user-authored text, validation, and repair of a damaged history."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coterie.context import HistoryInvalid, check_history, repair_history, user_texts
from coterie.context.history import LOST
from tests.context.helpers import assistant, exchange, results, user
from tests.strategies import histories


def test_user_texts_leave_out_reminders_notes_and_tool_results() -> None:
    messages = [
        user("Fix it.", "[coterie: a note]"),
        *exchange(1, "output"),
        results(extra=("<system-reminder>plan</system-reminder>", "Also this.")),
    ]
    assert user_texts(messages) == ["Fix it.", "Also this."]


def test_check_history_refuses_what_the_api_refuses() -> None:
    with pytest.raises(HistoryInvalid, match="tool_result"):
        check_history([user("Go."), assistant(None, ("t1", "Bash", {})), user("no answer")])
    with pytest.raises(HistoryInvalid, match="first message"):
        check_history([assistant("Hi.")])


def test_repair_answers_unanswered_calls_and_drops_strays() -> None:
    damaged = [
        user("Go."),
        assistant(None, ("t1", "Bash", {})),
        user("the answer was lost"),
        assistant("Next."),
        results(("t9", "stray")),
    ]
    repaired = repair_history(damaged)
    check_history(repaired)
    assert repaired[2]["content"][0]["content"] == LOST
    assert repaired[2]["content"][1] == {"type": "text", "text": "the answer was lost"}
    assert repaired[0] is damaged[0]
    assert "t9" not in str(repaired)


def test_repair_merges_neighbours_and_starts_with_the_user() -> None:
    repaired = repair_history([assistant("Hi."), user("a"), user("b"), assistant("c")])
    check_history(repaired)
    assert user_texts(repaired) == ["a", "b"]


def test_repair_leaves_a_valid_history_as_the_same_objects() -> None:
    messages = [user("Go."), *exchange(1, "x"), *exchange(2, "y")]
    repaired = repair_history(messages)
    assert all(a is b for a, b in zip(repaired, messages, strict=True))


@settings(max_examples=60, deadline=None)
@given(histories(max_rounds=10), st.data())
def test_repair_makes_any_mutilated_history_valid(
    messages: list[dict[str, Any]], data: st.DataObject
) -> None:
    """Drop any messages (as a corrupt log does): the repair is valid, keeps the rest's words."""
    keep = data.draw(st.lists(st.booleans(), min_size=len(messages), max_size=len(messages)))
    survivors = [m for m, k in zip(messages, keep, strict=True) if k]
    repaired = repair_history(survivors)
    if repaired:
        check_history(repaired)
    assert set(user_texts(survivors)) <= set(user_texts(repaired))
