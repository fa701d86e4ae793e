"""``coterie run PROMPT``, ``coterie team GOAL`` and ``coterie resume RUN_ID``."""

from __future__ import annotations

import argparse
import shutil
from typing import TYPE_CHECKING, Any

from rich.markup import escape

from coterie.autonomy import parse_loop_spec
from coterie.commands.asking import ask_lead, with_run_id, with_summary
from coterie.commands.conversing import converse, conversing
from coterie.commands.driving import (
    agent_options,
    drive,
    make_asker,
    make_view,
    workspace_trust,
)
from coterie.commands.extending import command_line_extensions
from coterie.commands.stdin import check_input_format, headless_input
from coterie.commands.stopping import interrupt_process
from coterie.errors import CoterieError
from coterie.extensions.commandrun import complete, stopped_result
from coterie.procgroups import reap_workspace
from coterie.runs import find_run, fork_run, list_runs, read_config, read_state, runs_root
from coterie.session import AgentSession, open_agent, open_team
from coterie.tools import load_schema

if TYPE_CHECKING:
    from contextlib import AbstractAsyncContextManager
    from pathlib import Path

    from rich.console import Console

    from coterie.extensions import Expansion
    from coterie.tools.permissions import Asker


async def run_prompt(args: argparse.Namespace, console: Console, err: Console) -> int:
    """``coterie run``: the agent on ``args.prompt`` (or ``--loop``); the exit code.

    At a terminal (:func:`conversing`), ``coterie`` opens a conversation
    (:func:`converse`), as does ``coterie run`` without a PROMPT; ``-c``
    continues the workspace's most recent run. Headless, the prompt may come
    on standard input (:func:`headless_input`)."""
    if args.continue_run:
        return await continue_run(args, console, err)
    if args.resume is not None and conversing(args):  # `coterie --resume ID` at a terminal
        if args.resume_session_at is not None:
            err.print("[red]error:[/] --resume-session-at goes with -p (print mode)")
            return 2
        try:
            found = find_run(args.workdir.resolve(), args.resume)
        except (CoterieError, ValueError) as exc:
            err.print(f"[red]error:[/] {exc}")
            return 2
        return await converse(args, console, err, run_id=found.name, first=args.prompt)
    if args.loop is None and conversing(args) and (args.prompt is None or args.conversation):
        return await converse(args, console, err, run_id=None, first=args.prompt)
    try:
        streamed = check_input_format(args)
        resumed = await _resumed(args)
        given = args.prompt if args.loop is not None else headless_input(args, args.prompt)
    except (CoterieError, ValueError) as exc:
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
        if args.json_schema is not None:  # the text, or a file: the schema itself is recorded
            options["json_schema"] = load_schema(args.json_schema)
        if args.loop is not None:
            spec = parse_loop_spec(args.loop)
            if spec.hint:
                err.print(f"[yellow]hint:[/] {spec.hint}")
    except (CoterieError, ValueError) as exc:
        err.print(f"[red]error:[/] {escape(str(exc))}", soft_wrap=True)
        return 2
    asker: Asker | None = make_asker(args, console)
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

    def agent(asker: Asker | None = asker) -> AbstractAsyncContextManager[AgentSession]:
        return open_agent(
            args.workdir,
            asker=asker,
            on_cancel=interrupt_process,
            prompt=prompt,
            loop=args.loop,
            max_ticks=args.max_ticks,
            **options,
        )

    async def ask(session: AgentSession) -> dict[str, Any]:
        text = prompt
        if expansion is not None:
            session.events.emit(
                "command.expanded",
                command=expansion.command.name,
                source=expansion.command.source,
                model=expansion.command.model,
            )
            done = await complete(expansion, args.workdir.resolve(), session.run_tools)
            if done.stopped is not None:  # shown as the result: no model request made
                return with_run_id(session, stopped_result(done.stopped))
            text = done.prompt
        assert text is not None  # a run without one is a loop or streamed turns
        return await ask_lead(session, text)

    if args.loop is not None:
        return await drive(args, console, err, agent, lambda s: _loop(s, args.loop))
    if streamed:
        from coterie.commands.hosted import run_hosted  # only a host's run needs it

        return await run_hosted(args, console, err, agent, asker, options, resumed)
    return await drive(args, console, err, agent, ask)


async def _resumed(args: argparse.Namespace) -> Path | None:
    """The run ``--resume RUN_ID`` names (a :class:`CoterieError` if there is none);
    with ``--fork-session``, a copy of it under a new id (``--session-id``'s, if
    given), the original left as it was; with ``--resume-session-at``, its
    conversation cut back to just after that reply."""
    if args.resume_drops_turn is not None and args.resume_session_at is None:
        raise CoterieError("--resume-drops-turn checks the cut of --resume-session-at: give both")
    if args.resume is None:
        if args.fork_session:
            raise CoterieError("--fork-session copies the run --resume names: give both")
        if args.resume_session_at is not None:
            raise CoterieError("--resume-session-at cuts back the run --resume names: give both")
        return None
    if args.input_format != "stream-json":
        raise CoterieError(
            f"--resume {args.resume} goes with --input-format stream-json or a terminal;"
            f" for one prompt, `coterie resume {args.resume} PROMPT` continues it"
        )
    from coterie.checkpoints import resume_at  # only a cut-back needs it

    if not args.fork_session:
        found = find_run(args.workdir.resolve(), args.resume)
        if args.resume_session_at is not None:
            await resume_at(found, args.resume_session_at, args.resume_drops_turn)
        return found
    fork = fork_run(args.workdir.resolve(), args.resume, args.session_id)
    if args.resume_session_at is not None:
        try:
            await resume_at(fork, args.resume_session_at, args.resume_drops_turn)
        except BaseException:
            shutil.rmtree(fork, ignore_errors=True)  # no half-made copy left behind
            raise
    return fork


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


