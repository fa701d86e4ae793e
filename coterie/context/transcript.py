"""The durable transcript: one actor's conversation as a crash-safe, append-only log.

Theory of operation
-------------------
The log is one file of records in the framing of :mod:`coterie.journal`
(the same bytes as the mailbox's and the board's); each payload is one JSON
entry:

* ``{"type": "message", "message": {...}, "prompt_id"?, "meta"?}``: a user
  or assistant message, appended as the loop appends it to its history;
  ``prompt_id`` marks the start of work on a request, ``meta`` is the loop's
  running totals (turns, cost, usage) as of this message, so that a resumed
  loop counts its limits from where it stopped;
* ``{"type": "tool_started", "id", "name", "input"}``: written (and made
  durable) *before* a tool runs;
* ``{"type": "tool_finished", "id", "content", "is_error"}``: optional, after
  a tool ran, so that a result survives a crash before the message holding
  all of a turn's results is written;
* ``{"type": "compaction", "stage", "start", "end", "messages", ...}``: the
  history's ``[start:end)`` was replaced by ``messages`` (the funnel's
  stages, or a repair on open).

Replaying the entries in order rebuilds the history the loop had. On open a
torn tail (a crash mid-write) is cut off and kept in a ``.torn-<offset>``
file beside the log, and corrupt records are skipped and reported, like the
mailbox does. A tool call whose ``tool_started`` has no result in the log
(a crash mid-tool) is answered with an ``is_error`` result saying it was
interrupted and its effects are unknown: it is never run again. That
result, and any repair a damaged log needed, is appended to the log on
open, so the file and the history handed out agree from then on.

Durability policies are the journal's (:class:`coterie.journal.Durability`,
also ``coterie.mailbox.Durability``): ``always`` fsyncs before each append
returns, ``batch`` shares fsyncs among concurrent appends (an append still
returns only once durable), ``none`` never fsyncs (survives kill -9, not a
power loss).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, Self

import attrs
import trio

from coterie import journal
from coterie.context.history import (
    INTERRUPTED,
    NOT_RUN,
    Message,
    blocks,
    changed_span,
    repair_history,
    tool_use_ids,
)
from coterie.journal import Durability

if TYPE_CHECKING:
    from collections.abc import Callable
    from types import TracebackType

__all__ = ["Replica", "TranscriptCorruption", "TranscriptLog", "prompt_status", "read_history"]


class Replica(Protocol):
    """Where a transcript's appends are copied (``coterie.backends.redis.mirror.LogReplica``):
    ``append`` queues the bytes and numbers them, ``flush`` waits until the
    copies up to that number are made."""

    def append(self, data: bytes) -> int: ...
    async def flush(self, upto: int | None = None) -> None: ...


@attrs.frozen
class TranscriptCorruption:
    """Bytes in a transcript that were not a valid entry: skipped, or cut off the tail."""

    path: str
    start: int
    end: int
    action: str  # "skipped" or "truncated"
    reason: str
    saved_to: str | None = None


@attrs.define
class _Replay:
    """The history rebuilt from a log's entries, before any settling."""

    messages: list[Message] = attrs.field(factory=list)
    started: dict[str, str] = attrs.field(factory=dict)  # tool id -> name, this round
    finished: dict[str, dict[str, Any]] = attrs.field(factory=dict)  # tool id -> result block
    problems: list[TranscriptCorruption] = attrs.field(factory=list)
    torn_at: int | None = None
    prompt_ids: set[str] = attrs.field(factory=set)
    meta: dict[str, Any] = attrs.field(factory=dict)
    prompt_meta: dict[str, dict[str, Any]] = attrs.field(factory=dict)
    ever_started: set[str] = attrs.field(factory=set)  # every tool id started, all rounds
    # Where the message starting each request is in the history (None: compacted away).
    prompt_at: dict[str, int | None] = attrs.field(factory=dict)
    # The stage of the compaction that took each such message away.
    prompt_gone: dict[str, str] = attrs.field(factory=dict)
    # Where each message recorded with a ``uuid`` is in the history (None: compacted away).
    uuid_at: dict[str, int | None] = attrs.field(factory=dict)
    # Where in the file the record starting each request begins.
    prompt_start: dict[str, int] = attrs.field(factory=dict)
    # Where the record being applied begins.
    offset: int = 0

    def apply(self, entry: dict[str, Any]) -> None:
        kind = entry.get("type")
        if kind == "message":
            self.messages.append(entry["message"])
            meta = entry.get("meta")
            if isinstance(meta, dict):
                self.meta = meta
            if entry.get("prompt_id") is not None:
                self.prompt_ids.add(str(entry["prompt_id"]))
                self.prompt_meta[str(entry["prompt_id"])] = self.meta
                self.prompt_at[str(entry["prompt_id"])] = len(self.messages) - 1
                self.prompt_start.setdefault(str(entry["prompt_id"]), self.offset)
            if entry.get("uuid") is not None:
                self.uuid_at[str(entry["uuid"])] = len(self.messages) - 1
            # A new message starts a new round of tool calls.
            self.started.clear()
            self.finished.clear()
        elif kind == "tool_started":
            self.started[str(entry["id"])] = str(entry.get("name", ""))
            self.ever_started.add(str(entry["id"]))
        elif kind == "tool_finished":
            self.finished[str(entry["id"])] = {
                "type": "tool_result",
                "tool_use_id": str(entry["id"]),
                "content": entry.get("content", ""),
                "is_error": bool(entry.get("is_error", False)),
            }
        elif kind == "compaction":
            size = len(self.messages)
            start = max(0, min(int(entry["start"]), size))
            end = max(start, min(int(entry["end"]), size))
            self.messages[start:end] = list(entry["messages"])
            shift = len(entry["messages"]) - (end - start)
            for places in (self.prompt_at, self.uuid_at):
                for key, at in places.items():
                    if at is not None and at >= end:
                        places[key] = at + shift
                    elif at is not None and at >= start:
                        places[key] = None
                        if places is self.prompt_at:
                            self.prompt_gone[key] = str(entry.get("stage", ""))
        else:
            raise ValueError(f"unknown entry type {kind!r}")

    def settled(self) -> tuple[list[Message], list[str]]:
        """The history as the resumed loop must see it, and the interrupted tool ids."""
        messages = list(self.messages)
        interrupted: list[str] = []
        if messages and messages[-1].get("role") == "assistant":
            ids = tool_use_ids(messages[-1])
            if ids:
                results = []
                for tool_id in ids:
                    if tool_id in self.finished:
                        results.append(self.finished[tool_id])
                        continue
                    if tool_id in self.started:
                        interrupted.append(tool_id)
                    text = INTERRUPTED if tool_id in self.started else NOT_RUN
                    results.append(
                        {
                            "type": "tool_result",
                            "tool_use_id": tool_id,
                            "content": text,
                            "is_error": True,
                        }
                    )
                messages.append({"role": "user", "content": results})
        return repair_history(messages), interrupted


