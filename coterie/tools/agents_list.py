"""ListAgents: who else is at work in this run, and whom SendMessage reaches.

Claude Code's ListAgents lists the agents a session can message (its team,
other sessions on the machine). coterie's agents all live in the run: the
lead and its teammates (from ``ToolContext.team``; each with the task it has
in progress on the board), and the subagents running now (folded from the
run's event log: ``subagent.started`` not yet followed by its
``subagent.finished``, since the ``subagents`` supervisor last started, for a
run that was killed and resumed runs none of the earlier ones). Subagents
answer only their caller, so they are listed but cannot be messaged. ``q``
keeps the entries containing it (any case); the listing is one page, so
``cursor`` is taken and ignored, and so is ``channel`` (there are no other
sessions or channels to choose among).

Read-only. Not deferred for one agent (Claude Code sends it in every first
request); deferred for the members of a team, whose role names the team.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs

from coterie.board import TaskStatus
from coterie.events import read_events
from coterie.tools._base import ToolResult
from coterie.tools.capabilities import Capabilities, Effect

if TYPE_CHECKING:
    from collections.abc import Iterable

    from coterie.events import Event
    from coterie.tools._base import TeamContext, ToolContext

__all__ = ["SUBAGENTS", "ListAgentsTool", "RunningSubagent", "running_subagents"]

#: The supervisor the run's subagents run under (see ``coterie.runtime.tree``).
SUBAGENTS = "subagents"


@attrs.frozen
class RunningSubagent:
    """A subagent at work: its name, type, what it was asked, and who started it."""

    name: str
    kind: str
    description: str
    parent: str


def running_subagents(events: Iterable[Event]) -> list[RunningSubagent]:
    """The subagents started and not finished in *events* (a run's log), in start order."""
    running: dict[str, RunningSubagent] = {}
    for event in events:
        if event.type == "actor.started" and event.data.get("actor") == SUBAGENTS:
            running.clear()  # a (re)started run, or supervisor: nothing of before runs
            continue
        name = event.data.get("subagent")
        if not isinstance(name, str):
            continue
        if event.type == "subagent.started":
            running[name] = RunningSubagent(
                name,
                str(event.data.get("subagent_type") or "general-purpose"),
                str(event.data.get("description") or ""),
                str(event.data.get("actor") or "?"),
            )
        elif event.type == "subagent.finished":
            running.pop(name, None)
    return list(running.values())


_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "q": {"type": "string", "description": "Keep only the agents whose entry contains this"},
        "channel": {"type": "string", "description": "Accepted; every agent is in this run"},
        "cursor": {"type": "string", "description": "Accepted; the listing is one page"},
    },
    "additionalProperties": False,
}


class ListAgentsTool:
    """Lists the run's agents: the team and the subagents running."""

    name = "ListAgents"
    description = (
        "List the agents of this run: you, the lead and teammates you can message with"
        " SendMessage (each with the task it is working on), and the subagents running now"
        " (they report only to whoever started them). q filters the entries."
    )
    input_schema = _SCHEMA
    capabilities = Capabilities(Effect.READ_ONLY, deferred_in_team=True)

    async def run(self, input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """The listing, one agent a line, in sections."""
        query = str(input.get("q") or "").casefold()
        team = ctx.team
        head = f"You are {ctx.agent}."
        members = await _members(team) if team is not None else []
        if team is None:
            head += " This run has no team: there is nobody to send messages to."
        elif team.others:
            head += f' SendMessage reaches: {", ".join(team.others)} (or "*" for all of them).'
        log = ctx.events.path if ctx.events is not None else None
        subagents = running_subagents(read_events(log)) if log is not None and log.exists() else []
        below = [
            f"  {s.name}: {s.kind} subagent of {s.parent}"
            + (f": {s.description}" if s.description else "")
            for s in subagents
        ]
        sections = [("Team:", members), ("Subagents running (no messages):", below)]
        lines = [head]
        for title, entries in sections:
            kept = [e for e in entries if query in e.casefold()]
            if kept:
                lines += ["", title, *kept]
        if len(lines) == 1:
            lines += ["", f"No agent matches {input['q']!r}." if query else "No other agents."]
        return ToolResult("\n".join(lines))


async def _members(team: TeamContext) -> list[str]:
    working = {
        t.owner: t.id
        for t in await team.board.list()
        if t.status is TaskStatus.IN_PROGRESS and t.owner is not None
    }
    entries = []
    for name in team.members:
        role = "lead" if name == team.lead else "teammate"
        you = " (you)" if name == team.me else ""
        doing = f"working on {working[name]}" if name in working else "no task in progress"
        entries.append(f"  {name}{you}: {role}, {doing}")
    return entries
