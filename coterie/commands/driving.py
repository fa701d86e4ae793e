"""Driving a session from the command line: the options that go to it, how its
progress is shown, the questions asked at the terminal (trust, permission),
and :func:`drive`, which opens the session, shows its events and does the work."""

from __future__ import annotations

import contextlib
import functools
import sys
import time
from typing import TYPE_CHECKING, Any

import trio
from rich.markup import escape

from coterie.backends.choice import Backend
from coterie.commands.asking import ask_lead, each_turn
from coterie.commands.options import thinking_options, unhonoured_notices
from coterie.commands.stopping import (
    StorageFailed,
    StorageWatch,
    describe,
    is_storage_error,
    leaves,
    storage_cause,
)
from coterie.errors import CoterieError, SupervisorGaveUp
from coterie.interactive.approval import ask_about_new_items
from coterie.models import ModelError, Usage
from coterie.projectconfig import project_items
from coterie.runs import chosen_run_id
from coterie.tools import (
    ListError,
    RuleError,
    SettingsError,
    parse_rule,
    split_list,
    tool_choice,
)
from coterie.trust import TrustStoreError, can_trust, set_trust, trust_entry
from coterie.ui import ConsoleView, JsonView, StreamJsonView, TerminalAsker, TextView, View
from coterie.ui.lineinput import read_line
from coterie.ui.views import retry_line

if TYPE_CHECKING:
    import argparse
    from collections.abc import AsyncIterator, Awaitable, Callable
    from contextlib import AbstractAsyncContextManager
    from pathlib import Path

    from rich.console import Console

    from coterie.commands.streaminput import HostTurn
    from coterie.events import Event
    from coterie.session import AgentSession
    from coterie.ui.region import LiveRegion


#: What can go wrong before a run starts: no credentials, a malformed scenario
#: or settings file, a bad mode, an unknown or busy run.
USAGE_ERRORS = (ModelError, SettingsError, RuleError, CoterieError, ValueError)


def make_view(
    args: argparse.Namespace,
    console: Console,
    *,
    team: bool = False,
    board: Any = None,
    region: LiveRegion | None = None,
    subagent_text: bool = False,
) -> View:
    """The output of a run: a headless format with ``-p``, else the team's live view
    (the supervision tree and the board, read with *board*, in the live *region* a
    permission prompt pauses) or the agent's console. *subagent_text*: a subagent's
    text is on the ``stream-json`` stream too (a host's ``forwardSubagentText``)."""
    if args.print:
        if args.output_format == "text":
            return TextView(verbose=args.verbose)
        formats = {"json": JsonView, "stream-json": StreamJsonView}
        # ``coterie resume`` has the output formats without the host's flags.
        return formats[args.output_format](
            verbose=args.verbose,
            include_partial_messages=getattr(args, "include_partial_messages", False),
            include_hook_events=getattr(args, "include_hook_events", False),
            subagent_text=subagent_text,
        )
    if team:
        from coterie.ui.live import TeamView

        return TeamView(console, board, region=region)
    return ConsoleView(console)


def agent_options(args: argparse.Namespace) -> dict[str, Any]:
    """The options of ``run`` and ``team`` that go to the session, from the command line."""
    if args.auto and args.permission_mode not in (None, "auto"):
        raise CoterieError(f"--auto conflicts with --permission-mode {args.permission_mode}")
    if args.session_id is not None:
        if getattr(args, "resume", None) is not None and not args.fork_session:
            raise CoterieError(
                "--session-id names a new run; a resumed run keeps its own id (with"
                " --fork-session, the copy of it gets this one)"
            )
        chosen_run_id(args.session_id)  # ValueError: not a UUID
    allowed = _rules("--allowedTools", args.allowed_tools)
    disallowed = _rules("--disallowedTools", args.disallowed_tools)
    tools = args.tools
    try:
        chosen = None if tools is None else split_list(tools)
    except ListError as exc:
        raise CoterieError(f"--tools: {exc}") from None
    tool_choice(chosen)  # an unknown name is a usage error now
    return {
        "allowed_rules": allowed,
        "disallowed_rules": disallowed,
        "tools": chosen,
        "settings": args.settings,
        "setting_sources": args.setting_sources,
        "fallback_model": args.fallback_model,
        "model": args.model,
        "scenario": args.scenario,
        "permission_mode": "auto" if args.auto else args.permission_mode,
        "allow_bypass": args.allow_dangerously_skip_permissions,
        "goal": args.goal,
        "max_goal_iterations": args.max_goal_iterations,
        "add_dirs": args.add_dir,
        "mcp_configs": args.mcp_config,
        "strict_mcp_config": args.strict_mcp_config,
        "max_turns": args.max_turns,
        "max_budget_usd": args.max_budget_usd,
        "context_window": args.context_window,
        "compact_at": args.compact_at,
        "agents": args.agents,
        "plugin_dirs": args.plugin_dir,
        "run_id": args.session_id,  # the new run's id, if the caller chose one
        "system_prompt": _system_prompt(args),
        "append_system_prompt": args.append_system_prompt,
        "backend": Backend.parse(args.backend).recorded,
        **thinking_options(args),
    }


