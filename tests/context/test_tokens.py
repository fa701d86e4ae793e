"""Token accounting: calibration from usage figures, and O(new messages) checks."""

from __future__ import annotations

import math
from typing import Any

import pytest

from coterie.context import Budget, TokenCounter, context_window
from coterie.context.history import message_chars
from coterie.context.tokens import DEFAULT_CONTEXT_WINDOW, reported_prompt_tokens
from coterie.models import Usage
from tests.context.helpers import CountingChars, big, exchange, history


def true_tokens(messages: list[dict[str, Any]], ratio: float, overhead: int = 0) -> int:
    """What a pretend API with *ratio* characters per token reports."""
    return overhead + math.ceil(sum(message_chars(m) for m in messages) / ratio)


def test_context_windows_come_from_the_table_by_longest_prefix() -> None:
    table = {"claude-x": 100_000, "claude-x-long": 1_000_000}
    assert context_window("claude-x-long-2025", table) == 1_000_000
    assert context_window("claude-x-1", table) == 100_000
    assert context_window("gpt-4", table) == DEFAULT_CONTEXT_WINDOW
    assert context_window("claude-sonnet-4-5") == 200_000


def test_the_budget_limit_and_goal_are_shares_of_the_window() -> None:
    budget = Budget.for_model("claude-opus-4-1", threshold=0.8, target=0.5)
    assert (budget.limit, budget.goal) == (160_000, 100_000)
    with pytest.raises(ValueError, match="target"):
        Budget(threshold=0.5, target=0.8)


def test_before_any_report_the_estimate_is_chars_over_four_plus_overhead() -> None:
    messages = history(3)
    counter = TokenCounter.for_request("s" * 400, [])
    assert counter.overhead == 100
    assert counter.count(messages) == 100 + math.ceil(sum(map(message_chars, messages)) / 4)


def test_a_report_is_taken_as_exact_for_the_messages_it_covers() -> None:
    messages = history(3)
    counter = TokenCounter()
    counter.observe(messages, Usage(input_tokens=1234))
    assert counter.count(messages) == 1234
    assert counter.known_prefix == len(messages)


def test_cached_input_counts_towards_the_size() -> None:
    messages = history(1)
    counter = TokenCounter()
    counter.observe(messages, Usage(input_tokens=10, cache_read_input_tokens=900))
    assert counter.count(messages) == 910


def test_messages_added_since_the_report_are_estimated_on_top() -> None:
    messages = history(3)
    counter = TokenCounter()
    counter.observe(messages, 5000)
    added = exchange(9, big(4000))
    messages += added
    expected = 5000 + math.ceil(sum(map(message_chars, added)) / counter.ratio)
    assert counter.count(messages) == expected


def test_the_ratio_is_learned_from_successive_reports() -> None:
    """An API at 3 characters a token: after a few turns the estimate is within 2%."""
    messages = history(1)
    counter = TokenCounter()
    for i in range(8):
        counter.observe(messages, true_tokens(messages, 3.0, overhead=700))
        messages += exchange(10 + i, big(3000 + 500 * i))
    assert counter.ratio == pytest.approx(3.0, rel=0.02)
    truth = true_tokens(messages, 3.0, overhead=700)
    assert counter.count(messages) == pytest.approx(truth, rel=0.02)


def test_checking_serialises_only_new_messages() -> None:
    """The check is O(new): each message is measured once, never the whole history again."""
    chars = CountingChars()
    counter = TokenCounter(chars=chars)
    messages = history(500)
    counter.count(messages)
    assert chars.calls == len(messages)
    for turn in range(50):
        counter.observe(messages, 1000 + turn)
        messages += exchange(1000 + turn, "ok")
        before = chars.calls
        counter.count(messages)
        counter.count(messages)  # a second look costs nothing
        assert chars.calls - before == 2
    assert chars.calls == 1001 + 100


def test_invalidating_a_changed_prefix_remeasures_once() -> None:
    chars = CountingChars()
    counter = TokenCounter(chars=chars)
    messages = history(10)
    counter.observe(messages, 2000)
    messages[1:5] = []  # a compaction
    counter.invalidate(1)
    estimate = counter.count(messages)
    assert chars.calls == 21 + len(messages)
    assert estimate < 2000
    messages += exchange(99, "ok")
    counter.count(messages)
    assert chars.calls == 21 + len(messages)


def test_invalidating_new_messages_only_remeasures_those() -> None:
    chars = CountingChars()
    counter = TokenCounter(chars=chars)
    messages = history(10)
    counter.observe(messages, 2000)
    messages += exchange(50, big(10_000))
    high = counter.count(messages)
    messages[-1] = exchange(50, "short")[1]
    counter.invalidate(len(messages) - 1)
    assert counter.count(messages) < high
    assert chars.calls == 21 + 2 + 1


def test_a_shorter_history_is_noticed_without_being_told() -> None:
    counter = TokenCounter()
    messages = history(10)
    counter.count(messages)
    del messages[3:]
    assert counter.count(messages) == math.ceil(sum(map(message_chars, messages)) / 4)


def test_an_overflow_with_a_figure_is_a_report() -> None:
    messages = history(2)
    counter = TokenCounter()
    counter.overflowed(messages, 200_000, reported=210_000)
    assert counter.count(messages) == 210_000


def test_an_overflow_without_a_figure_raises_the_estimate_past_the_window() -> None:
    messages = history(2, big(2000))
    counter = TokenCounter()
    assert counter.count(messages) < 2000
    counter.overflowed(messages, 2000)
    assert counter.count(messages) > 2000


@pytest.mark.parametrize(
    ("message", "tokens"),
    [
        ("prompt is too long: 210017 tokens > 200000 maximum", 210_017),
        ("prompt is too long: 1,234,567 tokens > 1000000 maximum", 1_234_567),
        ("prompt is too long", None),
    ],
)
def test_the_api_figure_is_read_from_the_error(message: str, tokens: int | None) -> None:
    assert reported_prompt_tokens(message) == tokens
