"""What the observer's run page shows, folded from the run's events (pure: no I/O, no Trio).

The tree (actors, supervisors, live states, restart counts, last crash
reason) is the terminal view's own fold, :class:`coterie.ui.TeamState`; this
module adds what only the page shows: per-actor turns, tokens and cost, the
messages between actors (for the sequence chart), the supervision timeline,
and the board and mailbox counts the feed reads from files.

A :class:`RunView` is shared by every page open on the run: it is folded
once, and answers two questions: :meth:`RunView.snapshot` (everything, for a
page that just connected) and :meth:`RunView.take_delta` (only what changed
since the last delta, for every page at once: one JSON text sent to all). Lists
that grow with the run (messages, timeline) keep their last
:data:`KEEP` entries in snapshots; their totals are counted.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from typing import Any

import attrs

from coterie.models import Usage
from coterie.models.pricing import cost_usd
from coterie.ui import TeamState, one_line

#: Messages and timeline entries a snapshot carries (newest kept).
KEEP = 500

#: The events of the supervision timeline.
TIMELINE = frozenset(
    {
        "actor.crashed",
        "actor.restarted",
        "actor.stopped",
        "actor.exited",
        "actor.abandoned",
        "supervisor.gave_up",
        "supervisor.escalated",
        "supervisor.stopped",
        "fault.injected",
    }
)


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


@attrs.define
class Spend:
    """One actor's turns, tokens and cost so far."""

    turns: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0

    def add(self, model: str, usage: Mapping[str, Any]) -> None:
        """Count one model reply that used *usage* (the API's usage fields)."""
        counts = Usage(
            _int(usage.get("input_tokens")),
            _int(usage.get("output_tokens")),
            _int(usage.get("cache_creation_input_tokens")),
            _int(usage.get("cache_read_input_tokens")),
        )
        self.turns += 1
        self.input_tokens += counts.input_tokens
        self.output_tokens += counts.output_tokens
        self.cost_usd += cost_usd(model, counts)

    def to_json(self) -> dict[str, Any]:
        """As the page reads it."""
        return {
            "turns": self.turns,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cost_usd": round(self.cost_usd, 6),
        }


