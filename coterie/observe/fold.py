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

from coterie.control import CONTROL
from coterie.ui import TeamState, one_line
from coterie.ui.spend import ActorSpend

#: Messages and timeline entries a snapshot carries (newest kept).
KEEP = 500

#: A run's recorded states (``state.json``) that say it has ended: nothing left to
#: cancel or to poke (a run that ends keeps its process a moment longer).
FINISHED = frozenset({"completed", "failed"})

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


@attrs.define
class RunView:
    """The page's state of one run (see the module docstring)."""

    #: The model the run's agents call, for prices.
    model: str = ""
    team: TeamState = attrs.field(factory=TeamState)
    spend: dict[str, ActorSpend] = attrs.field(factory=dict)
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
    #: The run's recorded state (``state.json``: running, completed, failed), as last read.
    state: str | None = None
    #: Whether the root supervisor has stopped (or given up) since anything last
    #: started: the run's tree is down, though its process may linger a moment.
    tree_down: bool = False
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
        root_ended = kind in ("supervisor.stopped", "supervisor.gave_up")
        if kind == "actor.started" or (root_ended and event.get("supervisor") == "root"):
            down = kind != "actor.started"  # a resumed run starts its tree again
            self._live_changed = self._live_changed or down != self.tree_down
            self.tree_down = down
        for field in ("actor", "supervisor", "sender"):
            name = event.get(field)
            if isinstance(name, str):
                self._changed.add(name)
        if kind == "agent.message" and isinstance(event.get("actor"), str):
            usage = event.get("usage")
            spend = self.spend.setdefault(event["actor"], ActorSpend())
            replied = str(event.get("model") or self.model)  # priced by who wrote it
            spend.add(replied, usage if isinstance(usage, Mapping) else {})
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

    def set_live(self, live: bool, state: str | None = None) -> None:
        """Whether a process runs the run now, and the state it recorded last."""
        if (live, state) != (self.live, self.state):
            self.live, self.state, self._live_changed = live, state, True

    @property
    def working(self) -> bool:
        """Whether the run can still be acted on: a process runs it, its tree is up and
        it has not recorded its end (what the page's cancel and fault buttons need)."""
        return self.live and not self.tree_down and self.state not in FINISHED

    def carrying(self) -> set[str]:
        """The actors that carry the run's control channel (the control actor and the
        supervisors above it, up to the root): the channel refuses a fault on them
        (:mod:`coterie.control`), so the page offers none."""
        chain, name = {"root", CONTROL}, CONTROL
        while (row := self.team.actors.get(name)) is not None and row.supervisor:
            name = row.supervisor
            if name in chain:
                break
            chain.add(name)
        return chain

    def _actor(self, name: str, carrying: set[str]) -> dict[str, Any]:
        row = self.team.actors[name]
        spend = self.spend.get(name, ActorSpend())
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
            # Whether the page may offer faults on it: a worker, not a carrier of the
            # control channel (the run's liveness is the page's to add).
            "faults": row.kind != "supervisor" and name not in carrying,
        }

    def snapshot(self) -> dict[str, Any]:
        """Everything a page needs to draw the run (and the pending delta is spent)."""
        self.take_delta()
        carrying = self.carrying()
        return {
            "seq": self.seq,
            "live": self.live,
            "working": self.working,
            "message_count": self.message_count,
            "actors": [self._actor(name, carrying) for name in self.team.actors],
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
        carrying = self.carrying()
        delta = {
            "seq": self.seq,
            "live": self.live,
            "working": self.working,
            "message_count": self.message_count,
            "actors": [self._actor(name, carrying) for name in changed],
            "tasks": list(self._new_tasks.values()),
            "mailboxes": self._new_counts,
            "messages": self._new_messages[-KEEP:],
            "timeline": self._new_timeline[-KEEP:],
        }
        self._changed, self._new_messages, self._new_timeline = set(), [], []
        self._new_tasks, self._new_counts, self._live_changed = {}, {}, False
        return delta
