"""Token accounting: how big a history is, without re-serialising it every turn.

Theory of operation
-------------------
The API reports, for every call, how many input tokens the request had. The
counter keeps the last such figure together with the number of messages the
request carried (the *known prefix*), and estimates only the messages added
since, at ``characters / ratio`` tokens each. Each message is serialised at
most once between two reports, so checking the size costs O(new messages),
never O(history).

The ratio (characters per token, 4 to start with) is learned: when a report
arrives, the tokens added since the previous report are compared with the
characters added, and the ratio moves towards what they show (the first
report, and the first after a compaction, compare the whole history, net of
the overhead). What the messages do not account for (the system prompt, the
tool schemas, the error of the estimate) is kept as ``overhead``, so an
estimate made after a compaction, before the next report, still includes it.
A ``prompt is too long`` answer refits the ratio to the size the API saw.

When earlier messages change (a compaction), the known prefix no longer
describes the history: :meth:`TokenCounter.invalidate` says from which
message on, and the next count re-serialises from there (once).
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, Any

import attrs

from coterie.context.history import Message, message_chars

if TYPE_CHECKING:
    from collections.abc import Callable

    from coterie.models import Usage

__all__ = [
    "CONTEXT_WINDOWS",
    "DEFAULT_CONTEXT_WINDOW",
    "Budget",
    "TokenCounter",
    "context_window",
    "reported_prompt_tokens",
]

DEFAULT_CONTEXT_WINDOW = 200_000
#: Context windows by model-name prefix; the longest matching prefix wins.
CONTEXT_WINDOWS: dict[str, int] = {
    "claude-opus-4": 200_000,
    "claude-sonnet-4": 200_000,
    "claude-sonnet-5": 200_000,
    "claude-haiku-4": 200_000,
    "claude-3-7-sonnet": 200_000,
    "claude-3-5-sonnet": 200_000,
    "claude-3-5-haiku": 200_000,
    "claude-3-opus": 200_000,
    "claude-3-haiku": 200_000,
}
_MIN_RATIO, _MAX_RATIO = 1.0, 12.0


def context_window(model: str, table: dict[str, int] | None = None) -> int:
    """The context window of *model*, in tokens (:data:`DEFAULT_CONTEXT_WINDOW` if unknown)."""
    table = CONTEXT_WINDOWS if table is None else table
    matches = [prefix for prefix in table if model.startswith(prefix)]
    if not matches:
        return DEFAULT_CONTEXT_WINDOW
    return table[max(matches, key=len)]


@attrs.frozen
class Budget:
    """How much of the context window a history may use.

    The funnel compacts when the estimate passes ``threshold`` of the window
    (:attr:`limit`) and aims below ``target`` of it (:attr:`goal`), so that
    it does not have to compact again on the next turn.
    """

    window: int = DEFAULT_CONTEXT_WINDOW
    threshold: float = 0.8
    target: float = 0.5

    def __attrs_post_init__(self) -> None:
        if self.window < 1:
            raise ValueError("the context window must be at least one token")
        if not 0 < self.target <= self.threshold <= 1:
            raise ValueError("need 0 < target <= threshold <= 1")

    @classmethod
    def for_model(cls, model: str, *, threshold: float = 0.8, target: float = 0.5) -> Budget:
        """The budget for *model*'s context window (see :data:`CONTEXT_WINDOWS`)."""
        return cls(context_window(model), threshold, target)

    @property
    def limit(self) -> int:
        """Compact when a history's estimate is over this many tokens."""
        return int(self.window * self.threshold)

    @property
    def goal(self) -> int:
        """After compacting, a history should be under this many tokens."""
        return int(self.window * self.target)


def reported_prompt_tokens(message: str) -> int | None:
    """The prompt size in the API's ``prompt is too long: N tokens > M maximum`` error."""
    match = re.search(r"(\d[\d,]*)\s*tokens\s*>\s*\d", message)
    return int(match.group(1).replace(",", "")) if match else None


