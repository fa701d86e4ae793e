"""``async: true`` command hooks: started, never waited for, their word kept for later.

A background hook starts as any command hook does (through
:func:`~coterie.hooks.runner.run_handler`: its process group recorded in the
run's ``procgroups/`` before it runs) but in a task of its own, so the event
that fired it goes on at once. As in Claude Code it cannot block or decide
anything (its exit code, ``decision``, ``permissionDecision`` and
``continue`` have no effect); its ``timeout`` still applies (Claude Code
2.1.332 registers each async hook with its timeout). When it ends, its
``systemMessage`` is shown to the user (the ``hook.ran`` event's
``notice``), and its ``additionalContext`` (or, for UserPromptSubmit and
SessionStart, its plain stdout) waits for the agent that fired it, which
takes it on its next turn (:meth:`Background.take`), as Claude Code attaches
it to its next request. A hook still running when the run ends is ended with
it, its output dropped (Claude Code cancels it too).

The tasks are Trio system tasks: they outlive the step that fired them and
are cancelled when the run's Trio loop ends, which ends each hook's whole
process group (SIGTERM, a grace, SIGKILL) and forgets its record; a coterie
killed with -9 leaves the records, and the next start kills those groups.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import attrs
import trio

from coterie.hooks.outcome import read_result
from coterie.hooks.runner import run_handler

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from pathlib import Path

    from coterie.hooks.catalogue import HookEvent
    from coterie.hooks.config import Handler

__all__ = ["Background"]


@attrs.define
class Background:
    """The run's background hooks, and what they left for each agent."""

    _pending: dict[str | None, list[tuple[HookEvent, str]]] = attrs.field(factory=dict, init=False)
    #: How many are running now.
    running: int = attrs.field(default=0, init=False)

    def start(
        self,
        event: HookEvent,
        handler: Handler,
        payload: bytes,
        *,
        cwd: Path,
        env: Mapping[str, str],
        records: Path | None,
        agent: str | None,
        emit: Callable[..., None],
    ) -> None:
        """Start *handler* on *payload* for *agent* and return at once; *emit* records
        ``hook.ran`` or ``hook.failed`` when it ends."""

        async def run() -> None:
            started = time.monotonic()
            self.running += 1
            try:
                ran = await run_handler(handler, payload, cwd=cwd, env=env, records=records)
            finally:
                self.running -= 1
            ms = int((time.monotonic() - started) * 1000)
            if ran.exit_code is None:
                emit(
                    "hook.failed",
                    event=event,
                    handler=handler.label,
                    error=ran.error,
                    ms=ms,
                    blocked=False,
                    actor=agent,
                )
                return
            outcome = read_result(event, ran.exit_code, ran.stdout, ran.stderr)
            if outcome.context:
                self._pending.setdefault(agent, []).append((event, outcome.context))
            emit(
                "hook.ran",
                event=event,
                handler=handler.label,
                exit_code=ran.exit_code,
                ms=ms,
                blocked=False,
                notice=outcome.notice,
                actor=agent,
            )

        trio.lowlevel.spawn_system_task(_guarded, run, name=f"async hook {handler.label}")

    def take(self, agent: str | None) -> tuple[tuple[HookEvent, str], ...]:
        """What the background hooks *agent* fired left for it since the last take:
        each one's event and text, in the order they ended."""
        return tuple(self._pending.pop(agent, []))


async def _guarded(run: Callable[[], Any]) -> None:
    """A system task must not raise (it would crash the whole run): a background
    hook's failure is its own; cancellation at the run's end is the way out."""
    try:
        await run()
    except trio.Cancelled:
        raise
    except Exception:  # the hook's own failure, reported by run_handler already
        return
