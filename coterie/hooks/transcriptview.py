"""The transcript as hooks read it: a JSONL view of an actor's durable log.

Claude Code names in every hook input (``transcript_path``) a JSONL file, one
line per message, and hooks read it: a Stop hook takes the last assistant
text from it (``grep '"role":"assistant"' | tail -1``), a loop plugin decides
from it whether to go on. coterie's transcript is a framed, crash-safe log
(:mod:`coterie.context.transcript`), which no shell script can read. This
module owns the view: the history the log holds, written beside it
(``transcripts/lead.log`` → ``transcripts/lead.jsonl``) in Claude Code's
shape, rewritten before a hook runs whenever the log has changed.

The log stays the only source of truth: the view is derived from it, never
read back as history, and may be deleted at any time. Each line is
``{"parentUuid", "isSidechain", "userType", "cwd", "sessionId", "version",
"type", "message", "uuid", "timestamp"}``, compact JSON as Claude Code writes
it, ``type`` the message's role (``user`` / ``assistant``). A message's
``uuid`` is derived from its parent's and its own content, so it is the same
in every rewrite while the history up to it is unchanged, and
``parentUuid`` chains each line to the one before (the first has ``null``).
The log does not record when a message was added, so ``timestamp`` is when
the view first held that message (kept from the previous view by ``uuid``).
The file is replaced atomically: a hook never reads half a view.
Brought up to date only when a hook is about to run, and only when the log
changed since (its size and modification time).
"""

from __future__ import annotations

import datetime
import hashlib
import json
import uuid
from importlib import metadata
from typing import TYPE_CHECKING, Any

import attrs

from coterie.context.transcript import read_history

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from pathlib import Path

    from coterie.context.history import Message

__all__ = ["TranscriptView", "view_lines", "view_path"]

_NAMESPACE = uuid.UUID("6f1d3c2e-8a4b-5c7d-9e0f-1a2b3c4d5e6f")


def _version() -> str:
    try:
        return metadata.version("coterie")
    except metadata.PackageNotFoundError:  # run from a source tree
        return "0"


_VERSION = _version()


def view_path(log: Path) -> Path:
    """Where the JSONL view of the durable transcript at *log* is kept."""
    return log.with_suffix(".jsonl")


def now_stamp() -> str:
    """The current time as Claude Code stamps a line (UTC, milliseconds, ``Z``)."""
    moment = datetime.datetime.now(datetime.UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def _uuid(parent: str | None, message: Message) -> str:
    digest = hashlib.sha256(
        json.dumps(message, sort_keys=True, separators=(",", ":"), default=str).encode()
    ).hexdigest()
    return str(uuid.uuid5(_NAMESPACE, f"{parent}/{digest}"))


def view_lines(
    history: Sequence[Message],
    *,
    session_id: str,
    cwd: str,
    sidechain: bool = False,
    stamps: Mapping[str, str] | None = None,
    now: str | None = None,
) -> list[dict[str, Any]]:
    """The view's lines for *history*: one per message, chained by ``parentUuid``.

    *stamps* are the timestamps of lines already written (by ``uuid``); a
    message not among them is stamped *now*.
    """
    known = stamps or {}
    when = now or now_stamp()
    lines: list[dict[str, Any]] = []
    parent: str | None = None
    for message in history:
        role = message.get("role")
        kind = role if role in ("user", "assistant") else "user"
        # Claude Code's assistant message is the API's, which says ``type: message``.
        body = {"type": "message", **message} if kind == "assistant" else dict(message)
        me = _uuid(parent, message)
        lines.append(
            {
                "parentUuid": parent,
                "isSidechain": sidechain,
                "userType": "external",
                "cwd": cwd,
                "sessionId": session_id,
                "version": _VERSION,
                "type": kind,
                "message": body,
                "uuid": me,
                "timestamp": known.get(me, when),
            }
        )
        parent = me
    return lines


def _stamps(path: Path) -> dict[str, str]:
    """The timestamps of the view at *path* by uuid (nothing if there is none)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (FileNotFoundError, UnicodeDecodeError):
        return {}
    found: dict[str, str] = {}
    for line in text.splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict) and isinstance(entry.get("uuid"), str):
            found[entry["uuid"]] = str(entry.get("timestamp", ""))
    return found


@attrs.define
class TranscriptView:
    """The JSONL view of one actor's durable transcript, kept up to date."""

    #: The durable log (the source of truth).
    log: Path
    session_id: str
    cwd: Path
    #: A subagent's transcript: its lines say ``isSidechain: true``, as Claude Code's do.
    sidechain: bool = False
    #: The log's (size, mtime) when the view was last written: unchanged, not rewritten.
    _written: tuple[int, int] | None = attrs.field(default=None, init=False)

    @property
    def path(self) -> Path:
        """The view's file, named in hook inputs as ``transcript_path``."""
        return view_path(self.log)

    def refresh(self) -> Path:
        """Write the view if the log changed since the last time; its path.

        Synchronous, like the log's own reads (:meth:`TranscriptLog.load`): the
        file is one actor's conversation, read and written in one go, and a
        rewrite never interleaves with another one of the same view."""
        try:
            stat = self.log.stat()
            state: tuple[int, int] | None = (stat.st_size, stat.st_mtime_ns)
        except FileNotFoundError:
            state = None
        if state is not None and state == self._written and self.path.exists():
            return self.path
        lines = view_lines(
            read_history(self.log),
            session_id=self.session_id,
            cwd=str(self.cwd),
            sidechain=self.sidechain,
            stamps=_stamps(self.path),
        )
        text = "".join(
            json.dumps(line, separators=(",", ":"), ensure_ascii=False, default=str) + "\n"
            for line in lines
        )
        self.log.parent.mkdir(parents=True, exist_ok=True)
        temp = self.path.with_name(f".{self.path.name}.{uuid.uuid4().hex}.tmp")
        temp.write_text(text, encoding="utf-8")
        temp.replace(self.path)
        self._written = state
        return self.path
