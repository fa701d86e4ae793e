"""The requests a command sends a run's lead, and how their results come back:
one prompt (:func:`ask_lead`, a team's with its summary), or a host's prompts
one after the other until a ``/clear`` (:func:`each_turn`)."""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

from coterie.models import Usage

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable

    from rich.console import Console

    from coterie.commands.streaminput import HostTurn
    from coterie.session import AgentSession
    from coterie.ui import View

__all__ = ["ask_lead", "each_turn", "with_run_id", "with_summary"]


async def each_turn(
    session: AgentSession,
    view: View,
    turns: AsyncIterator[HostTurn],
    err: Console,
    next_model: Callable[[], str | None] | None,
    cleared: HostTurn | None,
) -> dict[str, Any] | None:
    """Every prompt of *turns* asked in order (with the model *next_model* names then),
    each result shown with the turn's ``origin``, until a ``/clear``; the last result
    (an error one if a turn failed), or None when there was no turn.

    A ``/clear`` is Claude Code's: the view says the conversation is reset (its
    ``conversation_reset`` line), and this run ends; the caller opens the next,
    which shows the ``/clear``'s own result first (*cleared*: the model was not
    asked, nothing was spent)."""
    last: dict[str, Any] | None = None
    if cleared is not None:
        last = _cleared(session)
        view.finish(cleared.stamped(last))
    failed = False
    async for turn in turns:
        # The prompt's id: the host's, else one of ours, the same on its replayed line
        # and on its checkpoint (the SDK's rewind_files names it).
        message_id = turn.uuid or str(uuid.uuid4())
        replayed = getattr(view, "replayed", None)
        if turn.replay and replayed is not None:
            replayed(turn.message or {}, message_id)  # --replay-user-messages: acknowledged
        if turn.clears:
            reset = getattr(view, "conversation_reset", None)
            if reset is not None:
                reset(turn.uuid)
            last = last or _cleared(session)  # a run cleared before any prompt ends well
            break
        model = next_model() if next_model else None
        last = await ask_lead(session, turn.text, model, message_id=message_id)
        failed = failed or bool(last["is_error"])
        view.finish(turn.stamped(last))
    if last is None:
        err.print("[red]error:[/] no user message on standard input")
    return None if last is None else {**last, "is_error": failed}


def _cleared(session: AgentSession) -> dict[str, Any]:
    """The result of ``/clear`` (Claude Code's: a local command, no model call)."""
    return {
        "result": "",
        "is_error": False,
        "subtype": "success",
        "num_turns": 0,
        "usage": Usage().to_dict(),
        "total_cost_usd": 0.0,
        "duration_ms": 0,
        "local_command": "clear",
        "run_id": session.run_id,
    }


async def ask_lead(
    session: AgentSession, prompt: str, model: str | None = None, *, message_id: str | None = None
) -> dict[str, Any]:
    result = (await session.query(prompt, model=model, message_id=message_id)).to_dict()
    if session.board is None:
        return with_run_id(session, result)
    return await with_summary(session, result)


def with_run_id(session: AgentSession, result: dict[str, Any]) -> dict[str, Any]:
    return {**result, "run_id": session.run_id}


async def with_summary(session: AgentSession, result: dict[str, Any]) -> dict[str, Any]:
    from coterie.team import team_summary

    assert session.board is not None
    tasks = await session.board.list()
    return {**team_summary(session.run_dir, result, list(tasks)), "run_id": session.run_id}
