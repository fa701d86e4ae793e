"""``coterie`` at a terminal: the conversation (:mod:`coterie.interactive`) over
a run, and the runs ``/clear`` and ``/resume`` switch to."""

from __future__ import annotations

import functools
import sys
from typing import TYPE_CHECKING, Any

from rich.markup import escape

from coterie.commands.driving import agent_options, drive, workspace_trust
from coterie.commands.extending import command_line_extensions
from coterie.commands.stopping import interrupt_process
from coterie.errors import CoterieError
from coterie.session import AgentSession, open_agent
from coterie.tools.permissions.settings import SOURCES, SettingsError, load_settings
from coterie.trust import run_approval
from coterie.ui import TerminalAsker

if TYPE_CHECKING:
    import argparse
    from contextlib import AbstractAsyncContextManager
    from pathlib import Path

    from rich.console import Console


def conversing(args: argparse.Namespace) -> bool:
    """Whether this command is a conversation: not ``-p``, and a person at a terminal
    (standard input and output both terminals)."""
    return not args.print and sys.stdin.isatty() and sys.stdout.isatty()


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
        extensions = command_line_extensions(args)
    except (CoterieError, ValueError) as exc:
        err.print(f"[red]error:[/] {escape(str(exc))}", soft_wrap=True)
        return 2
    try:  # a settings file that cannot be read is the run's error, told as it starts
        sources = getattr(args, "setting_sources", None)
        status_line = load_settings(
            workdir,
            sources=SOURCES if sources is None else sources,
            approved=run_approval(workdir, sources),
        ).status_line
    except SettingsError:
        status_line = None
    conversation = Conversation(
        LineEditor(history_path(workdir)), console, err, extensions, status_line=status_line
    )
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
        return open_agent(
            workdir, asker=asker, on_cancel=interrupt_process, **options, conversation=True
        )
    return open_agent(workdir, asker=asker, resume=run_id, on_cancel=interrupt_process)
