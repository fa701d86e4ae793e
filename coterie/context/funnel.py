"""The compaction funnel: keeps an agent's history within its context budget.

Theory of operation
-------------------
The loop calls :meth:`Funnel.check` before every model call. The stages run
in order of cost, the cheap ones first, and each that changes something
emits an event (``context.spilled``, ``context.archived``,
``context.cleared``, ``context.summarized``) and, given a transcript,
records the change there:

1. always, on the messages added since the last check: a tool result longer
   than its tool's limit (``result_limits``, what each tool declares; else
   ``spill_chars``) is saved to a file and replaced by a preview and the path;
2. when the history is longer than ``max_messages``: its middle is archived,
   keeping the first user message and the latest ``keep_messages``;

and, only when the estimate is over the budget's ``limit``:

3. tool results older than the latest ``keep_results`` become one-line
   references to their files; if still over the budget's ``goal``,
   stage 2 again, keeping only the tail that fits the goal;
4. if still over the ``limit``: an LLM summary (:mod:`coterie.context.summary`)
   that keeps the user's words, the goal and the todo list verbatim.

Checking costs O(messages added since the last check) until something must
be compacted (:class:`~coterie.context.tokens.TokenCounter`).

:meth:`Funnel.compact_now` is ``/compact``: a summary now, with an optional
focus. :meth:`Funnel.reactive` is for a call the API refused as too long: it
learns the real size, compacts down to the goal and says whether a retry is
worth it; :meth:`Funnel.complete` wraps a model call with exactly one such
retry, and raises :class:`ContextOverflow` if the retry fails too.

The history passed in is changed in place (``messages[:] = ...``), so a
request object holding the same list sees the compacted history.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import attrs

from coterie.context.history import Message, changed_span
from coterie.context.stages import (
    Store,
    archive_middle,
    choose_tail,
    clear_old_results,
    spill_large_results,
)
from coterie.context.summary import summarize, summarized_history
from coterie.context.tokens import Budget, TokenCounter, reported_prompt_tokens
from coterie.models import ModelError, PromptTooLong

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Mapping

    from coterie.context.transcript import TranscriptLog
    from coterie.events import EventLog, EventType
    from coterie.hooks import AgentHooks
    from coterie.models import Model, Usage

__all__ = ["CompactionReport", "ContextOverflow", "Funnel", "FunnelConfig"]

T = TypeVar("T")
Todos = list[dict[str, Any]] | None


class ContextOverflow(PromptTooLong):
    """The API still refused the prompt as too long after the funnel compacted it
    (or there was nothing left to compact).

    Raised by :meth:`Funnel.complete` instead of retrying again. Like every
    :class:`~coterie.models.PromptTooLong` it is a
    :class:`~coterie.models.ModelError`, so a loop that ends a run on a failed
    model call ends it on this too, with this message.
    """


@attrs.frozen
class FunnelConfig:
    """The funnel's knobs; sizes of results are in characters, of histories in messages."""

    #: The limit of a result whose tool is not in ``result_limits`` (about 25k tokens).
    spill_chars: int = 100_000
    #: Each tool's limit, by name: what the tool declares (``Capabilities.result_chars``).
    result_limits: Mapping[str, int] = attrs.field(factory=dict)
    preview_chars: int = 2_000
    max_messages: int = 400
    keep_messages: int = 80
    keep_results: int = 5
    #: Stage 4 keeps the latest exchange only if it is under this share of the goal.
    summary_tail_share: float = 0.25
    summary_max_tokens: int = 4_096
    summary_input_chars: int = 400_000


@attrs.frozen
class CompactionReport:
    """What one check (or manual or reactive compaction) did."""

    stages: tuple[int, ...]
    tokens_before: int
    tokens_after: int
    messages_before: int
    messages_after: int
    limit: int

    @property
    def changed(self) -> bool:
        """Whether any stage changed the history."""
        return bool(self.stages)

    @property
    def over_budget(self) -> bool:
        """Whether the history is still over the limit (nothing more could be done)."""
        return self.tokens_after > self.limit


