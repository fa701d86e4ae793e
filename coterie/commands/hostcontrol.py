"""The host's requests about the run's state: ``get_context_usage``, ``stop_task``
and ``rewind_files`` (the MCP ones are :mod:`coterie.commands.hostmcp`'s).

Each handler waits for the run's session (a request may come before the run
has started); what it raises is the host's
error answer, and the run goes on.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from coterie.errors import CoterieError

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from coterie.hostlink import Handler, Request
    from coterie.session import AgentSession

__all__ = ["control_handlers"]


def control_handlers(
    session: Callable[[], Awaitable[AgentSession]], model: Callable[[], str | None]
) -> dict[str, Handler]:
    """The handlers of this module's requests, acting on the run's *session* (waited
    for), whose next prompts use *model* (None: the run's own)."""

    async def get_context_usage(request: Request) -> dict[str, Any]:
        return (await session()).context_usage(model())

    async def stop_task(request: Request) -> dict[str, Any]:
        task_id = request.body.get("task_id")
        if not isinstance(task_id, str) or not task_id:
            raise ValueError("stop_task needs a task_id")
        if not await (await session()).stop_task(task_id):
            raise ValueError(f"no task {task_id!r} is at work")
        return {}

    async def rewind_files(request: Request) -> dict[str, Any]:
        message = request.body.get("user_message_id")
        if not isinstance(message, str) or not message:
            raise ValueError("rewind_files needs a user_message_id")
        dry_run = request.body.get("dry_run") is True
        try:
            changed = await (await session()).rewind_files(message, dry_run=dry_run)
        except CoterieError as exc:
            raise ValueError(str(exc)) from None
        return {"canRewind": True, "filesChanged": changed}

    return {
        "get_context_usage": get_context_usage,
        "stop_task": stop_task,
        "rewind_files": rewind_files,
    }
