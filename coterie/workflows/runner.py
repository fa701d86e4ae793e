"""A workflow script driven under Trio: its agents run concurrently, each answer journaled.

:func:`run_workflow` starts the :class:`~.machine.ScriptMachine`, and for
each ``agent()`` call it asks for, either takes the answer of a finished agent
of an earlier run (:class:`~.journal.Replay`) or runs one (``run_agent``,
bounded by :data:`CONCURRENCY` at a time and :data:`MAX_AGENTS` in all). An
answer (reused ones too) is written to the run's journal before the script is
told, so a run killed at any point never runs again an agent whose answer the
journal holds. When
the script ends, agents still running (ones it did not wait for) are
cancelled. A script waiting on nothing (no agent running, no answer due)
fails at once instead of hanging the run.
"""

from __future__ import annotations

import math
import os
from typing import TYPE_CHECKING, Any

import attrs
import trio

from coterie.workflows.journal import call_key
from coterie.workflows.machine import Done, Failed, Note, Request

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from coterie.workflows.journal import Replay, WorkflowJournal
    from coterie.workflows.machine import ScriptMachine

__all__ = [
    "CONCURRENCY",
    "MAX_AGENTS",
    "AgentOutcome",
    "Progress",
    "Summary",
    "label_of",
    "run_workflow",
]

#: Agents of one workflow at work at once (Claude Code: min(16, CPUs - 2));
#: at least 4, since an agent mostly waits for its model.
CONCURRENCY = min(16, max(4, (os.cpu_count() or 1) - 2))
#: Agents one workflow may start in all: a backstop for a loop that never ends.
MAX_AGENTS = 1000


@attrs.frozen
class AgentOutcome:
    """How one ``agent()`` call ended: *value* for the script if *ok* (None when the
    agent failed: the script gets null), else an error the call throws. Only a kept
    answer is journaled (a failed agent runs again on resume)."""

    ok: bool
    value: Any
    keep: bool


@attrs.frozen
class Progress:
    """Something to show: an agent started, finished, failed or reused; a log line; a phase."""

    #: ``agent.started``, ``agent.finished``, ``agent.failed``, ``agent.reused``,
    #: ``log`` or ``phase``.
    kind: str
    text: str


@attrs.frozen
class Summary:
    """How a workflow run went."""

    outcome: Done | Failed
    #: Agents run live, answers taken from the journal of an earlier run.
    ran: int
    reused: int


def label_of(request: Request) -> str:
    """How an ``agent()`` call is shown: its ``label``, or the start of its prompt."""
    label = request.options.get("label")
    if isinstance(label, str) and label.strip():
        return label.strip()[:80]
    first = request.prompt.strip().splitlines()[0] if request.prompt.strip() else "agent"
    return first[:60] + ("…" if len(first) > 60 else "")


async def run_workflow(
    machine: ScriptMachine,
    journal: WorkflowJournal,
    replay: Replay,
    run_agent: Callable[[Request], Awaitable[AgentOutcome]],
    *,
    progress: Callable[[Progress], None],
    spent: Callable[[], int] = lambda: 0,
    concurrency: int = CONCURRENCY,
    max_agents: int = MAX_AGENTS,
) -> Summary:
    """Run *machine* to its end; see the module docstring."""
    send, receive = trio.open_memory_channel[tuple[Request, str, AgentOutcome]](math.inf)
    limiter = trio.CapacityLimiter(concurrency)
    running = ran = reused = 0

    async def one(request: Request, key: str) -> None:
        async with limiter:
            progress(Progress("agent.started", label_of(request)))
            outcome = await run_agent(request)
        send.send_nowait((request, key, outcome))

    async with trio.open_nursery() as nursery:
        machine.start()
        while True:
            answers: list[tuple[Request, AgentOutcome]] = []
            for item in machine.take():
                if isinstance(item, Note):
                    progress(Progress(item.kind, item.text))
                    continue
                if machine.outcome is not None:
                    continue  # asked for as the script ended: nobody waits for it
                key = call_key(item.prompt, item.options)
                hit, value = replay.take(key)
                if hit:
                    reused += 1
                    # This run's journal holds every answer it has, so that a run
                    # resuming this one (after another crash) finds them all.
                    journal.result(key=key, label=label_of(item), value=value)
                    progress(Progress("agent.reused", label_of(item)))
                    answers.append((item, AgentOutcome(ok=True, value=value, keep=False)))
                elif ran >= max_agents:
                    limit = f"the workflow reached its limit of {max_agents} agents"
                    answers.append((item, AgentOutcome(ok=False, value=limit, keep=False)))
                else:
                    ran += 1
                    running += 1
                    nursery.start_soon(one, item, key)
            if answers:
                for request, outcome in answers:
                    machine.settle(request.id, ok=outcome.ok, value=outcome.value, spent=spent())
                continue
            if machine.outcome is not None:
                break
            if running == 0:
                machine.fail(
                    "the script waits for something that never comes (no agent() call is running)"
                )
                break
            request, key, outcome = await receive.receive()
            running -= 1
            if outcome.keep:
                journal.result(key=key, label=label_of(request), value=outcome.value)
            if outcome.ok:
                kind = "agent.finished" if outcome.value is not None else "agent.failed"
            else:
                kind = "agent.failed"
            progress(Progress(kind, label_of(request)))
            machine.settle(request.id, ok=outcome.ok, value=outcome.value, spent=spent())
        nursery.cancel_scope.cancel()
    ended = machine.outcome
    assert ended is not None
    if isinstance(ended, Done):
        journal.end(status="completed", value=ended.value)
    else:
        journal.end(status="failed", error=ended.message)
    return Summary(ended, ran=ran, reused=reused)