def _system_prompt(args: argparse.Namespace) -> str | None:
    """``--system-prompt TEXT`` or ``--system-prompt-file FILE`` (its text), not both."""
    if args.system_prompt is not None and args.system_prompt_file is not None:
        raise CoterieError("--system-prompt and --system-prompt-file: give one or the other")
    chosen: str | None = (
        args.system_prompt if args.system_prompt_file is None else args.system_prompt_file
    )
    return chosen


def _rules(flag: str, values: list[str]) -> list[str]:
    """The rules of a ``--allowedTools``-style flag, each checked (a malformed one
    is a :class:`RuleError` naming the flag)."""
    try:
        rules = [rule for value in values for rule in split_list(value)]
        for rule in rules:
            parse_rule(rule)
    except (RuleError, ListError) as exc:
        raise RuleError(f"{flag}: {exc}") from None
    return rules


async def workspace_trust(args: argparse.Namespace, console: Console, err: Console) -> None:
    """Before a run: at an interactive first run, ask once whether to trust the
    workspace (the answer is recorded), then about each piece of its configuration
    that is new or changed since it was trusted. Asked before the run is prepared, so the
    answer applies to this run; what an untrusted workspace's settings lost is
    one of the session's notices."""
    workdir = args.workdir.resolve()
    if not is_interactive(args):
        return
    if trust_entry(workdir) is None and can_trust(workdir) is None:
        await _ask_trust(workdir, console, err)
    # Configuration added or changed since the folder was trusted: asked once each.
    await ask_about_new_items(workdir, console, err)


async def _ask_trust(workdir: Path, console: Console, err: Console) -> None:
    console.print(f"[bold yellow]?[/] Do you trust the files in [bold]{escape(str(workdir))}[/]?")
    console.print(
        "  [dim]Trusting it lets its .claude settings widen what coterie may do (allow"
        " rules, defaultMode, additionalDirectories, sandbox, env, model), loads its"
        " .claude agents, skills and commands, and lets coterie run git there; its deny"
        " and ask rules apply either way. `coterie trust --revoke` undoes it.[/]"
    )
    console.print(escape("  trust this folder? [y/N] "), end="")
    answer = await read_line(sys.stdin.fileno())  # no thread left to take a later line
    if answer is None:
        return  # end of input is no answer: ask again next time
    try:
        yes = answer.strip().lower() in ("y", "yes")
        set_trust(workdir, trusted=yes, items=project_items(workdir) if yes else None)
    except TrustStoreError as exc:
        err.print(f"[red]error:[/] {escape(str(exc))}; the folder stays untrusted")


def is_interactive(args: argparse.Namespace) -> bool:
    return not args.print and sys.stdin.isatty()


def make_asker(
    args: argparse.Namespace, console: Console, *, team: bool = False
) -> TerminalAsker | None:
    if not is_interactive(args):
        return None
    return TerminalAsker(console, project=args.workdir.resolve(), team=team)


def _hook_notice(err: Console, event: Event) -> None:
    """Show the user what a hook says to them (its ``systemMessage``), and a hook that
    failed or exited with an error, as Claude Code shows them (on stderr, once)."""
    data = event.data
    if event.type == "hook.ran" and data.get("notice"):
        err.print(f"[yellow]hook:[/] {escape(str(data['notice']))}", soft_wrap=True)
    elif event.type == "hook.failed":
        text = f"{data.get('event')} hook {data.get('handler')} failed: {data.get('error')}"
        err.print(f"[yellow]hook:[/] {escape(text)}", soft_wrap=True)


def _retry_notice(err: Console, event: Event) -> None:
    """A model call failed and is tried again, or ``--fallback-model`` took over: one
    line on stderr in the headless text and json formats, so a slow ``-p`` never
    looks hung and its stdout stays the answer alone (the console view and
    stream-json show them themselves). A teammate's or subagent's line names it."""
    if event.type != "model.retrying":
        return
    actor = str(event.data.get("actor") or "lead")
    who = "" if actor == "lead" else f"{actor}: "
    err.print(f"[yellow]note:[/] {escape(who + retry_line(event.data))}", soft_wrap=True)


