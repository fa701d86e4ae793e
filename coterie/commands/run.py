"""``coterie run PROMPT``, ``coterie team GOAL`` and ``coterie resume RUN_ID``."""

from __future__ import annotations

import functools
import sys
import time
from typing import TYPE_CHECKING, Any

import trio
from rich.markup import escape

from coterie.autonomy import parse_loop_spec
from coterie.commands.stopping import (
    StorageFailed,
    StorageWatch,
    describe,
    is_storage_error,
    leaves,
    storage_cause,
)
from coterie.errors import CoterieError, SupervisorGaveUp
from coterie.extensions import load_extensions
from coterie.models import ModelError, Usage
from coterie.procgroups import reap_workspace
from coterie.runs import find_run, read_config, read_state, runs_root
from coterie.session import AgentSession, open_agent, open_team
from coterie.tools import RuleError, SettingsError
from coterie.trust import TrustStoreError, can_trust, is_trusted, set_trust, trust_entry
from coterie.ui import ConsoleView, JsonView, StreamJsonView, TerminalAsker, TextView, View

if TYPE_CHECKING:
    import argparse
    from collections.abc import Awaitable, Callable
    from contextlib import AbstractAsyncContextManager
    from pathlib import Path

    from rich.console import Console

    from coterie.events import Event
    from coterie.extensions import Expansion


#: What can go wrong before a run starts: no credentials, a malformed scenario
#: or settings file, a bad mode, an unknown or busy run.
USAGE_ERRORS = (ModelError, SettingsError, RuleError, CoterieError, ValueError)


def _view(
    args: argparse.Namespace, console: Console, *, team: bool = False, board: Any = None
) -> View:
    """The output of a run: a headless format with ``-p``, else the team's live view
    (the supervision tree and the board, read with *board*) or the agent's console."""
    if args.print:
        formats = {"text": TextView, "json": JsonView, "stream-json": StreamJsonView}
        return formats[args.output_format]()
    if team:
        from coterie.ui.live import TeamView

        return TeamView(console, board)
    return ConsoleView(console)


def agent_options(args: argparse.Namespace) -> dict[str, Any]:
    """The options of ``run`` and ``team`` that go to the session, from the command line."""
    if args.auto and args.permission_mode not in (None, "auto"):
        raise CoterieError(f"--auto conflicts with --permission-mode {args.permission_mode}")
    return {
        "model": args.model,
        "scenario": args.scenario,
        "permission_mode": "auto" if args.auto else args.permission_mode,
        "goal": args.goal,
        "max_goal_iterations": args.max_goal_iterations,
        "add_dirs": args.add_dir,
        "mcp_configs": args.mcp_config,
        "max_turns": args.max_turns,
        "max_budget_usd": args.max_budget_usd,
        "context_window": args.context_window,
        "compact_at": args.compact_at,
        "agents": getattr(args, "agents", None),  # demos build their own Namespace
        "system_prompt": getattr(args, "system_prompt", None),
        "append_system_prompt": getattr(args, "append_system_prompt", None),
    }


