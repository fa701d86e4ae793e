"""``--input-format stream-json``: a host program drives the run over stdin and stdout.

A program built on the Claude Agent SDK spawns the CLI with ``--input-format
stream-json --output-format stream-json`` and speaks Claude Code's control
protocol with it (:mod:`coterie.hostlink`): it sends ``initialize`` first,
then ``user`` lines, each a prompt, and control requests whenever it likes.
:func:`open_host` serves the host for the length of a run: its lines are
read on a thread (standard input blocks), each control request answered by
its handler (here, or its family's module: :mod:`.hostmcp` for the MCP
servers), and :class:`HostPrompts` yields the turns in order. The run asks
the host through the same link: ``can_use_tool``, ``hook_callback``, and
``mcp_message`` for the MCP servers that live in the host
(:mod:`coterie.mcpclient.hosted`). The
host's end of input ends the run after the last prompt's result.

A ``/clear`` from the host starts the conversation over, as in Claude Code: the
run it ends is closed as any run is (its results recorded, resumable), and the
prompts after it go to a new run of the same process (the new ``session_id``);
:class:`HostPrompts` stops at it, :class:`SessionSlot` is emptied in between,
so a request that comes then waits for the new run.

Both the run's view and the control channel write whole lines to standard
output from the Trio thread, so their lines never interleave.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs
import trio
from rich.markup import escape

from coterie.agent.outputstyles import DEFAULT_STYLE
from coterie.commands.auth import account
from coterie.commands.hostcontrol import control_handlers
from coterie.commands.hostmcp import mcp_handlers
from coterie.commands.streaminput import HostTurn, InputError, read_turn
from coterie.errors import CoterieError
from coterie.extensions import load_extensions
from coterie.home import claude_dir
from coterie.hooks import EVENTS, HookCallback, HookMatcher
from coterie.hooks.config import DEFAULT_TIMEOUT
from coterie.hostlink import FrameError, Handler, HostLink, Request, RequestRefused, parse_line
from coterie.models.offers import model_offers
from coterie.tools.permissions import (
    MODES,
    BypassNotLaunched,
    load_settings,
    load_settings_file,
    merge_settings,
)
from coterie.tools.permissions.settings import SOURCES
from coterie.trust import run_approval

if TYPE_CHECKING:
    from collections.abc import AsyncGenerator, AsyncIterator, Callable, Collection

    from rich.console import Console

    from coterie.mcpclient import McpServers
    from coterie.session import AgentSession

__all__ = ["HostPrompts", "HostSetup", "SessionSlot", "open_host", "style_offer"]


def style_offer(
    workdir: Path, settings: str | None = None, sources: Collection[str] | None = None
) -> dict[str, Any]:
    """What the answer to ``initialize`` says of the output styles: the one the
    settings name (``outputStyle`` as written, as Claude Code echoes it) and those
    the run will know. The run opens only once the host has initialized, so this
    reads the settings and the style files as the run will: the user's (in
    ``$CLAUDE_CONFIG_DIR`` or ``~/.claude``), the workspace's when it is trusted,
    then *settings* (``--settings``: JSON text or a file) over them; *sources*
    are ``--setting-sources``. Settings that cannot be read are the run's error
    to report: the answer says ``default`` then. ``user_output_styles_dir`` is
    where the user's own styles are looked for."""
    folder = str(claude_dir() / "output-styles")
    try:
        approved = run_approval(workdir, sources)
        merged = load_settings(workdir, sources=SOURCES if sources is None else sources,
                               approved=approved)  # fmt: skip
        if settings is not None:
            text = settings if settings.lstrip().startswith("{") else None
            path = workdir / "--settings" if text is not None else Path(settings).expanduser()
            layer = load_settings_file(path, text=text)
            merged = attrs.evolve(merge_settings(merged, layer), trusted=merged.trusted)
        extensions = load_extensions(
            workdir,
            trusted=merged.trusted,
            approved=approved,
            read_project=sources is None or "project" in sources,
        )
    except (CoterieError, ValueError, OSError):
        return {
            "output_style": DEFAULT_STYLE,
            "available_output_styles": [DEFAULT_STYLE],
            "user_output_styles_dir": folder,
        }
    return {
        "output_style": merged.output_style or DEFAULT_STYLE,
        "available_output_styles": list(extensions.output_styles),
        "user_output_styles_dir": folder,
    }


