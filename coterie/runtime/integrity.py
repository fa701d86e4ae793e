"""Checks a run makes before it goes on: nothing it depends on was lost from disk.

The board and the mailboxes skip what they cannot read (and report it), which
is right for a stray damaged record but wrong when what was lost is something
the run already relied on: carrying on would then report success over lost
work (a board without the tasks the lead created) or wait forever (a request
recorded as sent that no one will ever answer). These checks compare what
the run's other records say it depends on with what the board and the
mailboxes still hold, and stop the run with :class:`LostRecords` instead.

* Tasks: every ``task_N`` the lead's transcript shows ``TaskCreate`` created
  must be on the board.
* The pending request: a request ``state.json`` records as sent, with no
  result yet, must still be in its recipient's mailbox, or its reply in the
  user's mailbox; otherwise nothing would ever answer it.
* Tool calls: every tool call the event log shows an agent making must be in
  that agent's transcript (the loop records a call there, durably, before it
  emits ``agent.tool_call``). A transcript that lost them (deleted, zeroed,
  cut short) would make the agent run them again, or skip them, and report
  success.

:class:`BoardDamage` reports what the board skipped or cut while reading its
log, as the post office does for mailboxes (``mailbox.corrupt``).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import trio

from coterie.errors import CoterieError
from coterie.events import read_events
from coterie.mailbox import peek_mailbox
from coterie.runs import COMPLETED, FAILED, read_state

if TYPE_CHECKING:
    from collections.abc import Iterable
    from pathlib import Path

    from coterie.board import BoardCorruption
    from coterie.events import EventLog

__all__ = [
    "BoardDamage",
    "LostRecords",
    "check_pending_request",
    "check_tasks",
    "check_tool_calls",
    "created_tasks",
]

#: How TaskCreate's result names the task it created (``Created task_N: ...``).
_CREATED = re.compile(r"^Created (task_\d+)\b")


class LostRecords(CoterieError, RuntimeError):
    """Records a run depends on are missing from its board or mailboxes (damage on disk).

    Going on would lose work silently or wait forever, so the run is stopped;
    the message names what was lost and where it should have been.
    """


def created_tasks(run_dir: Path, agent: str = "lead") -> list[str]:
    """The task ids *agent*'s transcript shows ``TaskCreate`` created, in order."""
    path = run_dir / "transcripts" / f"{agent}.log"
    if not path.is_file():
        return []
    from coterie.context import TranscriptLog  # the context package is heavy; only here

    with TranscriptLog.open(path, "none") as log:
        messages: list[Any] = log.load()
    creates: set[str] = set()
    found: list[str] = []
    for message in messages:
        for block in _blocks(message):
            if block.get("type") == "tool_use" and block.get("name") == "TaskCreate":
                creates.add(str(block.get("id")))
            elif block.get("type") == "tool_result" and block.get("tool_use_id") in creates:
                if block.get("is_error"):
                    continue
                match = _CREATED.match(_text(block.get("content")))
                if match and match.group(1) not in found:
                    found.append(match.group(1))
    return found


def check_tasks(
    run_dir: Path,
    board_ids: Iterable[str],
    board_dir: Path,
    had_log: bool = True,
    damage: Iterable[str] = (),
) -> None:
    """Raise :class:`LostRecords` if a task the lead created is not on the board.

    *had_log* says whether the board's log existed before the board was opened
    (opening creates it); *damage* is what opening reported, told with the error.
    """
    have = set(board_ids)
    missing = [task for task in created_tasks(run_dir) if task not in have]
    if not missing:
        return
    log = board_dir / "board.log"
    where = f"{log} was deleted" if not had_log else f"{log} lost them (damaged)"
    raise LostRecords(
        f"run {run_dir.name}: the task board lost {len(missing)} task(s) the lead created"
        f" ({', '.join(missing)}): {where}; the run is stopped rather than finish without"
        " them (restore the board from a backup, or start a new run)"
        + "".join(f"; {line}" for line in damage)
    )


def check_pending_request(run_dir: Path, user: str = "user", *, on_disk: bool = True) -> None:
    """Raise :class:`LostRecords` if the pending request can never be answered, or if
    ``state.json`` is gone from a run whose agents have begun work (it is written
    before any request is sent, so without it what was asked and answered is lost).

    With *on_disk* false (the Redis backend, whose mailboxes are on the server,
    not in the run directory) only ``state.json`` is checked."""
    if not (run_dir / "state.json").exists() and _worked(run_dir):
        raise LostRecords(
            f"run {run_dir.name}: {run_dir / 'state.json'} is missing (deleted?), but the"
            " run's agents have begun work, so what was asked and answered is lost; the run"
            " is stopped rather than start over on top of that work (start a new run)"
        )
    state = read_state(run_dir)
    pending = state.get("request")
    if not isinstance(pending, dict) or not pending.get("sent"):
        return  # nothing pending, or not sent yet: the resume sends it
    if state.get("state") in (COMPLETED, FAILED) or not on_disk:
        return
    request_id, to = str(pending.get("id")), str(pending.get("to", "lead"))
    mailboxes = run_dir / "mailboxes"
    if any(m.id == request_id for m in peek_mailbox(mailboxes / to)):
        return  # the recipient has it (restarted, it handles it again)
    if any(m.correlation_id == request_id for m in peek_mailbox(mailboxes / user)):
        return  # answered: the reply waits to be recorded
    raise LostRecords(
        f"run {run_dir.name}: the request {request_id} to {to!r} was sent, but it is in"
        f" neither {mailboxes / to} nor its reply in {mailboxes / user} (the mailbox was"
        " damaged or deleted), so nothing would ever answer it; the run is stopped"
        " rather than wait forever (start a new run to ask again)"
    )


