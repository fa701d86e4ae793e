"""``coterie run PROMPT``, ``coterie team GOAL`` and ``coterie resume RUN_ID``."""

from __future__ import annotations

import argparse
import contextlib
import functools
import select
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
from coterie.commands.streaminput import parse_turn
from coterie.errors import CoterieError, SupervisorGaveUp
from coterie.extensions import load_extensions
from coterie.models import ModelError, Usage
from coterie.procgroups import reap_workspace
from coterie.runs import find_run, list_runs, read_config, read_state, runs_root
from coterie.session import AgentSession, open_agent, open_team
from coterie.tools import (
    ListError,
    RuleError,
    SettingsError,
    parse_rule,
    split_list,
    tool_choice,
)
from coterie.trust import TrustStoreError, can_trust, is_trusted, set_trust, trust_entry
from coterie.ui import ConsoleView, JsonView, StreamJsonView, TerminalAsker, TextView, View
from coterie.ui.lineinput import read_line
from coterie.ui.views import retry_line

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Awaitable, Callable
    from contextlib import AbstractAsyncContextManager
    from pathlib import Path

    from rich.console import Console

    from coterie.events import Event
    from coterie.extensions import Expansion
    from coterie.ui.region import LiveRegion


#: What can go wrong before a run starts: no credentials, a malformed scenario
#: or settings file, a bad mode, an unknown or busy run.
USAGE_ERRORS = (ModelError, SettingsError, RuleError, CoterieError, ValueError)


def _view(
    args: argparse.Namespace,
    console: Console,
    *,
    team: bool = False,
    board: Any = None,
    region: LiveRegion | None = None,
) -> View:
    """The output of a run: a headless format with ``-p``, else the team's live view
    (the supervision tree and the board, read with *board*, in the live *region* a
    permission prompt pauses) or the agent's console."""
    if args.print:
        formats = {"text": TextView, "json": JsonView, "stream-json": StreamJsonView}
        return formats[args.output_format](verbose=getattr(args, "verbose", False))
    if team:
        from coterie.ui.live import TeamView

        return TeamView(console, board, region=region)
    return ConsoleView(console)