@attrs.define
class RunView:
    """The page's state of one run (see the module docstring)."""

    #: The model the run's agents call, for prices.
    model: str = ""
    team: TeamState = attrs.field(factory=TeamState)
    spend: dict[str, Spend] = attrs.field(factory=dict)
    messages: deque[dict[str, Any]] = attrs.field(factory=lambda: deque(maxlen=KEEP))
    timeline: deque[dict[str, Any]] = attrs.field(factory=lambda: deque(maxlen=KEEP))
    message_count: int = 0
    #: Each actor's unacknowledged messages (pending or in flight), as last read.
    #: Each mailbox's ``pending`` and ``in_flight`` counts (``in_flight`` absent when
    #: only the unacknowledged total is known: then ``pending`` is that total).
    mailboxes: dict[str, dict[str, int]] = attrs.field(factory=dict)
    #: The last event folded (its ``seq``), and whether the run is live.
    seq: int = 0
    live: bool = False
    _changed: set[str] = attrs.field(factory=set)
    _new_messages: list[dict[str, Any]] = attrs.field(factory=list)
    _new_timeline: list[dict[str, Any]] = attrs.field(factory=list)
    _new_tasks: dict[str, dict[str, Any]] = attrs.field(factory=dict)
    _new_counts: dict[str, dict[str, int]] = attrs.field(factory=dict)
    _live_changed: bool = False

    def apply(self, event: Mapping[str, Any]) -> None:
        """Fold one event (a line of ``events.jsonl``, decoded)."""
        kind = str(event.get("type", ""))
        seq = event.get("seq")
        if isinstance(seq, int):
            self.seq = max(self.seq, seq)
        self.team.apply(event)
        for field in ("actor", "supervisor", "sender"):
            name = event.get(field)
            if isinstance(name, str):
                self._changed.add(name)
        if kind == "agent.message" and isinstance(event.get("actor"), str):
            usage = event.get("usage")
            spend = self.spend.setdefault(event["actor"], Spend())
            spend.add(self.model, usage if isinstance(usage, Mapping) else {})
        elif kind == "team.message":
            self._message(event)
        elif kind in TIMELINE:
            entry = {
                "seq": seq,
                "ts": event.get("ts"),
                "type": kind,
                "actor": event.get("actor"),
                "supervisor": event.get("supervisor"),
                "reason": one_line(event.get("reason") or ""),
                "fault": event.get("fault"),
                "by": event.get("by"),
            }
            self.timeline.append(entry)
            self._new_timeline.append(entry)

    def _message(self, event: Mapping[str, Any]) -> None:
        entry = {
            "seq": event.get("seq"),
            "ts": event.get("ts"),
            "sender": event.get("sender"),
            "recipient": event.get("recipient"),
            "kind": event.get("kind"),
            "text": one_line(event.get("text") or ""),
        }
        self.message_count += 1
        self.messages.append(entry)
        self._new_messages.append(entry)

    @property
    def tasks(self) -> list[dict[str, Any]]:
        """The board's tasks as ``Task.to_json()`` gives them, as last read."""
        return self.team.tasks

    def set_tasks(self, tasks: list[dict[str, Any]]) -> None:
        """The board as just read (the tree's fold keeps it)."""
        before = {str(t.get("id")): t for t in self.team.tasks}
        self.team.set_tasks(tasks)
        for task in self.team.tasks:
            key = str(task.get("id"))
            if before.get(key) != task:
                self._new_tasks[key] = task

    def set_mailboxes(self, counts: dict[str, dict[str, int]]) -> None:
        """Each actor's mailbox counts, as just read."""
        for name, count in counts.items():
            if self.mailboxes.get(name) != count:
                self._new_counts[name] = count
        self.mailboxes = counts

    def set_live(self, live: bool) -> None:
        """Whether a process runs the run now."""
        if live != self.live:
            self.live, self._live_changed = live, True

    def _actor(self, name: str) -> dict[str, Any]:
        row = self.team.actors[name]
        spend = self.spend.get(name, Spend())
        return {
            "name": row.name,
            "supervisor": row.supervisor,
            "kind": row.kind,
            "state": row.state,
            "task": row.task,
            "restarts": row.restarts,
            "reason": row.reason,
            **spend.to_json(),
            "turns": max(spend.turns, row.turns),
        }

    def snapshot(self) -> dict[str, Any]:
        """Everything a page needs to draw the run (and the pending delta is spent)."""
        self.take_delta()
        return {
            "seq": self.seq,
            "live": self.live,
            "message_count": self.message_count,
            "actors": [self._actor(name) for name in self.team.actors],
            "tasks": self.tasks,
            "mailboxes": self.mailboxes,
            "messages": list(self.messages),
            "timeline": list(self.timeline),
        }

    def take_delta(self) -> dict[str, Any] | None:
        """What changed since the last delta or snapshot, or None if nothing did.

        Each changed actor row and task is given whole (it replaces the page's,
        by name or id), each changed mailbox count by name; messages and
        timeline entries are only the new ones (appended). A run of hundreds of
        actors and tasks thus sends a few hundred bytes per change, not the run.
        """
        changed = [name for name in self._changed if name in self.team.actors]
        news = (self._new_messages, self._new_timeline, self._new_tasks, self._new_counts)
        if not (changed or any(news) or self._live_changed):
            return None
        delta = {
            "seq": self.seq,
            "live": self.live,
            "message_count": self.message_count,
            "actors": [self._actor(name) for name in changed],
            "tasks": list(self._new_tasks.values()),
            "mailboxes": self._new_counts,
            "messages": self._new_messages[-KEEP:],
            "timeline": self._new_timeline[-KEEP:],
        }
        self._changed, self._new_messages, self._new_timeline = set(), [], []
        self._new_tasks, self._new_counts, self._live_changed = {}, {}, False
        return delta
