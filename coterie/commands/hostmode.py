"""``--input-format stream-json``: a host program drives the run over stdin and stdout.

A program built on the Claude Agent SDK spawns the CLI with ``--input-format
stream-json --output-format stream-json`` and speaks Claude Code's control
protocol with it (:mod:`coterie.hostlink`): it sends ``initialize`` first,
then ``user`` lines, each a prompt, and control requests whenever it likes.
:func:`open_host` serves the host for the length of a run: its lines are
read on a thread (standard input blocks), each control request answered by
its handler here, and :func:`host_prompts` yields the prompts in order. The
host's end of input ends the run after the last prompt's result.

Both the run's view and the control channel write whole lines to standard
output from the Trio thread, so their lines never interleave.
"""

from __future__ import annotations

import contextlib
import json
import sys
from typing import TYPE_CHECKING, Any

import attrs
import trio
from rich.markup import escape

from coterie.commands.streaminput import InputError, turn_text
from coterie.hostlink import Handler, HostLink, Request
from coterie.tools.permissions import MODES

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from rich.console import Console

    from coterie.session import AgentSession

__all__ = ["SessionSlot", "host_prompts", "open_host"]


async def _initialize(request: Request) -> dict[str, Any]:
    """The host's first request: what this CLI offers (idempotent)."""
    return {
        "commands": [],
        "agents": [],
        "output_style": "default",
        "available_output_styles": ["default"],
    }


@attrs.define
class SessionSlot:
    """The run's session, for the host's requests that act on it: filled once when
    the session opens; a request that comes earlier waits for it."""

    _session: AgentSession | None = None
    _filled: trio.Event = attrs.field(factory=trio.Event)

    def fill(self, session: AgentSession) -> None:
        self._session = session
        self._filled.set()

    async def get(self) -> AgentSession:
        await self._filled.wait()
        assert self._session is not None
        return self._session


def _handlers(slot: SessionSlot) -> dict[str, Handler]:
    """The host's requests coterie serves, each by the handler that answers it."""

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
        session.policy.switch_mode(mode)  # ValueError: the host's error answer
        # Claude Code says so on the stream too, for hosts that only read it.
        await _write_line(json.dumps({
            "type": "system", "subtype": "status", "permissionMode": mode,
            "session_id": session.run_id,
        }))  # fmt: skip
        return {"mode": mode}

    return {
        "initialize": _initialize,
        "interrupt": interrupt,
        "set_permission_mode": set_permission_mode,
    }


async def _stdin_lines() -> AsyncIterator[str]:
    while True:
        line = await trio.to_thread.run_sync(sys.stdin.readline, abandon_on_cancel=True)
        if not line:
            return
        yield line


async def _write_line(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


@contextlib.asynccontextmanager
async def open_host(err: Console, slot: SessionSlot) -> AsyncIterator[HostLink]:
    """Serve the host on standard input and output while the block runs, acting on
    the session *slot* is filled with; a line that settles nothing (unreadable,
    late) is one line on *err*."""

    def stray(note: str) -> None:
        err.print(f"[yellow]note:[/] {escape(note)}", soft_wrap=True)

    link = HostLink(_handlers(slot), _write_line, on_stray=stray)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(link.run, _stdin_lines())
        yield link
        nursery.cancel_scope.cancel()


async def host_prompts(link: HostLink, err: Console) -> AsyncIterator[str]:
    """The prompts of the host's ``user`` lines, in order, until its input ends; a
    line that is not a readable prompt is one line on *err*, and the run goes on."""
    number = 0
    async for raw in link.turns:
        number += 1
        try:
            yield turn_text(raw, f"user message {number}")
        except InputError as exc:
            err.print(f"[yellow]note:[/] {escape(str(exc))}; skipped", soft_wrap=True)
