"""Cutting a stopped run's conversations back, besides the lead's rewind.

- :func:`resume_at`: the lead's conversation cut back to just after one message
  (the Agent SDK's ``resume_session_at``, with its ``resume_drops_turn`` check);
- :func:`cut_team`: a team's teammates' conversations and its board cut back
  to a checkpoint, by the lengths of their logs the checkpoint recorded
  (:func:`conversation_marks`).

Each works on a stopped run: the caller holds it (or it is held here).
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

from coterie.board import rewind_log
from coterie.board.log import LOG_NAME as BOARD_LOG
from coterie.checkpoints.record import BadCheckpoint, checkpoint_log
from coterie.context import TranscriptLog
from coterie.context.transcript import first_prompt_from
from coterie.runs import COMPLETED, hold_run, read_config, transcript_path, write_state

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["conversation_marks", "cut_team", "resume_at"]


def conversation_marks(run_dir: Path) -> dict[str, int]:
    """How long the run's logs that a rewind of the conversation cuts besides the
    lead's are now: each teammate's transcript, the board's log (by path in the run
    directory; what is not there yet is 0)."""
    marks: dict[str, int] = {}
    for path in _teammate_logs(run_dir):
        with contextlib.suppress(FileNotFoundError):
            marks[f"transcripts/{path.name}"] = path.stat().st_size
    with contextlib.suppress(FileNotFoundError):
        marks[f"board/{BOARD_LOG}"] = (run_dir / "board" / BOARD_LOG).stat().st_size
    return marks


def _teammate_logs(run_dir: Path) -> list[Path]:
    """The transcripts of the run's teammates (not the lead's, not subagents')."""
    return [
        path
        for path in sorted((run_dir / "transcripts").glob("*.log"))
        if path.name != "lead.log" and "-sub-" not in path.name
    ]


async def cut_team(run_dir: Path, marks: dict[str, int]) -> tuple[tuple[str, ...], int]:
    """Cut a stopped team run's teammates' conversations and its board back to
    *marks* (a checkpoint's): the work each began after it goes, and so do the tasks
    created after it; the teammates cut and the tasks gone. A run on a server keeps
    its teammates and board as they are."""
    if read_config(run_dir).get("backend"):
        return (), 0
    teammates = []
    for path in _teammate_logs(run_dir):
        prompt = first_prompt_from(path, marks.get(f"transcripts/{path.name}", 0))
        if prompt is None:
            continue
        with TranscriptLog.open(path) as transcript:
            if await transcript.cut_before(prompt):
                teammates.append(path.name.removesuffix(".log"))
    tasks = 0
    board = run_dir / "board"
    if (board / BOARD_LOG).exists():
        tasks = rewind_log(board, marks.get(f"board/{BOARD_LOG}", 0))
    return tuple(teammates), tasks


async def resume_at(run_dir: Path, message_uuid: str, drops_turn: str | None = None) -> int:
    """Cut the lead's conversation of the stopped run in *run_dir* back to just after
    its message *message_uuid* (the Agent SDK's ``resume_session_at``: a reply's
    stream-json ``uuid``, or a prompt's, as the host sent or was sent it back); how
    many messages went. The files are left alone (``rewind_files`` puts them back).

    With *drops_turn* (``resume_drops_turn``: the uuid of the prompt whose turn the
    cut is meant to drop), only if what goes is that turn and nothing else.
    :class:`BadCheckpoint` for a message the conversation does not hold, or a cut
    that would drop more than *drops_turn*'s turn."""
    with hold_run(run_dir):
        lead = transcript_path(run_dir, "lead")
        if not lead.exists():
            raise BadCheckpoint(f"run {run_dir.name} has no conversation to resume at")
        prompts = {p.message: p.request for p in checkpoint_log(run_dir).checkpoints() if p.message}
        drops = None
        if drops_turn is not None:
            drops = prompts.get(drops_turn)
            if drops is None:
                raise BadCheckpoint(
                    f"Resume rejected by --resume-drops-turn: run {run_dir.name} has no"
                    f" prompt {drops_turn}"
                )
        with TranscriptLog.open(lead) as transcript:
            try:
                if message_uuid in prompts:
                    dropped = await transcript.cut_after(
                        prompt_id=prompts[message_uuid], drops=drops
                    )
                else:
                    dropped = await transcript.cut_after(message_uuid, drops=drops)
            except LookupError:
                raise BadCheckpoint(
                    f"run {run_dir.name}'s conversation holds no message {message_uuid}"
                    " (--resume-session-at takes the uuid of an assistant or user line)"
                ) from None
            except ValueError as exc:
                raise BadCheckpoint(f"Resume rejected by --resume-drops-turn: {exc}") from None
        if dropped:
            write_state(run_dir, state=COMPLETED, request=None, result=None)
        return dropped