async def run_prompt(args: argparse.Namespace, console: Console, err: Console) -> int:
    """``coterie run``: the agent on ``args.prompt`` (or ``--loop``); the exit code."""
    if (args.prompt is None) == (args.loop is None):
        err.print("[red]error:[/] give a PROMPT, or --loop SPEC (not both)")
        return 2
    try:
        options = agent_options(args)
        if args.loop is not None:
            spec = parse_loop_spec(args.loop)
            if spec.hint:
                err.print(f"[yellow]hint:[/] {spec.hint}")
    except (CoterieError, ValueError) as exc:
        err.print(f"[red]error:[/] {exc}")
        return 2
    asker = _asker(args, console)
    await workspace_trust(args, console, err)
    prompt, expansion = args.prompt, None
    if prompt is not None:
        try:
            expansion = _expand(args, prompt)
        except (CoterieError, ValueError) as exc:
            err.print(f"[red]error:[/] {escape(str(exc))}", soft_wrap=True)
            return 2
    model = args.model
    if expansion is not None:
        prompt = expansion.prompt
        model = model or expansion.command.model
        options["allowed_tools"] = expansion.command.allowed_tools
        options["allowed_tools_scope"] = expansion.command.scope
    options["model"] = model

    def agent() -> AbstractAsyncContextManager[AgentSession]:
        return open_agent(
            args.workdir,
            asker=asker,
            prompt=prompt,
            loop=args.loop,
            max_ticks=args.max_ticks,
            **options,
        )

    async def ask(session: AgentSession) -> dict[str, Any]:
        if expansion is not None:
            session.events.emit(
                "command.expanded",
                command=expansion.command.name,
                source=expansion.command.source,
                model=expansion.command.model,
            )
        return await _ask(session, prompt)

    if args.loop is not None:
        return await drive(args, console, err, agent, lambda s: _loop(s, args.loop))
    return await drive(args, console, err, agent, ask)


def _expand(args: argparse.Namespace, prompt: str) -> Expansion | None:
    """*prompt* expanded if it is a ``/command`` of the user's or the (trusted)
    workspace's; a :class:`CommandError` for one that names none."""
    if not prompt.lstrip().startswith("/"):
        return None
    workdir = args.workdir.resolve()
    return load_extensions(workdir, trusted=is_trusted(workdir)).expand(prompt)


async def run_team(args: argparse.Namespace, console: Console, err: Console) -> int:
    """``coterie team``: a lead and teammates on ``args.goal``; returns the exit code."""

    try:
        options = agent_options(args)
    except CoterieError as exc:
        err.print(f"[red]error:[/] {exc}")
        return 2
    asker = _asker(args, console)
    await workspace_trust(args, console, err)

    def team() -> AbstractAsyncContextManager[AgentSession]:
        return open_team(
            args.workdir,
            teammates=args.teammates,
            names=args.teammate,
            plan_approval=args.plan_approval,
            asker=asker,
            prompt=args.request,
            **options,
        )

    work = lambda s: _ask(s, args.request)  # noqa: E731
    return await drive(args, console, err, team, work, team=True, asker=asker)


async def resume_run(args: argparse.Namespace, console: Console, err: Console) -> int:
    """``coterie resume RUN_ID [PROMPT]``: finish an interrupted run, or go on with PROMPT."""
    try:
        run_dir = find_run(
            args.workdir.resolve(),
            args.run_id,
            notify=lambda line: err.print(f"[yellow]note:[/] {escape(line)}", soft_wrap=True),
        )
        config = read_config(run_dir, verified=True)
        state = read_state(run_dir)
    except (CoterieError, ValueError) as exc:
        err.print(f"[red]error:[/] {exc}")
        # A run that cannot be resumed (damaged after a kill -9) may still have left
        # tool processes running: they go now, not at some later start (bench/chaos.py).
        if killed := reap_workspace(runs_root(args.workdir.resolve())):
            err.print(f"[yellow]note:[/] killed {killed} process(es) a dead run left running")
        return 2
    command = config.get("command", "run")
    if command not in ("run", "team"):
        err.print(f"[red]error:[/] run {run_dir.name} is a {command!r} run; it cannot be resumed")
        return 2
    if args.prompt is None and state.get("state") in ("completed", "failed"):
        view = _view(args, console, team=command == "team")
        view.start({"run_id": run_dir.name})
        view.finish({**state["result"], "run_id": run_dir.name})
        err.print(f"[dim]run {run_dir.name} had already finished; nothing to resume[/]")
        return 1 if state["result"]["is_error"] else 0

    async def go_on(session: AgentSession) -> dict[str, Any]:
        pending = await session.resume()  # the interrupted request comes first
        if args.prompt is not None:
            return await _ask(session, args.prompt)
        if pending is None:  # killed before the first request was recorded
            if config.get("loop"):
                return await _loop(session, str(config["loop"]))
            return await _ask(session, str(config.get("prompt", "")))
        return (
            _report(session, pending.to_dict())
            if session.board is None
            else await _summary(session, pending.to_dict())
        )

    asker = _asker(args, console)
    await workspace_trust(args, console, err)

    def agent() -> AbstractAsyncContextManager[AgentSession]:
        if command == "team":
            from coterie.session import open_team

            return open_team(args.workdir, asker=asker, resume=run_dir.name)
        return open_agent(args.workdir, asker=asker, resume=run_dir.name)

    return await drive(args, console, err, agent, go_on, team=command == "team", asker=asker)