@attrs.define
class SessionSlot:
    """The run's session, for the host's requests that act on it: filled when the
    session opens, emptied when it closes (a ``/clear`` opens the next); a request
    that comes while it is empty waits for the next one."""

    _session: AgentSession | None = None
    _filled: trio.Event = attrs.field(factory=trio.Event)
    #: The model a host's ``set_model`` chose for the prompts from now on (None: the
    #: run's own; the lead keeps a model it was given from that request on).
    model: str | None = None

    def fill(self, session: AgentSession) -> None:
        self._session = session
        self._filled.set()

    def vacate(self) -> None:
        """The session closed: requests wait for the next one to be filled in."""
        self._session = None
        self._filled = trio.Event()

    async def get(self) -> AgentSession:
        while self._session is None:
            await self._filled.wait()
        return self._session


@attrs.define
class HostSetup:
    """What the host's first line decides of the run, which is built only once it is
    known: the hook callbacks, the subagents and the options of its ``initialize``
    (none when it starts with a prompt, or says nothing before its input ends)."""

    #: Per event, the host's matcher groups: ``{"matcher", "hookCallbackIds", "timeout"}``.
    hooks: dict[str, list[dict[str, Any]]] = attrs.field(factory=dict)
    #: The host's custom subagents (the SDK's ``agents=``), in ``--agents``' shape.
    agents: dict[str, Any] = attrs.field(factory=dict)
    #: The system prompt the host gives in ``initialize`` (the TypeScript SDK sends
    #: its ``systemPrompt`` there, as a list of strings; None: not given).
    system_prompt: str | None = None
    append_system_prompt: str | None = None
    #: Whether the host wants a subagent's text on the stream too (the SDK's
    #: ``forward_subagent_text``, ``forwardSubagentText`` in ``initialize``); its
    #: tool calls and results are always there.
    forward_subagent_text: bool = False
    #: What the answer to ``initialize`` says of the output styles (:func:`style_offer`;
    #: by default, of the current directory's settings without ``--settings``).
    offer: Callable[[], dict[str, Any]] = attrs.field(default=lambda: style_offer(Path.cwd()))
    #: Whether each of the host's ``user`` lines is written back on the stream, marked
    #: ``isReplay`` (``--replay-user-messages``), as its acknowledgment.
    replay: bool = False
    #: Events the host asked for that coterie does not have (said once, never run).
    unknown: list[str] = attrs.field(factory=list)
    ready: trio.Event = attrs.field(factory=trio.Event)

    def initialized(self, body: dict[str, Any]) -> None:
        """The host's ``initialize`` arrived with *body* (the first one decides)."""
        if self.ready.is_set():
            return
        hooks, agents, prompt = body.get("hooks"), body.get("agents"), body.get("systemPrompt")
        if isinstance(agents, dict):
            self.agents.update(agents)
        if isinstance(prompt, list) and all(isinstance(part, str) for part in prompt):
            self.system_prompt = "\n\n".join(prompt)
        elif isinstance(prompt, str):
            self.system_prompt = prompt
        if isinstance(body.get("appendSystemPrompt"), str):
            self.append_system_prompt = body["appendSystemPrompt"]
        self.forward_subagent_text = body.get("forwardSubagentText") is True
        for event, groups in (hooks or {}).items() if isinstance(hooks, dict) else ():
            if event not in EVENTS:
                self.unknown.append(str(event))
            elif isinstance(groups, list):
                self.hooks[event] = [g for g in groups if isinstance(g, dict)]
        self.ready.set()

    def matchers(self, link: HostLink) -> dict[str, list[HookMatcher]]:
        """The host's hooks as the run takes them: each callback id a function that
        asks the host (``hook_callback``) and returns its answer."""
        return {
            event: [
                HookMatcher(
                    group.get("matcher"),
                    [_forward(link, str(i)) for i in group.get("hookCallbackIds") or []],
                    float(group.get("timeout") or DEFAULT_TIMEOUT),
                )
                for group in groups
            ]
            for event, groups in self.hooks.items()
        }


def _forward(link: HostLink, callback_id: str) -> HookCallback:
    async def ask_host(data: dict[str, Any]) -> dict[str, Any]:
        body = {"callback_id": callback_id, "input": data, "tool_use_id": data.get("tool_use_id")}
        # The hook's own timeout bounds this call (the host is told to stop then).
        response = await link.ask("hook_callback", body, answer_within=math.inf)
        if response is None:
            raise RuntimeError("the program driving the run is gone")
        if response.outcome == "error":
            raise RuntimeError(response.error)
        return response.body

    return ask_host


