"""A run driven by a program over stdin and stdout (``--input-format stream-json``).

Split from :mod:`.run` so that a run with a prompt of its own never imports
the control protocol's side (:mod:`.hostmode`, :mod:`.hostasker`): each of the
host's prompts is a request of the run, its control requests are answered, and
its ``/clear`` opens a new run.
"""

from __future__ import annotations

import contextlib
import functools
import json
from typing import TYPE_CHECKING, Any

from coterie.commands.driving import drive
from coterie.commands.hostasker import HostAsker
from coterie.commands.hostmode import HostPrompts, HostSetup, SessionSlot, open_host, style_offer
from coterie.commands.stopping import interrupt_process
from coterie.session import open_agent, open_team

if TYPE_CHECKING:
    import argparse
    from collections.abc import AsyncIterator, Callable
    from contextlib import AbstractAsyncContextManager
    from pathlib import Path

    from rich.console import Console

    from coterie.session import AgentSession
    from coterie.tools import Asker

__all__ = ["run_hosted"]


async def run_hosted(
    args: argparse.Namespace,
    console: Console,
    err: Console,
    opener: Callable[[Asker | None], AbstractAsyncContextManager[AgentSession]],
    asker: Asker | None,
    options: dict[str, Any],
    resumed: Path | None,
    *,
    team: bool = False,
) -> int:
    """The run driven by the program on standard input (``--input-format
    stream-json``): each of its prompts a request of the run opened by *opener*
    (or the run *resumed*), its control requests answered (:mod:`.hostmode`).
    Each ``/clear`` of the host closes the run and opens a new one by *opener*
    for the prompts after it; the exit code is the worst of the runs'."""
    # The answer to initialize reads the settings as the run will (--settings too).
    offer = functools.partial(style_offer, args.workdir, args.settings, args.setting_sources)
    slot, setup = SessionSlot(), HostSetup(offer=offer, replay=args.replay_user_messages)

    @contextlib.asynccontextmanager
    async def hosted() -> AsyncIterator[AgentSession]:
        if resumed is None:
            opened = opener(asker)
        else:
            reopen = open_team if team else open_agent
            opened = reopen(args.workdir, asker=asker, resume=resumed.name,
                            on_cancel=interrupt_process, hooks=options["hooks"],
                            mcp_host=options["mcp_host"])  # fmt: skip
        async with opened as session:
            if resumed is not None:
                # The request it was on when its host was lost is finished first
                # (an interrupted tool reported, never run again); its result is
                # in the run, not on this host's stream.
                await session.resume()
            slot.fill(session)  # the host's interrupt acts on it
            try:
                yield session
            finally:
                slot.vacate()

    async with open_host(err, slot, setup) as link:
        if args.permission_prompt_tool == "stdio":
            asker = HostAsker(link)  # the host's can_use_tool answers every agent
        options["hooks"] = setup.matchers(link)  # its hook_callback ones
        options["mcp_host"] = link  # it serves its sdk MCP servers (mcp_message)
        if setup.system_prompt is not None:  # as --system-prompt (the TypeScript SDK's)
            options["system_prompt"] = setup.system_prompt
        if setup.append_system_prompt is not None:
            options["append_system_prompt"] = setup.append_system_prompt
        if setup.agents:  # its subagents, over --agents' of the same name
            given = options.get("agents")
            with contextlib.suppress(json.JSONDecodeError):  # a bad --agents is said later
                known = json.loads(given) if given else {}
                if isinstance(known, dict):
                    options["agents"] = json.dumps({**known, **setup.agents})
        prompts, code, cleared = HostPrompts(link, err, replay=setup.replay), 0, None
        while True:
            turns = prompts.until_clear()
            try:
                code = max(code, await drive(
                    args, console, err, hosted, None, turns=turns, cleared=cleared,
                    next_model=lambda: slot.model, team=team, notices=cleared is None,
                    subagent_text=setup.forward_subagent_text,
                ))  # fmt: skip
            finally:
                await turns.aclose()
            cleared = prompts.cleared
            if cleared is None:
                return code
            # The host's /clear: the prompts after it go to a new run (a new id).
            resumed = None
            options.pop("run_id", None)  # a --session-id named the first run only