async def drive(
    args: argparse.Namespace,
    console: Console,
    err: Console,
    agent: Callable[[], AbstractAsyncContextManager[AgentSession]],
    work: Callable[[AgentSession], Awaitable[dict[str, Any]]] | None,
    *,
    team: bool = False,
    asker: TerminalAsker | None = None,
    show_result: bool = True,
    turns: AsyncIterator[HostTurn] | None = None,
    cleared: HostTurn | None = None,
    next_model: Callable[[], str | None] | None = None,
    notices: bool = True,
    subagent_text: bool = False,
) -> int:
    """Open the session, show its events in the chosen view, do *work*; the exit code
    (*show_result* False: *work* showed its results, as a conversation does).

    With *turns* (``--input-format stream-json``), each prompt it yields is a
    request of its own instead, each result shown as it comes, with the model
    *next_model* names (a host's ``set_model``; None: the run's), until a
    ``/clear`` (:func:`~coterie.commands.asking.each_turn`); *cleared*: this run
    is the new conversation that ``/clear`` opened, whose result it shows first.
    *subagent_text* goes to the view (:func:`make_view`).

    The session's notices (settings an untrusted folder lost, a sandbox that
    cannot work here, processes a dead run left running and that were killed)
    are printed first, each once (*notices* False: an earlier run of this
    process printed them).
    """
    view: View | None = None
    started = time.monotonic()
    run_id = ""
    result: dict[str, Any] | None = None
    storage = StorageWatch()
    # The view hears the run to its very end: the actors and supervisors stopping.
    to_the_end = contextlib.ExitStack()
    try:
        async with agent() as session:
            session.events.on_failure(storage.log_failed)
            run_id = session.run_id
            config = session.options
            board = session.board.list if session.board is not None else None
            region = asker.region if asker is not None else None
            view = make_view(
                args, console, team=team, board=board, region=region, subagent_text=subagent_text
            )
            view.start(
                {
                    "run_id": run_id,
                    "cwd": str(config.workdir),
                    "model": "scripted" if config.scenario else config.model,
                    "permission_mode": session.policy.mode,
                    "teammates": list(config.teammates),
                    "goal": getattr(args, "request", None),
                    **session.info,
                }
            )
            for notice in (*session.notices, *unhonoured_notices(args)) if notices else ():
                err.print(f"[yellow]note:[/] {escape(notice)}", soft_wrap=True)
            dropped = session.policy.dropped_allow
            if dropped:
                rules = ", ".join(rule.text for rule in dropped)
                err.print(
                    f"[yellow]Auto Mode:[/] allow rules that grant arbitrary execution are set"
                    f" aside (the classifier judges those commands): {rules}"
                )
            catch_up = getattr(view, "catch_up", None)
            if catch_up is not None:
                catch_up(session.events.history)  # the tree started before the view
            to_the_end.enter_context(session.events.listen(view.event))
            with (
                session.events.listen(storage.event),
                session.events.listen(functools.partial(_hook_notice, err)),
                contextlib.ExitStack() as notes,
            ):
                if args.print and args.output_format != "stream-json":
                    notes.enter_context(
                        session.events.listen(functools.partial(_retry_notice, err))
                    )
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(storage.watch)  # a full disk stops the run
                    refresh = getattr(view, "run", None)
                    if refresh is not None:
                        nursery.start_soon(refresh)  # the live view's redraws
                    if turns is None:
                        assert work is not None  # only turns come without work
                        result = await work(session)
                        if show_result:
                            result = await _woken(session, view, args, result)
                    else:
                        result = await each_turn(session, view, turns, err, next_model, cleared)
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
            first = next((e for e in leaves(group) if isinstance(e, USAGE_ERRORS)), group)
            err.print(f"[red]error:[/] {escape(str(first))}", soft_wrap=True)
    finally:
        to_the_end.close()
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
        view = make_view(args, console, team=team, subagent_text=subagent_text)
    if team and "tasks" in result:
        result["duration_ms"] = int((time.monotonic() - started) * 1000)
    if show_result and turns is None:
        view.finish(result)
    return 1 if result["is_error"] else 0


async def _woken(
    session: AgentSession, view: View, args: argparse.Namespace, result: dict[str, Any]
) -> dict[str, Any]:
    """What a headless run does before it exits while the lead's background commands
    run, as ``claude -p`` does: wait for them, and give the lead a turn on each
    notice (a command finished, a Monitor's lines); the last turn's result is the
    run's. With stream-json each earlier turn's ``result`` line is printed too."""
    shells = session.background
    if shells is None:
        return result
    while (notice := await shells.next_wakeup("lead")) is not None:
        if args.output_format == "stream-json":
            view.finish(result)
        result = await ask_lead(session, notice)
    return result