def _replay(data: bytes, path: Path) -> _Replay:
    replay = _Replay()
    for item in journal.scan(data):
        if isinstance(item, journal.Incomplete):
            replay.torn_at = item.start
            break
        if isinstance(item, journal.Corrupt):
            replay.problems.append(
                TranscriptCorruption(str(path), item.start, item.end, "skipped", "bad framing")
            )
            continue
        assert isinstance(item, journal.Record)
        if journal.is_seal(item):
            continue
        try:
            entry = json.loads(item.payload)
            if not isinstance(entry, dict):
                raise ValueError("not an object")
            replay.offset = item.start
            replay.apply(entry)
        except (ValueError, KeyError, TypeError) as exc:
            replay.problems.append(
                TranscriptCorruption(
                    str(path), item.start, item.end, "skipped", f"bad entry: {exc}"
                )
            )
    return replay


def prompt_status(path: Path, prompt_id: str, *, cut: str = "rewind") -> str:
    """Where request *prompt_id* stands in the history of the log at *path* (read
    only: the live writer's log may be read): ``present`` (the message starting it
    is there), ``cut`` (a compaction of stage *cut* took it away), ``gone`` (a
    summary replaced it) or ``unknown`` (it never began here)."""
    replay = _replay(path.read_bytes(), path)
    if replay.prompt_at.get(prompt_id) is not None:
        return "present"
    if prompt_id in replay.prompt_gone:
        return "cut" if replay.prompt_gone[prompt_id] == cut else "gone"
    return "unknown"