async def _ask(session: AgentSession, prompt: str) -> dict[str, Any]:
    result = (await session.query(prompt)).to_dict()
    if session.board is None:
        return _report(session, result)
    return await _summary(session, result)


async def _loop(session: AgentSession, spec: str) -> dict[str, Any]:
    return _report(session, (await session.loop(spec)).to_dict())


def _report(session: AgentSession, result: dict[str, Any]) -> dict[str, Any]:
    return {**result, "run_id": session.run_id}


async def _summary(session: AgentSession, result: dict[str, Any]) -> dict[str, Any]:
    from coterie.team import team_summary

    assert session.board is not None
    tasks = await session.board.list()
    return {**team_summary(session.run_dir, result, list(tasks)), "run_id": session.run_id}


async def workspace_trust(args: argparse.Namespace, console: Console, err: Console) -> None:
    """Before a run: at an interactive first run, ask once whether to trust the
    workspace (the answer is recorded). Asked before the run is prepared, so the
    answer applies to this run; what an untrusted workspace's settings lost is
    one of the session's notices."""
    workdir = args.workdir.resolve()
    if _interactive(args) and trust_entry(workdir) is None and can_trust(workdir) is None:
        await _ask_trust(workdir, console, err)


async def _ask_trust(workdir: Path, console: Console, err: Console) -> None:
    console.print(f"[bold yellow]?[/] Do you trust the files in [bold]{escape(str(workdir))}[/]?")
    console.print(
        "  [dim]Trusting it lets its .claude settings widen what coterie may do (allow"
        " rules, defaultMode, additionalDirectories, sandbox, env, model), loads its"
        " .claude agents, skills and commands, and lets coterie run git there; its deny"
        " and ask rules apply either way. `coterie trust --revoke` undoes it.[/]"
    )
    console.print(escape("  trust this folder? [y/N] "), end="")
    answer = await trio.to_thread.run_sync(sys.stdin.readline, abandon_on_cancel=True)
    if not answer:
        return  # end of input is no answer: ask again next time
    try:
        set_trust(workdir, trusted=answer.strip().lower() in ("y", "yes"))
    except TrustStoreError as exc:
        err.print(f"[red]error:[/] {escape(str(exc))}; the folder stays untrusted")


def _interactive(args: argparse.Namespace) -> bool:
    return not args.print and sys.stdin.isatty()


def _asker(args: argparse.Namespace, console: Console) -> TerminalAsker | None:
    return TerminalAsker(console) if _interactive(args) else None


def _hook_notice(err: Console, event: Event) -> None:
    """Show the user what a hook says to them (its ``systemMessage``), and a hook that
    failed or exited with an error, as Claude Code shows them (on stderr, once)."""
    data = event.data
    if event.type == "hook.ran" and data.get("notice"):
        err.print(f"[yellow]hook:[/] {escape(str(data['notice']))}", soft_wrap=True)
    elif event.type == "hook.failed":
        text = f"{data.get('event')} hook {data.get('handler')} failed: {data.get('error')}"
        err.print(f"[yellow]hook:[/] {escape(text)}", soft_wrap=True)