@attrs.define
class Funnel:
    """The compaction funnel of one agent. Files go to *directory*."""

    directory: Path = attrs.field(converter=Path)
    budget: Budget = attrs.field(factory=Budget)
    config: FunnelConfig = attrs.field(factory=FunnelConfig)
    counter: TokenCounter = attrs.field(factory=TokenCounter)
    #: The model stage 4 asks for a summary (role ``summarizer``); without one
    #: stage 4 still compacts, with no summary text.
    model: Model | None = None
    actor: str = "lead"
    summarizer: str = "summarizer"
    events: EventLog | None = None
    transcript: TranscriptLog | None = None
    fsync: bool = True
    #: The agent's hooks: PreCompact and PostCompact run around a summary.
    hooks: AgentHooks | None = None
    _store: Store = attrs.field(init=False)
    _scanned: int = attrs.field(init=False, default=0)
    _stages: list[int] = attrs.field(init=False, factory=list)

    def __attrs_post_init__(self) -> None:
        self._store = Store(self.directory, fsync=self.fsync)

    # -- what the loop calls ---------------------------------------------------

    def tokens(self, messages: list[Message]) -> int:
        """The estimated input tokens of a request carrying *messages* (O(new messages))."""
        return self.counter.count(messages)

    def record_usage(self, messages: list[Message], usage: Usage | int) -> None:
        """Calibrate with a reply's usage; *messages* as sent, before the reply is appended."""
        self.counter.observe(messages, usage)

    async def check(
        self, messages: list[Message], *, todos: Todos = None, goal: str | None = None
    ) -> CompactionReport:
        """Run the funnel on *messages* (in place) before a model call."""
        self._stages = []
        count = len(messages)
        await self._spill(messages)
        if len(messages) > self.config.max_messages:
            tail = choose_tail(messages, keep=self.config.keep_messages)
            await self._archive(messages, tail, reason="length")
        before = self.counter.count(messages)
        if before > self.budget.limit:
            await self._squeeze(
                messages,
                self.budget.limit,
                keep_results=self.config.keep_results,
                todos=todos,
                goal=goal,
            )
        return self._report(messages, before, count)

    async def compact_now(
        self,
        messages: list[Message],
        focus: str | None = None,
        *,
        todos: Todos = None,
        goal: str | None = None,
    ) -> CompactionReport:
        """``/compact [focus]``: summarise the history now, whatever its size."""
        self._stages = []
        count = len(messages)
        await self._spill(messages)
        before = self.counter.count(messages)
        await self._summarize(messages, todos=todos, goal=goal, focus=focus, trigger="manual")
        return self._report(messages, before, count)

    async def reactive(
        self,
        messages: list[Message],
        error: PromptTooLong | None = None,
        *,
        todos: Todos = None,
        goal: str | None = None,
    ) -> bool:
        """The API refused *messages* as too long: compact hard; True if a retry is worth it."""
        self._stages = []
        reported = reported_prompt_tokens(error.message) if error is not None else None
        self.counter.overflowed(messages, self.budget.window, reported)
        count = len(messages)
        await self._spill(messages)
        before = self.counter.count(messages)
        await self._squeeze(messages, self.budget.goal, keep_results=1, todos=todos, goal=goal)
        report = self._report(messages, before, count)
        self._emit("context.reactive", reported=reported, **attrs.asdict(report))
        return report.changed

    async def complete(
        self,
        messages: list[Message],
        call: Callable[[], Awaitable[T]],
        *,
        todos: Todos = None,
        goal: str | None = None,
    ) -> T:
        """``await call()``; if the prompt is too long, compact and retry once.

        *call* must build its request from *messages* (the same list) each
        time. A second refusal raises :class:`ContextOverflow`.
        """
        try:
            return await call()
        except PromptTooLong as exc:
            if not await self.reactive(messages, exc, todos=todos, goal=goal):
                raise ContextOverflow(
                    exc.status, exc.type, f"{exc.message} (and nothing was left to compact)"
                ) from exc
        try:
            return await call()
        except PromptTooLong as exc:
            raise ContextOverflow(
                exc.status, exc.type, f"{exc.message} (even after compacting the conversation)"
            ) from exc

    # -- the stages ------------------------------------------------------------

    async def _squeeze(
        self,
        messages: list[Message],
        summary_over: int,
        *,
        keep_results: int,
        todos: Todos,
        goal: str | None,
    ) -> None:
        aim = self.budget.goal
        await self._clear(messages, keep_results)
        if self.counter.count(messages) > aim:
            room = aim - self._size(messages[0]) - self.counter.overhead
            tail = choose_tail(messages, tokens=max(0, room), size=self._size)
            await self._archive(messages, tail, reason="budget")
        if self.counter.count(messages) > summary_over:
            await self._summarize(messages, todos=todos, goal=goal, focus=None, trigger="auto")

    async def _spill(self, messages: list[Message]) -> None:
        if self._scanned > len(messages):
            self._scanned = 0  # a different history than last time
        cfg = self.config
        new, spills = spill_large_results(
            messages,
            self._store,
            limit=cfg.spill_chars,
            preview=cfg.preview_chars,
            start=self._scanned,
            limits=cfg.result_limits,
        )
        self._scanned = len(messages)
        if not spills:
            return
        await self._replace(messages, new, 1, "spill", spills=len(spills))
        for spill in spills:
            self._emit("context.spilled", **attrs.asdict(spill))

    async def _archive(self, messages: list[Message], tail: int | None, *, reason: str) -> None:
        before = self.counter.count(messages)
        new, archived = archive_middle(messages, self._store, tail_start=tail)
        if archived is None:
            return
        await self._replace(messages, new, 2, "archive", path=archived.path, reason=reason)
        self._emit(
            "context.archived",
            reason=reason,
            tokens_before=before,
            tokens_after=self.counter.count(messages),
            **attrs.asdict(archived),
        )

    async def _clear(self, messages: list[Message], keep: int) -> None:
        before = self.counter.count(messages)
        new, cleared = clear_old_results(messages, self._store, keep=keep)
        if not cleared.count:
            return
        await self._replace(messages, new, 3, "clear", results=cleared.count)
        self._emit(
            "context.cleared",
            tokens_before=before,
            tokens_after=self.counter.count(messages),
            **attrs.asdict(cleared),
        )

    async def _summarize(
        self,
        messages: list[Message],
        *,
        todos: Todos,
        goal: str | None,
        focus: str | None,
        trigger: str = "auto",
    ) -> None:
        starts = [i for i, m in enumerate(messages) if m.get("role") == "assistant"]
        if not starts:
            return  # nothing but the user's words: nothing to summarise
        hooks = self.hooks
        if hooks is not None and hooks.configured("PreCompact"):
            await hooks.fire("PreCompact", trigger=trigger, custom_instructions=focus or "")
        tail: int | None = starts[-1]
        tail_tokens = sum(self._size(m) for m in messages[starts[-1] :])
        if tail_tokens > self.budget.goal * self.config.summary_tail_share:
            tail = None
        before = self.counter.count(messages)
        replaced = messages if tail is None else messages[:tail]
        name = self._store.fresh("history", "jsonl")
        lines = [json.dumps(m, separators=(",", ":"), default=str) for m in messages]
        path = str(self._store.write(name, "\n".join(lines) + "\n"))
        summary, error = "", None
        if self.model is None:
            error = "no summarizer model is configured"
        else:
            try:
                summary = await summarize(
                    self.model,
                    replaced,
                    actor=self.summarizer,
                    focus=focus,
                    max_tokens=self.config.summary_max_tokens,
                    max_chars=self.config.summary_input_chars,
                )
            except ModelError as exc:
                error = f"the summarizer failed: {exc}"
        if not summary:
            summary = f"(No summary: {error or 'the summarizer returned nothing'}.)"
        new = summarized_history(
            messages, tail, summary=summary, archive=path, todos=todos, goal=goal
        )
        await self._replace(messages, new, 4, "summary", path=path, focus=focus)
        self._emit(
            "context.summarized",
            replaced=len(replaced),
            kept=len(messages) - 1,
            path=path,
            summary_chars=len(summary),
            error=error,
            focus=focus,
            tokens_before=before,
            tokens_after=self.counter.count(messages),
        )
        if hooks is not None and hooks.configured("PostCompact"):
            await hooks.fire("PostCompact", trigger=trigger, compact_summary=summary)

    # -- plumbing --------------------------------------------------------------

    async def _replace(
        self, messages: list[Message], new: list[Message], stage: int, name: str, **detail: Any
    ) -> None:
        before = list(messages)
        start, _, _ = changed_span(before, new)
        messages[:] = new
        self.counter.invalidate(start)
        self._scanned = len(messages)
        self._stages.append(stage)
        if self.transcript is not None:
            await self.transcript.record_compaction(before, new, stage=name, **detail)

    def _size(self, message: Message) -> int:
        return math.ceil(self.counter.chars(message) / self.counter.ratio)

    def _report(self, messages: list[Message], before: int, count: int) -> CompactionReport:
        return CompactionReport(
            stages=tuple(self._stages),
            tokens_before=before,
            tokens_after=self.counter.count(messages),
            messages_before=count,
            messages_after=len(messages),
            limit=self.budget.limit,
        )

    def _emit(self, type: EventType, **data: Any) -> None:
        if self.events is not None:
            self.events.emit(type, actor=self.actor, **data)