def check_tool_calls(run_dir: Path) -> None:
    """Raise :class:`LostRecords` if an agent's transcript lost tool calls the event
    log shows it made (checked before any agent starts again)."""
    path = run_dir / "events.jsonl"
    if not path.is_file():
        return
    called: dict[str, list[str]] = {}
    for event in read_events(path):
        actor, call = event.data.get("actor"), event.data.get("id")
        if event.type == "agent.tool_call" and isinstance(actor, str) and isinstance(call, str):
            called.setdefault(actor, []).append(call)
    from coterie.context import TranscriptLog  # the context package is heavy; only here

    for log_path in sorted((run_dir / "transcripts").glob("*.log")):
        with TranscriptLog.open(log_path, "none") as log:
            skipped = [c for c in log.corruption if c.action == "skipped"]
        if skipped:  # a record lost from the middle: what it held the agent would redo
            where = ", ".join(f"bytes {c.start}-{c.end}" for c in skipped[:3])
            raise LostRecords(
                f"run {run_dir.name}: the transcript {log_path} is damaged ({where} are no"
                " record), so its agent would go on from a history with a hole in it and"
                " could run a finished step again; the run is stopped rather than report"
                " success over lost work (restore the transcript, or start a new run)"
            )
    for actor, calls in called.items():
        log_path = run_dir / "transcripts" / f"{actor}.log"
        if log_path.is_file():
            with TranscriptLog.open(log_path, "none") as log:
                started = log.started_tools
        else:
            started = frozenset()
        lost = [c for c in dict.fromkeys(calls) if c not in started]
        if lost:
            what = "was deleted" if not log_path.is_file() else "lost them (damaged)"
            raise LostRecords(
                f"run {run_dir.name}: {actor}'s transcript {log_path} {what}: {len(lost)} tool"
                f" call(s) the event log shows it made ({', '.join(lost[:5])}"
                f"{', ...' if len(lost) > 5 else ''}) are not in it, so {actor} would run them"
                " again or skip them; the run is stopped rather than report success over lost"
                " work (restore the transcript from a backup, or start a new run)"
            )


def _worked(run_dir: Path) -> bool:
    """Whether some agent of the run has a transcript with anything in it."""
    transcripts = run_dir / "transcripts"
    return transcripts.is_dir() and any(
        p.is_file() and p.stat().st_size > 0 for p in transcripts.glob("*.log")
    )


class BoardDamage:
    """Reports damage the board finds in its log: a ``board.corrupt`` event, and a
    line for the user (:attr:`notices`, which the CLI prints once).

    The board calls it from whichever thread read the log. While the board is
    being opened (in a worker thread, the Trio thread waiting) reports are
    kept and emitted by :meth:`opened`; after that, from the Trio thread they
    are emitted at once, from another one they are handed to the Trio thread,
    since the event log is not thread-safe.
    """

    def __init__(self, events: EventLog) -> None:
        self.events = events
        self.notices: list[str] = []
        self._early: list[BoardCorruption] = []
        self._token: trio.lowlevel.TrioToken | None = None

    def __call__(self, damage: BoardCorruption) -> None:
        if self._token is None:
            self._early.append(damage)
        elif trio.lowlevel.in_trio_run():
            self._emit(damage)
        else:
            self._token.run_sync_soon(self._emit, damage)

    def opened(self) -> None:
        """The board is open: emit what opening it found; report live from now on."""
        self._token = trio.lowlevel.current_trio_token()
        for damage in self._early:
            self._emit(damage)
        self._early.clear()

    def _emit(self, damage: BoardCorruption) -> None:
        self.events.emit(
            "board.corrupt",
            start=damage.start,
            end=damage.end,
            action=damage.action,
            reason=damage.reason,
            saved_to=damage.saved_to,
        )
        what = "skipped" if damage.action == "skipped" else "cut off"
        saved = f" (saved to {damage.saved_to})" if damage.saved_to else ""
        self.notices.append(
            f"the task board's log is damaged: {damage.reason} at bytes"
            f" {damage.start}-{damage.end} {what}{saved}"
        )


def _blocks(message: Any) -> list[dict[str, Any]]:
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list):
        return []
    return [block for block in content if isinstance(block, dict)]


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return ""