def first_prompt_from(path: Path, offset: int) -> str | None:
    """The first request whose work the log at *path* began at or after byte *offset*
    and still holds (read only); None if there is none (or no log)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    replay = _replay(data, path)
    later = [
        (start, prompt)
        for prompt, start in replay.prompt_start.items()
        if start >= offset and replay.prompt_at.get(prompt) is not None
    ]
    return min(later)[1] if later else None


def read_history(path: Path) -> list[Message]:
    """The history the transcript at *path* holds, read without opening it for
    writing (nothing is repaired; its writer may be running): for a person's
    look back, never for a loop to go on from (that is :meth:`TranscriptLog.load`)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return []
    return _replay(data, path).settled()[0]


class TranscriptLog:
    """One actor's conversation, append-only and crash-safe. Open with :meth:`open`.

    One writer at a time: the actor that owns the conversation (close it
    before a restarted actor reopens it). Appends are async because they
    wait for the fsync their policy promises.
    """

    def __init__(
        self, path: Path, durability: Durability, fd: int, replica: Replica | None = None
    ) -> None:
        self.path = path
        #: Where every append is copied too (the Redis backend's mirror), if anywhere.
        self.replica = replica
        self._replicated = 0  # the replica's number of the last append copied
        self.durability = durability
        #: What :meth:`open` found damaged (skipped records, a torn tail cut off).
        self.corruption: list[TranscriptCorruption] = []
        #: Tool calls answered on open as interrupted (started, no result recorded).
        self.interrupted: list[str] = []
        #: Ids of the requests whose work this transcript has begun.
        self.prompt_ids: set[str] = set()
        #: The ``meta`` of the latest message that had one (the loop's totals).
        self.meta: dict[str, Any] = {}
        #: The ``meta`` recorded with each request's first message.
        self.prompt_meta: dict[str, dict[str, Any]] = {}
        #: Every tool call the log records as started (compacted away or not).
        self.started_tools: frozenset[str] = frozenset()
        self._fd: int | None = fd
        self._policy = journal.SyncPolicy(durability, self._unsynced)

    @classmethod
    def open(
        cls,
        path: str | Path,
        durability: Durability | str = Durability.BATCH,
        *,
        on_corruption: Callable[[TranscriptCorruption], None] | None = None,
        replica: Replica | None = None,
    ) -> Self:
        """Open (creating if needed) the transcript at *path*, repairing it after a crash.

        A torn tail is cut off (and saved beside the log), corrupt records are
        skipped; each is reported to *on_corruption* and kept in
        :attr:`corruption`. Interrupted tool calls are answered as described
        in the module docstring.
        """
        path = Path(path)
        durability = Durability(durability)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
        log = cls(path, durability, fd, replica)
        try:
            log._recover(on_corruption)
        except BaseException:
            log.close()
            raise
        return log

    def _recover(self, on_corruption: Callable[[TranscriptCorruption], None] | None) -> None:
        assert self._fd is not None
        data = self.path.read_bytes()
        replay = _replay(data, self.path)
        problems = list(replay.problems)
        if replay.torn_at is not None:
            saved = self.path.with_name(f"{self.path.name}.torn-{replay.torn_at}")
            # Not synced here: the fsync at the end of recovery covers the cut.
            journal.cut_tail(self._fd, replay.torn_at, data[replay.torn_at :], saved, sync=False)
            problems.append(
                TranscriptCorruption(
                    str(self.path),
                    replay.torn_at,
                    len(data),
                    "truncated",
                    "torn tail",
                    str(saved),
                )
            )
        self.corruption = problems
        if on_corruption is not None:
            for problem in problems:
                on_corruption(problem)
        settled, self.interrupted = replay.settled()
        self.prompt_ids = set(replay.prompt_ids)
        self.meta, self.prompt_meta = replay.meta, dict(replay.prompt_meta)
        self.started_tools = frozenset(replay.ever_started)
        raw = replay.messages
        start, end, end_after = changed_span(raw, settled)
        if start == end == end_after:
            pass  # nothing to repair
        elif start == end == len(raw):
            # Only answers to interrupted calls were added: ordinary messages.
            for message in settled[start:end_after]:
                self._write({"type": "message", "message": message})
        else:
            self._write(
                {
                    "type": "compaction",
                    "stage": "repair",
                    "start": start,
                    "end": end,
                    "messages": settled[start:end_after],
                }
            )
        if self.durability is not Durability.NONE:
            os.fsync(self._fd)

    # -- reading ---------------------------------------------------------------

    def load(self) -> list[Message]:
        """The history the log holds, as a resumed loop must see it.

        Read from the file each time (not from memory), so it is exactly what
        a reopen after a crash would give. Tool calls still running count as
        interrupted.
        """
        replay = _replay(self.path.read_bytes(), self.path)
        messages, _ = replay.settled()
        return messages

    def prompt_status(self, prompt_id: str, *, cut: str = "rewind") -> str:
        """:func:`prompt_status` of this log."""
        return prompt_status(self.path, prompt_id, cut=cut)

    async def cut_before(self, prompt_id: str, *, stage: str = "rewind") -> int:
        """Drop the history from the message starting request *prompt_id* on (a
        ``compaction`` entry of *stage* replacing that span by nothing, so the log
        stays append-only); how many messages went. ``LookupError`` if the history
        does not hold that message (see :meth:`prompt_status`)."""
        replay = _replay(self.path.read_bytes(), self.path)
        at = replay.prompt_at.get(prompt_id)
        if at is None:
            raise LookupError(prompt_id)
        size = len(replay.messages)
        await self._append(
            {"type": "compaction", "stage": stage, "start": at, "end": size, "messages": []}
        )
        return size - at

    async def cut_after(
        self,
        message_uuid: str | None = None,
        *,
        prompt_id: str | None = None,
        drops: str | None = None,
        stage: str = "rewind",
    ) -> int:
        """Drop the history after a message: the one recorded with *message_uuid*, or
        the one starting request *prompt_id* (a reply keeps the results of the tools
        it called: a call is never left without its answer); how many messages went.

        With *drops* (a request's id), only if what goes is that request's work and
        nothing else: it starts right after the message, and no other request starts
        after it (``ValueError`` otherwise). ``LookupError`` if the history does not
        hold the message.
        """
        replay = _replay(self.path.read_bytes(), self.path)
        at = (
            replay.uuid_at.get(message_uuid)
            if message_uuid is not None
            else replay.prompt_at.get(str(prompt_id))
        )
        if at is None:
            raise LookupError(message_uuid or prompt_id)
        messages, end = replay.messages, at + 1
        calls = set(tool_use_ids(messages[at]))
        if calls and end < len(messages) and messages[end].get("role") == "user":
            answered = {b.get("tool_use_id") for b in blocks(messages[end])}
            if calls <= answered:
                end += 1
        size = len(messages)
        if drops is not None:
            starting = {p for p, i in replay.prompt_at.items() if i is not None and i >= end}
            if replay.prompt_at.get(drops) != end or starting != {drops}:
                raise ValueError(
                    "what follows that message is not that request's work alone"
                    if end < size
                    else "nothing follows that message"
                )
        if end >= size:
            return 0
        await self._append(
            {"type": "compaction", "stage": stage, "start": end, "end": size, "messages": []}
        )
        return size - end

    # -- appending -------------------------------------------------------------

    async def append_message(
        self,
        message: Message,
        *,
        prompt_id: str | None = None,
        meta: dict[str, Any] | None = None,
        uuid: str | None = None,
    ) -> None:
        """Record a user or assistant message the loop added to its history.

        *prompt_id* marks the message as the start of work on that request
        (a ``prompt`` message's id), in the same record, so a restarted actor
        can tell a request it already began from a new one. *meta* (JSON-able
        totals of the loop) comes back as :attr:`meta` on reopen. *uuid* names
        the message for good (its stream-json line's ``uuid``: :meth:`cut_after`).
        """
        entry: dict[str, Any] = {"type": "message", "message": message}
        if uuid is not None:
            entry["uuid"] = uuid
        if meta is not None:
            entry["meta"] = meta
            self.meta = meta
        if prompt_id is not None:
            entry["prompt_id"] = prompt_id
            self.prompt_ids.add(prompt_id)
            self.prompt_meta[prompt_id] = self.meta
        await self._append(entry)

    async def tool_started(self, tool_use_id: str, name: str, input: dict[str, Any]) -> None:
        """Record that a tool is about to run; returns once that is durable (per policy)."""
        await self._append(
            {"type": "tool_started", "id": tool_use_id, "name": name, "input": input}
        )
        self.started_tools = self.started_tools | {tool_use_id}

    async def tool_finished(
        self, tool_use_id: str, content: Any, *, is_error: bool = False
    ) -> None:
        """Record one tool's result before the message holding all results is written."""
        await self._append(
            {"type": "tool_finished", "id": tool_use_id, "content": content, "is_error": is_error}
        )

    async def record_compaction(
        self, before: list[Message], after: list[Message], *, stage: str, **detail: Any
    ) -> bool:
        """Record that the history *before* became *after*; False if nothing changed.

        Unchanged messages are recognised by identity (the funnel's stages
        reuse the message objects they do not change), so only the span that
        differs is written.
        """
        start, end, end_after = changed_span(before, after)
        if start == end == end_after:
            return False
        await self._append(
            {
                "type": "compaction",
                "stage": stage,
                "start": start,
                "end": end,
                "messages": after[start:end_after],
                **detail,
            }
        )
        return True

    def _write(self, entry: dict[str, Any]) -> int:
        if self._fd is None:
            raise trio.ClosedResourceError("the transcript is closed")
        data = journal.encode(json.dumps(entry, separators=(",", ":"), default=str).encode())
        journal.write_all(self._fd, data)
        if self.replica is not None:
            self._replicated = self.replica.append(data)
        return self._fd

    async def _append(self, entry: dict[str, Any]) -> None:
        fd = self._write(entry)
        if self.durability is Durability.NONE:
            await trio.lowlevel.checkpoint()
        else:
            # A cancelled append still finishes its fsync (the policy's runner
            # never abandons one).
            await self._policy.sync(fd)
        if self.replica is not None:
            # Returns once the copy (and any repair before it) is on the server, so
            # a host that takes over never runs again a tool this one ran. While the
            # server is away it waits; a cancellation ends the wait (what was not
            # copied did not happen, as far as another host can tell).
            await self.replica.flush(self._replicated)

    def _unsynced(self) -> list[int]:
        return [] if self._fd is None else [self._fd]

    # -- closing ---------------------------------------------------------------

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called."""
        return self._fd is None

    def close(self) -> None:
        """Flush (per policy) and close the file. Idempotent."""
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        try:
            if self.durability is not Durability.NONE:
                os.fdatasync(fd)
        finally:
            os.close(fd)

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
