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
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from coterie.errors import CoterieError
from coterie.mailbox import peek_mailbox
from coterie.runs import COMPLETED, FAILED, read_state

if TYPE_CHECKING:
    from collections.abc import Iterable
    from pathlib import Path

__all__ = ["LostRecords", "check_pending_request", "check_tasks", "created_tasks"]

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
    run_dir: Path, board_ids: Iterable[str], board_dir: Path, *, damage: Iterable[str] = ()
) -> None:
    """Raise :class:`LostRecords` if a task the lead created is not on the board
    (*damage*: what opening the board reported, told along with the error)."""
    have = set(board_ids)
    missing = [task for task in created_tasks(run_dir) if task not in have]
    if not missing:
        return
    log = board_dir / "board.log"
    where = f"{log} is missing" if not log.exists() else f"{log} lost them (damaged)"
    raise LostRecords(
        f"run {run_dir.name}: the task board lost {len(missing)} task(s) the lead created"
        f" ({', '.join(missing)}): {where}; the run is stopped rather than finish without"
        " them (restore the board from a backup, or start a new run)"
        + "".join(f"; {line}" for line in damage)
    )


def check_pending_request(run_dir: Path, user: str = "user") -> None:
    """Raise :class:`LostRecords` if the pending request can never be answered."""
    state = read_state(run_dir)
    pending = state.get("request")
    if not isinstance(pending, dict) or not pending.get("sent"):
        return  # nothing pending, or not sent yet: the resume sends it
    if state.get("state") in (COMPLETED, FAILED):
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
