"""Embedding coterie: ``async with open_agent(...) as agent: await agent.query(...)``.

``async for message in agent.stream(prompt)`` is the same request with the
Agent SDK's typed messages as they happen (:mod:`coterie.sdkmessages`:
``SystemMessage`` init, ``AssistantMessage``, ``UserMessage`` tool results,
the subagents' task messages, ``StreamEvent`` with
``include_partial_messages=True``, the ``ResultMessage`` last); close it with
:func:`contextlib.aclosing` to stop early, which interrupts the request
(:mod:`coterie.runtime.streaming`).

:func:`open_agent` and :func:`open_team` are thin faces over the composition
root (:mod:`coterie.runtime`): each turns its arguments into
:class:`~coterie.runtime.RunOptions`, prepares the run and opens it. A solo
run is a team with no teammates; the library path and the CLI path are the
same path.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from coterie.actors import ActorContext
from coterie.events import EventLog
from coterie.hooks import callback_hooks
from coterie.mailbox import PostOffice
from coterie.runs import hold_run
from coterie.runtime import Agents, AgentSession, RunOptions, open_run, prepare
from coterie.supervisors import DynamicSupervisor
from coterie.team import team_names
from coterie.toolpermission import CallbackAsker
from coterie.tools import default_registry

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence

    from coterie.context import CompactionReport
    from coterie.hooks import HookMatcher
    from coterie.mcpclient.hosted import McpHost
    from coterie.models import Model
    from coterie.toolpermission import Allow, Deny, PermissionContext
    from coterie.tools import Asker

    CanUseTool = Callable[[str, dict[str, Any], PermissionContext], Awaitable[Allow | Deny]]

__all__ = ["AgentSession", "RunOptions", "compact_run", "open_agent", "open_team"]


def _asker(asker: Asker | None, can_use_tool: CanUseTool | None) -> Asker | None:
    """Who answers the gate's questions: *asker*, or the *can_use_tool* callback."""
    if can_use_tool is None:
        return asker
    if asker is not None:
        raise TypeError("give an asker or can_use_tool, not both")
    return CallbackAsker(can_use_tool)


def _options(workdir: Path | str, fields: dict[str, Any], **more: Any) -> RunOptions:
    options = fields.pop("options", None) or RunOptions()
    return RunOptions(**{**options.to_json(), **fields, **more, "workdir": Path(workdir)})


@contextlib.asynccontextmanager
async def open_agent(
    workdir: Path | str = ".",
    *,
    model: Model | str | None = None,
    asker: Asker | None = None,
    can_use_tool: CanUseTool | None = None,
    resume: str | None = None,
    on_cancel: Callable[[], None] | None = None,
    hooks: Mapping[str, Sequence[HookMatcher]] | None = None,
    mcp_host: McpHost | None = None,
    run_id: str | None = None,
    **options: Any,
) -> AsyncIterator[AgentSession]:
    """Start an agent in *workdir* and yield a session; stop it on exit.

    *options* are :class:`~coterie.runtime.RunOptions` fields (``scenario``,
    ``permission_mode``, ``goal``, ``loop``, ``max_turns``, ...), or
    ``options=RunOptions(...)``. *model* is a model object or name (default:
    the scenario's scripted model, else the real API). With *asker* None
    nobody can approve an action: what would ask is denied and the model is
    told so (in ``permission_mode="auto"`` the classifier decides, and the
    asker only past its denial limits). *can_use_tool* is the asker as the
    Agent SDK's callback: ``async def decide(tool_name, input, context)``
    returning :class:`~coterie.toolpermission.Allow` or
    :class:`~coterie.toolpermission.Deny` (:mod:`coterie.toolpermission`).
    ``goal`` starts the goal evaluator (each query then goes on until it holds);
    ``loop`` (a ``--loop`` spec, at most ``max_ticks`` runs) starts the scheduler, for
    :meth:`AgentSession.loop`. With *resume* (a run id) the run's recorded
    options are used; call :meth:`AgentSession.resume` to finish its pending
    request. ``coterie cancel RUN`` raises :class:`~coterie.errors.RunCancelled`
    from the block, or calls *on_cancel* instead if given (the CLI's Ctrl-C).
    *hooks* are Python hook callbacks, grouped as the Agent SDK groups them
    (``{"PreToolUse": [HookMatcher("Bash", [check])]}``): they run beside the
    settings' hooks (:mod:`coterie.hooks.callbacks`). *mcp_host* is the program
    driving the run, which serves its ``"type": "sdk"`` MCP servers over the control
    channel (:mod:`coterie.mcpclient.hosted`); without one they are skipped.
    *run_id* names the new run (a UUID: the Agent SDK's ``session_id``).
    """
    callbacks = callback_hooks(hooks or {})  # an unknown event fails before the run
    asker = _asker(asker, can_use_tool)
    run = _options(workdir, options, command="run", headless=asker is None)
    prepared = prepare(run, model=model, resume=resume, run_id=run_id)
    async with open_run(
        prepared, asker, on_cancel=on_cancel, callbacks=callbacks, mcp_host=mcp_host
    ) as session:
        yield session


@contextlib.asynccontextmanager
async def open_team(
    workdir: Path | str = ".",
    *,
    teammates: int | None = None,
    names: list[str] | tuple[str, ...] = (),
    model: Model | str | None = None,
    asker: Asker | None = None,
    can_use_tool: CanUseTool | None = None,
    resume: str | None = None,
    on_cancel: Callable[[], None] | None = None,
    hooks: Mapping[str, Sequence[HookMatcher]] | None = None,
    mcp_host: McpHost | None = None,
    run_id: str | None = None,
    **options: Any,
) -> AsyncIterator[AgentSession]:
    """Start a team in *workdir*; ``await session.query(goal)`` runs it to the end.

    The options are :func:`open_agent`'s, plus the teammates (*names*, or
    *teammates* default names; two by default) and ``plan_approval``
    (teammates plan read-only until the lead approves) and ``lead_turns``
    (``"batched"``, the default, or ``"each"``: docs/teams.md). With *resume* the
    run's recorded options are used.
    """
    callbacks = callback_hooks(hooks or {})
    asker = _asker(asker, can_use_tool)
    chosen = team_names(teammates, names) if resume is None else ()
    run = _options(workdir, options, command="team", teammates=chosen, headless=asker is None)
    prepared = prepare(run, model=model, resume=resume, run_id=run_id)
    async with open_run(
        prepared, asker, on_cancel=on_cancel, callbacks=callbacks, mcp_host=mcp_host
    ) as session:
        yield session


async def compact_run(
    workdir: Path | str, run: str, focus: str | None = None, *, model: Model | None = None
) -> CompactionReport:
    """``/compact [focus]`` on a run that is not running: summarise the lead's history.

    The summary is recorded in the lead's transcript, so the next ``resume``
    continues from it. Raises :class:`~coterie.runs.RunBusy` if the run is live.
    """
    prepared = prepare(RunOptions(workdir=Path(workdir)), model=model, resume=run)
    with hold_run(prepared.run_dir):
        events = EventLog(prepared.run_dir / "events.jsonl")
        try:
            post = PostOffice(None)
            agents = Agents(prepared, events, post, None, DynamicSupervisor("subagents"))
            ctx = ActorContext(name="lead", mailbox=post.open("lead"), post=post, events=events)
            loop = agents.loop(ctx, "lead", default_registry(), summarizer=prepared.model)
            assert loop.transcript is not None
            with loop.transcript:
                return await loop.compact(focus)
        finally:
            events.close()