def agent_options(args: argparse.Namespace) -> dict[str, Any]:
    """The options of ``run`` and ``team`` that go to the session, from the command line."""
    if args.auto and args.permission_mode not in (None, "auto"):
        raise CoterieError(f"--auto conflicts with --permission-mode {args.permission_mode}")
    allowed = _rules("--allowedTools", getattr(args, "allowed_tools", []))
    disallowed = _rules("--disallowedTools", getattr(args, "disallowed_tools", []))
    tools = getattr(args, "tools", None)
    try:
        chosen = None if tools is None else split_list(tools)
    except ListError as exc:
        raise CoterieError(f"--tools: {exc}") from None
    tool_choice(chosen)  # an unknown name is a usage error now
    return {
        "allowed_rules": allowed,
        "disallowed_rules": disallowed,
        "tools": chosen,
        "settings": getattr(args, "settings", None),
        "setting_sources": getattr(args, "setting_sources", None),
        "fallback_model": getattr(args, "fallback_model", None),
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


#: Seconds a ``-p`` run with a prompt waits for piped input to begin.
STDIN_WAIT = 3.0


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


def headless_input(args: argparse.Namespace, prompt: str | None) -> str | None:
    """The prompt of a ``-p`` run, with standard input when it is not a terminal, as
    Claude Code takes it: the input alone (``echo q | coterie run -p``), or appended
    to the prompt (``cat f | coterie run -p "explain"``). Input that is empty or
    only blank adds nothing, and so does input that has not begun within
    :data:`STDIN_WAIT` seconds when there is a prompt (as Claude Code does).
    With ``--input-format stream-json`` the input is the turns themselves, read
    later."""
    if not args.print or getattr(args, "input_format", "text") == "stream-json":
        return prompt
    if sys.stdin.isatty():
        return prompt
    if prompt is not None and not select.select([sys.stdin], [], [], STDIN_WAIT)[0]:
        # A pipe nobody writes to (a CI runner's, a parent process's) must not hold
        # the run forever: with a prompt already, input that does not come is none.
        return prompt
    piped = sys.stdin.read()
    if not piped.strip():
        return prompt
    return piped if prompt is None else f"{prompt}\n\n{piped}"


async def run_prompt(args: argparse.Namespace, console: Console, err: Console) -> int:
    """``coterie run``: the agent on ``args.prompt`` (or ``--loop``); the exit code.

    At a terminal (:func:`conversing`), ``coterie`` opens a conversation
    (:func:`converse`), as does ``coterie run`` without a PROMPT; ``-c``
    continues the workspace's most recent run. Headless, the prompt may come
    on standard input (:func:`headless_input`)."""
    if args.continue_run:
        return await continue_run(args, console, err)
    if args.loop is None and conversing(args) and (args.prompt is None or args.conversation):
        return await converse(args, console, err, run_id=None, first=args.prompt)
    try:
        streamed = check_input_format(args)
        given = args.prompt if args.loop is not None else headless_input(args, args.prompt)
    except CoterieError as exc:
        err.print(f"[red]error:[/] {exc}")
        return 2
    if args.loop is not None and (given is not None or streamed):
        err.print("[red]error:[/] --loop SPEC takes no PROMPT (give one or the other)")
        return 2
    if given is None and args.loop is None and not streamed:
        err.print(
            "[red]error:[/] no prompt: give a PROMPT (an argument, or on standard input"
            " with -p), or run coterie at a terminal for a conversation",
            soft_wrap=True,
        )
        return 2
    try:
        options = agent_options(args)
        if args.loop is not None:
            spec = parse_loop_spec(args.loop)
            if spec.hint:
                err.print(f"[yellow]hint:[/] {spec.hint}")
    except (CoterieError, ValueError) as exc:
        err.print(f"[red]error:[/] {escape(str(exc))}", soft_wrap=True)
        return 2
    asker = _asker(args, console)
    await workspace_trust(args, console, err)
    prompt, expansion = given, None
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
        assert prompt is not None  # a run without one is a loop or streamed turns
        return await _ask(session, prompt)

    if args.loop is not None:
        return await drive(args, console, err, agent, lambda s: _loop(s, args.loop))
    if streamed:
        return await drive(args, console, err, agent, ask, turns=_stdin_turns())
    return await drive(args, console, err, agent, ask)


def conversing(args: argparse.Namespace) -> bool:
    """Whether this command is a conversation: not ``-p``, and a person at a terminal
    (standard input and output both terminals)."""
    return not args.print and sys.stdin.isatty() and sys.stdout.isatty()


async def continue_run(args: argparse.Namespace, console: Console, err: Console) -> int:
    """``coterie -c [PROMPT]``: ``coterie resume`` on the workspace's most recent run
    (the one whose state changed last; ids order runs by their start only)."""
    runs = [info for info in list_runs(args.workdir.resolve()) if info.command == "run"]
    if not runs:
        err.print("[red]error:[/] no run to continue in this workspace")
        return 2
    last = max(runs, key=lambda info: info.updated_at or 0.0)
    return await resume_run(
        argparse.Namespace(**{**vars(args), "run_id": last.run_id}), console, err
    )


async def converse(
    args: argparse.Namespace,
    console: Console,
    err: Console,
    *,
    run_id: str | None,
    first: str | None,
) -> int:
    """A conversation at the terminal (:mod:`coterie.interactive`), over run *run_id*
    (None: a new run) and the runs ``/clear`` and ``/resume`` switch to."""
    from coterie.interactive import Conversation, history_path
    from coterie.interactive.editor import LineEditor

    try:
        options = agent_options(args) if hasattr(args, "auto") else {}
        if hasattr(args, "max_ticks"):  # the cap of a /loop
            options["max_ticks"] = args.max_ticks
    except CoterieError as exc:
        err.print(f"[red]error:[/] {exc}")
        return 2
    workdir = args.workdir.resolve()
    asker = TerminalAsker(console, project=workdir)
    await workspace_trust(args, console, err)
    try:
        extensions = load_extensions(workdir, trusted=is_trusted(workdir))
    except (CoterieError, ValueError) as exc:
        err.print(f"[red]error:[/] {escape(str(exc))}", soft_wrap=True)
        return 2
    conversation = Conversation(LineEditor(history_path(workdir)), console, err, extensions)
    while True:
        agent = functools.partial(_open_conversation, args.workdir, asker, options, run_id)
        serve = functools.partial(conversation.serve, first=first)
        code = await drive(args, console, err, agent, serve, asker=asker, show_result=False)
        first = None
        if conversation.switch is None:
            return code
        run_id = conversation.switch or None


def _open_conversation(
    workdir: Path,
    asker: TerminalAsker,
    options: dict[str, Any],
    run_id: str | None,
) -> AbstractAsyncContextManager[AgentSession]:
    if run_id is None:
        return open_agent(workdir, asker=asker, **options, conversation=True)
    return open_agent(workdir, asker=asker, resume=run_id)


def check_input_format(args: argparse.Namespace) -> bool:
    """Whether the turns come from standard input (``--input-format stream-json``,
    which, as in Claude Code, needs ``-p --output-format stream-json``)."""
    if args.input_format != "stream-json":
        return False
    if not args.print or args.output_format != "stream-json":
        raise CoterieError("--input-format stream-json needs -p and --output-format stream-json")
    if getattr(args, "prompt", None) is not None:
        raise CoterieError("--input-format stream-json takes the prompts from standard input only")
    return True


async def _stdin_turns() -> AsyncIterator[str]:
    """The prompts of ``--input-format stream-json`` input, one per line, as they come."""
    number = 0
    while True:
        line = await trio.to_thread.run_sync(sys.stdin.readline, abandon_on_cancel=True)
        if not line:
            return
        number += 1
        prompt = parse_turn(line, number)
        if prompt is not None:
            yield prompt


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
        if getattr(args, "input_format", "text") == "stream-json":  # demos build their own args
            raise CoterieError("coterie team takes its GOAL as an argument, not stream-json input")
        request = headless_input(args, args.request) or args.request
        options = agent_options(args)
    except (CoterieError, ValueError) as exc:
        err.print(f"[red]error:[/] {escape(str(exc))}", soft_wrap=True)
        return 2
    asker = _asker(args, console, team=True)
    await workspace_trust(args, console, err)

    def team() -> AbstractAsyncContextManager[AgentSession]:
        return open_team(
            args.workdir,
            teammates=args.teammates,
            names=args.teammate,
            plan_approval=args.plan_approval,
            lead_turns=args.lead_turns,
            asker=asker,
            prompt=request,
            **options,
        )

    work = lambda s: _ask(s, request)  # noqa: E731
    return await drive(args, console, err, team, work, team=True, asker=asker)


async def resume_run(args: argparse.Namespace, console: Console, err: Console) -> int:
    """``coterie resume RUN_ID [PROMPT]``: finish an interrupted run, or go on with PROMPT."""
    if args.input_format == "stream-json":
        err.print("[red]error:[/] coterie resume takes no stream-json input")
        return 2
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
    if args.prompt is None and command == "run" and conversing(args):
        return await converse(args, console, err, run_id=run_dir.name, first=None)
    if args.prompt is None and state.get("state") in ("completed", "failed"):
        view = _view(args, console, team=command == "team")
        view.start(
            {
                "run_id": run_dir.name,
                "model": "scripted" if config.get("scenario") else config.get("model"),
                "permission_mode": config.get("permission_mode") or "default",
            }
        )
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

    asker = _asker(args, console, team=command == "team")
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
    answer = await read_line(sys.stdin.fileno())  # no thread left to take a later line
    if answer is None:
        return  # end of input is no answer: ask again next time
    try:
        set_trust(workdir, trusted=answer.strip().lower() in ("y", "yes"))
    except TrustStoreError as exc:
        err.print(f"[red]error:[/] {escape(str(exc))}; the folder stays untrusted")


def _interactive(args: argparse.Namespace) -> bool:
    return not args.print and sys.stdin.isatty()


def _asker(
    args: argparse.Namespace, console: Console, *, team: bool = False
) -> TerminalAsker | None:
    if not _interactive(args):
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


def _fallback_notice(err: Console, event: Event) -> None:
    """``--fallback-model`` took over: said on stderr in the headless text and json
    formats (the console view and stream-json show it themselves)."""
    if event.type == "model.retrying" and event.data.get("fallback_model"):
        err.print(f"[yellow]note:[/] {escape(retry_line(event.data))}", soft_wrap=True)


async def drive(
    args: argparse.Namespace,
    console: Console,
    err: Console,
    agent: Callable[[], AbstractAsyncContextManager[AgentSession]],
    work: Callable[[AgentSession], Awaitable[dict[str, Any]]],
    *,
    team: bool = False,
    asker: TerminalAsker | None = None,
    show_result: bool = True,
    turns: AsyncIterator[str] | None = None,
) -> int:
    """Open the session, show its events in the chosen view, do *work*; the exit code
    (*show_result* False: *work* showed its results, as a conversation does).

    With *turns* (``--input-format stream-json``), each prompt it yields is a
    request of its own instead, each result shown as it comes.

    The session's notices (settings an untrusted folder lost, a sandbox that
    cannot work here, processes a dead run left running and that were killed)
    are printed first, each once.
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
            view = _view(args, console, team=team, board=board, region=region)
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
            for notice in session.notices:
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
                        session.events.listen(functools.partial(_fallback_notice, err))
                    )
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(storage.watch)  # a full disk stops the run
                    refresh = getattr(view, "run", None)
                    if refresh is not None:
                        nursery.start_soon(refresh)  # the live view's redraws
                    if turns is None:
                        result = await work(session)
                    else:
                        result = await _each_turn(session, view, turns, err)
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
        view = _view(args, console, team=team)
    if team and "tasks" in result:
        result["duration_ms"] = int((time.monotonic() - started) * 1000)
    if show_result and turns is None:
        view.finish(result)
    return 1 if result["is_error"] else 0


async def _each_turn(
    session: AgentSession, view: View, turns: AsyncIterator[str], err: Console
) -> dict[str, Any] | None:
    """Every prompt of *turns* asked in order, each result shown; the last result
    (an error one if a turn failed), or None when there was no turn."""
    last: dict[str, Any] | None = None
    failed = False
    async for prompt in turns:
        last = await _ask(session, prompt)
        failed = failed or bool(last["is_error"])
        view.finish(last)
    if last is None:
        err.print("[red]error:[/] no user message on standard input")
    return None if last is None else {**last, "is_error": failed}