async def drive(
    args: argparse.Namespace,
    console: Console,
    err: Console,
    agent: Callable[[], AbstractAsyncContextManager[AgentSession]],
    work: Callable[[AgentSession], Awaitable[dict[str, Any]]],
    *,
    team: bool = False,
    asker: TerminalAsker | None = None,
) -> int:
    """Open the session, show its events in the chosen view, do *work*; the exit code.

    The session's notices (settings an untrusted folder lost, a sandbox that
    cannot work here, processes a dead run left running and that were killed)
    are printed first, each once.
    """
    view: View | None = None
    started = time.monotonic()
    run_id = ""
    result: dict[str, Any] | None = None
    storage = StorageWatch()
    try:
        async with agent() as session:
            session.events.on_failure(storage.log_failed)
            run_id = session.run_id
            config = session.options
            board = session.board.list if session.board is not None else None
            view = _view(args, console, team=team, board=board)
            if asker is not None:
                asker.pause = getattr(view, "paused", None)
            view.start(
                {
                    "run_id": run_id,
                    "cwd": str(config.workdir),
                    "model": "scripted" if config.scenario else config.model,
                    "permission_mode": session.policy.mode,
                    "teammates": list(config.teammates),
                    "goal": getattr(args, "request", None),
                }
            )
            for notice in session.notices:
                err.print(f"[yellow]note:[/] {escape(notice)}", soft_wrap=True)
            dropped = session.policy.dropped_allow
            if dropped:
                rules = ", ".join(rule.text for rule in dropped)
                err.print(
                    f"[yellow]Auto Mode:[/] allow rules that grant arbitrary execution are set"
                    f" aside (the classifier judges those commands): {rules}"
                )
            with (
                session.events.listen(view.event),
                session.events.listen(storage.event),
                session.events.listen(functools.partial(_hook_notice, err)),
            ):
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(storage.watch)  # a full disk stops the run
                    refresh = getattr(view, "run", None)
                    if refresh is not None:
                        nursery.start_soon(refresh)  # the live view's redraws
                    result = await work(session)
                    nursery.cancel_scope.cancel()
    except* SupervisorGaveUp as group:
        # The Lead kept crashing past its supervisor's restart intensity.
        cause = storage_cause(group)
        if cause is not None:
            storage.fail(describe(cause))
        else:
            reason = str(group.exceptions[0])
            err.print(f"[red]error:[/] the run was stopped: {reason}")
            result = {
                "result": f"The run was stopped after repeated crashes: {reason}",
                "is_error": True,
                "subtype": "error_during_execution",
                "num_turns": 0,
                "usage": Usage().to_dict(),
                "total_cost_usd": 0.0,
                "duration_ms": int((time.monotonic() - started) * 1000),
                "run_id": run_id,
            }
    except* StorageFailed:
        pass  # the reason is in the watch; clean-up errors of the same cause with it
    except* OSError as group:
        failed = [e for e in leaves(group) if isinstance(e, OSError) and is_storage_error(e)]
        if not failed:
            raise
        storage.fail(describe(failed[0]))
    except* USAGE_ERRORS as group:
        cause = storage_cause(group)
        if cause is not None:  # e.g. an agent that could not start on a full disk
            storage.fail(describe(cause))
        else:
            err.print(f"[red]error:[/] {group.exceptions[0]}", soft_wrap=True)
    finally:
        stop = getattr(view, "stop", None)
        if result is None and stop is not None:
            stop()  # a live display must give the terminal back
    if storage.reason:  # before any result: a run stopped so is not finished
        where = f"; `coterie resume {run_id}` goes on once it is fixed" if run_id else ""
        err.print(
            f"[red]error:[/] the run was stopped: {escape(storage.reason)}{where}", soft_wrap=True
        )
        return 1
    if result is None:
        return 2
    if view is None:
        view = _view(args, console, team=team)
    if team and "tasks" in result:
        result["duration_ms"] = int((time.monotonic() - started) * 1000)
    view.finish(result)
    return 1 if result["is_error"] else 0