@attrs.define
class TokenCounter:
    """Estimates a history's input tokens, calibrated by the API's usage figures.

    Call :meth:`count` to check a history, :meth:`observe` with every reply's
    usage, and :meth:`invalidate` when messages before the end changed.
    """

    #: Characters per token, learned from the reports.
    ratio: float = 4.0
    #: Tokens a request carries besides its messages (system prompt, tools).
    overhead: int = 0
    #: How a message's size is measured (characters); swapped in tests to count calls.
    chars: Callable[[Message], int] = message_chars
    #: How far one report moves the ratio towards what it shows.
    learning_rate: float = 0.5
    #: A report teaches the ratio only if this many characters were added since the last.
    min_sample_chars: int = 400
    reports: int = attrs.field(init=False, default=0)
    _known: int = attrs.field(init=False, default=0)
    _base: int = attrs.field(init=False, default=0)
    _known_chars: int = attrs.field(init=False, default=0)
    _calibrated: bool = attrs.field(init=False, default=False)
    _pending: list[int] = attrs.field(init=False, factory=list)
    _pending_sum: int = attrs.field(init=False, default=0)
    _stale_from: int | None = attrs.field(init=False, default=None)

    def __attrs_post_init__(self) -> None:
        self._base = self.overhead

    @classmethod
    def for_request(cls, system: str, tools: list[dict[str, Any]], **kwargs: Any) -> TokenCounter:
        """A counter whose overhead, before any report, is estimated from *system* and *tools*."""
        counter = cls(**kwargs)
        size = len(system) + sum(message_chars(t) for t in tools)
        counter.overhead = counter._base = math.ceil(size / counter.ratio)
        return counter

    @property
    def known_prefix(self) -> int:
        """How many messages the last report (or rebase) covers."""
        return self._known

    def count(self, messages: list[Message]) -> int:
        """The estimated input tokens of a request carrying *messages*.

        Serialises only messages it has not measured yet.
        """
        if self._stale_from is not None or len(messages) < self._known + len(self._pending):
            self._rebase(messages)
        for message in messages[self._known + len(self._pending) :]:
            size = self.chars(message)
            self._pending.append(size)
            self._pending_sum += size
        return self._base + math.ceil(self._pending_sum / self.ratio)

    def observe(self, messages: list[Message], usage: Usage | int) -> None:
        """Learn from a reply: the request that carried *messages* had *usage* input tokens.

        Call it before appending the reply to *messages*.
        """
        total = usage if isinstance(usage, int) else _input_tokens(usage)
        self.count(messages)
        added = len(messages) - self._known
        added_chars = sum(self._pending[:added])
        all_chars = self._known_chars + added_chars
        if self._calibrated:
            # What was added since the last report, in characters and tokens.
            self._learn(added_chars, total - self._base)
        else:
            # The first report (or the first since a compaction): the whole
            # history, net of the overhead, is the sample.
            self._learn(all_chars, total - self.overhead)
        self._settle(messages, all_chars, total)
        self._calibrated = True
        self.reports += 1
        self.overhead = max(0, total - math.ceil(all_chars / self.ratio))

    def overflowed(self, messages: list[Message], window: int, reported: int | None = None) -> None:
        """The API refused *messages* as too long: *reported* tokens if it said, else > *window*.

        The ratio is refitted so that the estimate of *messages* matches what
        the API saw (at least *window* + 1 tokens without a figure), so the
        funnel compacts by the API's measure, not its own.
        """
        estimate = self.count(messages)
        seen = reported if reported is not None else window + 1
        if reported is None and estimate >= seen:
            return
        chars = self._known_chars + self._pending_sum
        if chars > 0 and seen > self.overhead:
            self.ratio = _clamp(chars / (seen - self.overhead))
        self._settle(messages, chars, max(seen, self.overhead + math.ceil(chars / self.ratio)))
        self._calibrated = False

    def _learn(self, chars: int, tokens: int) -> None:
        if chars >= self.min_sample_chars and tokens > 0:
            self.ratio += self.learning_rate * (_clamp(chars / tokens) - self.ratio)

    def _settle(self, messages: list[Message], chars: int, tokens: int) -> None:
        """*messages* (of *chars* characters) are *tokens* tokens: the new known prefix."""
        added = len(messages) - self._known
        del self._pending[:added]
        self._pending_sum = sum(self._pending)
        self._known = len(messages)
        self._known_chars = chars
        self._base = tokens

    def invalidate(self, index: int = 0) -> None:
        """Messages from *index* on changed; the next :meth:`count` re-measures them."""
        if index >= self._known:
            keep = max(0, index - self._known)
            del self._pending[keep:]
            self._pending_sum = sum(self._pending)
        else:
            stale = self._stale_from
            self._stale_from = index if stale is None else min(index, stale)

    def _rebase(self, messages: list[Message]) -> None:
        # Sizes are kept per report, not per message, so everything is
        # re-measured (once, after a compaction); the learned overhead stays.
        self._known_chars = sum(self.chars(m) for m in messages)
        self._known = len(messages)
        self._pending.clear()
        self._pending_sum = 0
        self._base = self.overhead + math.ceil(self._known_chars / self.ratio)
        self._calibrated = False
        self._stale_from = None


def _clamp(ratio: float) -> float:
    return min(max(ratio, _MIN_RATIO), _MAX_RATIO)


def _input_tokens(usage: Usage) -> int:
    # With prompt caching the API splits the input three ways; all of it counts.
    return usage.input_tokens + usage.cache_creation_input_tokens + usage.cache_read_input_tokens