def _expand(args: argparse.Namespace, prompt: str) -> Expansion | None:
    """*prompt* expanded if it is a ``/command`` of the user's or the (trusted)
    workspace's; a :class:`CommandError` for one that names none."""
    if not prompt.lstrip().startswith("/"):
        return None
    return command_line_extensions(args).expand(prompt)


async def run_team(args: argparse.Namespace, console: Console, err: Console) -> int:
    """``coterie team``: a lead and teammates on ``args.goal``; returns the exit code.

    With ``--input-format stream-json`` (``coterie --team`` as an Agent SDK host
    spawns it) the goals are the host's prompts, each pursued by the same team."""

    try:
        streamed = check_input_format(args)
        if args.resume is not None and not streamed:
            raise CoterieError(f"a team goes on with `coterie resume {args.resume} [GOAL]`")
        resumed = await _resumed(args)
        if streamed and args.request is not None:
            raise CoterieError("with --input-format stream-json the goals come on standard input")
        request = None if streamed else headless_input(args, args.request) or args.request
        if request is None and not streamed:
            raise CoterieError("no GOAL: give the team's goal as an argument")
        if args.json_schema is not None:
            raise CoterieError(
                "--json-schema is for one agent's run: a team's lead ends with a summary"
            )
        options = agent_options(args)
    except (CoterieError, ValueError) as exc:
        err.print(f"[red]error:[/] {escape(str(exc))}", soft_wrap=True)
        return 2
    asker = make_asker(args, console, team=True)
    await workspace_trust(args, console, err)

    def team(asker: Asker | None = asker) -> AbstractAsyncContextManager[AgentSession]:
        return open_team(
            args.workdir,
            on_cancel=interrupt_process,
            teammates=args.teammates,
            names=args.teammate,
            plan_approval=args.plan_approval,
            lead_turns=args.lead_turns,
            isolation=args.isolation,
            repo=args.repo,
            remote=args.remote,
            remote_grace=args.remote_grace,
            asker=asker,
            prompt=request,
            **options,
        )

    if streamed:
        from coterie.commands.hosted import run_hosted

        return await run_hosted(args, console, err, team, asker, options, resumed, team=True)
    assert request is not None
    work = lambda s: ask_lead(s, request)  # noqa: E731
    return await drive(args, console, err, team, work, team=True, asker=asker)


async def resume_run(args: argparse.Namespace, console: Console, err: Console) -> int:
    """``coterie resume RUN_ID [PROMPT]``: finish an interrupted run, or go on with PROMPT."""
    if args.input_format == "stream-json":
        err.print("[red]error:[/] coterie resume takes no stream-json input")
        return 2
    try:
        run_dir = await _find_or_fetch(args, err)
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
        view = make_view(args, console, team=command == "team")
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
            return await ask_lead(session, args.prompt)
        if pending is None:  # killed before the first request was recorded
            if config.get("loop"):
                return await _loop(session, str(config["loop"]))
            return await ask_lead(session, str(config.get("prompt", "")))
        return (
            with_run_id(session, pending.to_dict())
            if session.board is None
            else await with_summary(session, pending.to_dict())
        )

    asker = make_asker(args, console, team=command == "team")
    await workspace_trust(args, console, err)

    def agent() -> AbstractAsyncContextManager[AgentSession]:
        if command == "team":
            from coterie.session import open_team

            return open_team(
                args.workdir, asker=asker, resume=run_dir.name, on_cancel=interrupt_process
            )
        return open_agent(
            args.workdir, asker=asker, resume=run_dir.name, on_cancel=interrupt_process
        )

    return await drive(args, console, err, agent, go_on, team=command == "team", asker=asker)


async def _find_or_fetch(args: argparse.Namespace, err: Console) -> Path:
    """The run to resume: this home's, else (with a server ``--backend``) the server's,
    brought into this home (resume on any host)."""
    from coterie.backends import Backend
    from coterie.runs import UnknownRun

    def notify(line: str) -> None:
        err.print(f"[yellow]note:[/] {escape(line)}", soft_wrap=True)

    workdir = args.workdir.resolve()
    try:
        return find_run(workdir, args.run_id, notify=notify)
    except UnknownRun:
        backend = Backend.parse(args.backend)
        run_dir = await backend.fetch(workdir, args.run_id)
        if run_dir is None:
            raise
    notify(f"run {run_dir.name} was fetched from {backend.name}; it goes on in {workdir}")
    return run_dir


async def _loop(session: AgentSession, spec: str) -> dict[str, Any]:
    return with_run_id(session, (await session.loop(spec)).to_dict())