def _handlers(slot: SessionSlot, setup: HostSetup) -> dict[str, Handler]:
    """The host's requests coterie serves, each by the handler that answers it: the
    session's own here, then each family's from its module (below)."""

    async def initialize(request: Request) -> dict[str, Any]:
        """The host's first request: what this CLI offers (idempotent)."""
        setup.initialized(request.body)
        return {
            "commands": [],
            "agents": [],
            **setup.offer(),
            "models": model_offers(),  # what set_model takes (Zed's model picker)
            "account": account(os.environ),
            "pid": os.getpid(),
        }

    async def interrupt(request: Request) -> dict[str, Any]:
        # Stop the work on the prompt in flight: its result comes back interrupted,
        # and the run goes on with the next prompt (nothing is queued behind it here).
        await (await slot.get()).interrupt()
        return {"still_queued": []}

    async def set_permission_mode(request: Request) -> dict[str, Any]:
        mode = request.body.get("mode")
        if mode not in MODES:
            raise ValueError(f"unknown permission mode {mode!r}; expected one of {MODES}")
        session = await slot.get()
        try:
            session.policy.switch_mode(mode)  # ValueError: the host's error answer
        except BypassNotLaunched as exc:
            raise RequestRefused(str(exc), "bypass_not_launched") from None
        # Claude Code says so on the stream too, for hosts that only read it.
        await _write_line(json.dumps({
            "type": "system", "subtype": "status", "permissionMode": mode,
            "session_id": session.run_id,
        }))  # fmt: skip
        return {"mode": mode}

    async def set_model(request: Request) -> dict[str, Any]:
        model = request.body.get("model")
        if model is not None and (not isinstance(model, str) or not model.strip()):
            raise ValueError(f"a model is a name, not {model!r}")
        slot.model = model
        return {}

    async def servers() -> McpServers:
        return (await slot.get()).mcp

    return {
        "initialize": initialize,
        "set_model": set_model,
        "interrupt": interrupt,
        "set_permission_mode": set_permission_mode,
        # The run's MCP servers: mcp_status, mcp_reconnect, mcp_toggle.
        **mcp_handlers(servers),
        # The run's state: get_context_usage, stop_task, rewind_files.
        **control_handlers(slot.get, lambda: slot.model),
    }


async def _stdin_lines(setup: HostSetup) -> AsyncIterator[str]:
    """Standard input's lines; the first says whether the host initializes (the run
    waits for that) or starts with a prompt (the run starts at once)."""
    try:
        while True:
            line = await trio.to_thread.run_sync(sys.stdin.readline, abandon_on_cancel=True)
            if not line:
                return
            if line.strip() and not setup.ready.is_set() and not _initializes(line):
                setup.ready.set()
            yield line
    finally:
        setup.ready.set()


def _initializes(line: str) -> bool:
    try:
        frame = parse_line(line, 1)
    except FrameError:
        return False
    return isinstance(frame, Request) and frame.subtype == "initialize"


async def _write_line(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


@contextlib.asynccontextmanager
async def open_host(err: Console, slot: SessionSlot, setup: HostSetup) -> AsyncIterator[HostLink]:
    """Serve the host on standard input and output while the block runs, acting on
    the session *slot* is filled with; enters once the host's first line has set
    up the run (*setup*). A line that settles nothing (unreadable, late) is one
    line on *err*."""

    def stray(note: str) -> None:
        err.print(f"[yellow]note:[/] {escape(note)}", soft_wrap=True)

    link = HostLink(_handlers(slot, setup), _write_line, on_stray=stray)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(link.run, _stdin_lines(setup))
        await setup.ready.wait()
        for event in setup.unknown:
            stray(f"the host's {event} hooks never run: coterie has no such event")
        yield link
        nursery.cancel_scope.cancel()


@attrs.define
class HostPrompts:
    """The turns of the host's ``user`` lines, in order, one run's at a time: each
    :meth:`until_clear` yields them until the host's input ends, or until a
    ``/clear``, which it yields last and keeps as :attr:`cleared` (the next run
    opens on it). A line that is not a readable prompt is one line on *err*, and
    the run goes on."""

    link: HostLink
    err: Console
    #: Whether each turn is written back on the stream (``--replay-user-messages``).
    replay: bool = False
    #: The ``/clear`` that ended the last :meth:`until_clear` (None: input ended).
    cleared: HostTurn | None = None
    _number: int = 0

    def until_clear(self) -> AsyncGenerator[HostTurn, None]:
        """The next run's turns (:attr:`cleared` is None until a ``/clear`` ends them,
        even if they are never read: a run that failed to open ends the process)."""
        self.cleared = None
        return self._turns()

    async def _turns(self) -> AsyncGenerator[HostTurn, None]:
        async for raw in self.link.turns:
            self._number += 1
            try:
                turn = read_turn(raw, f"user message {self._number}", replay=self.replay)
            except InputError as exc:
                self.err.print(f"[yellow]note:[/] {escape(str(exc))}; skipped", soft_wrap=True)
                continue
            if turn.clears:
                self.cleared = turn
            yield turn
            if turn.clears:
                return
