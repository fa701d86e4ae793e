"""What the team view shows, derived from the run's events (pure: no terminal, no Trio).

:class:`TeamState` folds events into one :class:`ActorRow` per actor and
supervisor (the tree comes from the ``supervisor`` field of supervision
events) plus the last board read; :func:`describe` and :func:`task_line`
give the plain one-line accounts printed when the output is not a terminal.
Nothing here raises on an event it does not know or a field that is missing:
a display must never break a run.

Actor states: ``running`` (started, no activity reported yet), ``working``
and ``idle`` (``actor.state``), ``crashed``, ``restarting``, ``stopped``,
``exited`` (returned normally), ``abandoned`` (did not stop in time), and
``gave up`` for a supervisor past its restart intensity.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import attrs

from coterie.ui.views import _summary as tool_label
from coterie.ui.views import retry_line

if TYPE_CHECKING:
    from coterie.events import Event

TaskRow = dict[str, Any]
"""A task as ``coterie.board.Task.to_json()`` gives it: id, subject, status, owner, blocked_by..."""

CLIP = 160  # characters kept of a message line


def unpack(event: Event | Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """``(type, data)`` of an :class:`~coterie.events.Event` or of its JSON dict."""
    if isinstance(event, Mapping):
        data = dict(event)
        return str(data.pop("type", "")), data
    return event.type, event.data


def one_line(text: object) -> str:
    """The first non-empty line of *text*, clipped to ``CLIP`` characters."""
    for line in str(text).splitlines():
        if line.strip():
            return clip(line.strip(), CLIP)
    return ""


def clip(text: str, width: int) -> str:
    """*text*, cut to *width* characters with an ellipsis if longer."""
    return text if len(text) <= width else text[: width - 1] + "…"


def text_of(content: object) -> str:
    """The text blocks of an assistant message (Anthropic content blocks), joined."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "".join(
        str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text"
    )


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def as_task_row(task: Any) -> TaskRow:
    """A ``Task`` (anything with ``to_json``) or a task dict, as a dict."""
    return dict(task.to_json()) if hasattr(task, "to_json") else dict(task)


@attrs.define
class ActorRow:
    """What the view knows of one actor or supervisor."""

    name: str
    supervisor: str | None = None  # its parent in the supervision tree
    kind: str = "worker"  # or "supervisor"
    state: str = "running"  # see the module docstring
    task: str | None = None
    attempt: int = 1
    restarts: int = 0
    reason: str | None = None  # why it last crashed, stopped or gave up
    latest: str = ""  # the last thing it said (a message or assistant text), one line
    doing: str = ""  # its last tool call, while working
    turns: int = 0
    #: When (event time, seconds since the epoch) its model call began; None when
    #: no call is outstanding or the reply has begun to arrive.
    waiting_since: float | None = None
    #: The last failed attempt of that call, in one line ("" when none failed).
    retry: str = ""
    #: Messages in its mailbox not acknowledged yet (pending or in flight), as last
    #: counted from outside the run (``coterie watch``); 0 when nobody counts.
    mail: int = 0

    def waiting_for(self, now: float) -> float | None:
        """Seconds its model call has gone unanswered at *now*, or None."""
        return None if self.waiting_since is None else max(0.0, now - self.waiting_since)


@attrs.define
class TeamState:
    """The display's state, derived from events alone (pure: no I/O, no Trio).

    Actors appear in the order they were first named by any event; the tree
    comes from the ``supervisor`` field of supervision events.
    """

    actors: dict[str, ActorRow] = attrs.field(factory=dict)
    tasks: list[TaskRow] = attrs.field(factory=list)
    board_changed: bool = False  # a board.changed arrived since the last set_tasks

    def row(self, name: str) -> ActorRow:
        """The row of *name*, made if new."""
        if name not in self.actors:
            self.actors[name] = ActorRow(name)
        return self.actors[name]

    def roots(self) -> list[ActorRow]:
        """Rows without a known parent: the root supervisor(s), and any orphan actor."""
        return [r for r in self.actors.values() if r.supervisor not in self.actors]

    def children(self, name: str) -> list[ActorRow]:
        """The rows supervised by *name*, in the order they were first seen."""
        return [r for r in self.actors.values() if r.supervisor == name]

    def waiting(self) -> bool:
        """Whether some actor waits for its model (the display has a clock to keep)."""
        return any(r.waiting_since is not None for r in self.actors.values())

    def apply(self, event: Event | Mapping[str, Any]) -> None:
        """Fold one event into the state."""
        kind, d = unpack(event)
        ts = event.ts if not isinstance(event, Mapping) else d.get("ts")
        name = d.get("actor")
        if kind == "team.message":
            sender = d.get("sender")
            if isinstance(sender, str):
                text = one_line(d.get("text", ""))
                self.row(sender).latest = f"→ {d.get('recipient')}: {text}"
            return
        if kind == "board.changed":
            self.board_changed = True
            return
        if kind == "demo.note":  # a demo's narration: news of an actor, not an actor
            if isinstance(name, str) and name in self.actors:
                self.actors[name].latest = one_line(d.get("text", ""))
            return
        if kind.startswith("supervisor.") and isinstance(d.get("supervisor"), str):
            self._supervisor_event(kind, d)
            return
        if not isinstance(name, str):
            return
        row = self.row(name)
        match kind:
            case "model.requested":
                row.waiting_since = ts if isinstance(ts, int | float) else None
                row.retry = ""
            case "model.retrying":
                row.retry = (
                    f"attempt {d.get('attempt')} of {d.get('attempts')} failed"
                    f" ({one_line(d.get('reason', ''))})"
                )
            case "agent.text_delta":
                row.waiting_since, row.retry = None, ""
            case "actor.started":
                self._adopt(row, d.get("supervisor"))
                row.kind = str(d.get("kind", row.kind))
                row.state, row.task, row.doing = "running", None, ""
                row.waiting_since, row.retry = None, ""
                attempt = d.get("attempt")
                row.attempt = attempt if isinstance(attempt, int) else row.attempt
            case "actor.state":
                row.state = str(d.get("state", row.state))
                row.task = d.get("task")
                if row.state != "working":
                    row.doing = ""
            case "actor.crashed":
                row.state, row.reason = "crashed", one_line(d.get("reason", ""))
                row.waiting_since, row.retry = None, ""
            case "actor.restarted":
                row.state = "restarting"
                row.restarts += 1
            case "actor.exited":
                row.state = "exited"
            case "actor.stopped":
                row.state = "stopped"
                if d.get("reason"):
                    row.reason = one_line(d["reason"])
            case "actor.abandoned":
                row.state = "abandoned"
            case "agent.message":
                row.waiting_since, row.retry = None, ""
                row.turns += 1
                text = one_line(text_of(d.get("content")))
                if text:
                    row.latest = text
            case "agent.tool_call":
                data = d.get("input")
                row.doing = one_line(tool_label(str(d.get("name")), _dict(data)))

    def _adopt(self, row: ActorRow, supervisor: object) -> None:
        if isinstance(supervisor, str) and supervisor != row.name:
            self.row(supervisor).kind = "supervisor"
            row.supervisor = supervisor

    def _supervisor_event(self, kind: str, d: dict[str, Any]) -> None:
        sup = self.row(d["supervisor"])
        sup.kind = "supervisor"
        child = d.get("actor")
        if kind == "supervisor.gave_up":
            sup.state, sup.reason = "gave up", one_line(d.get("reason", ""))
            if isinstance(child, str):  # the child that crashed too often: stopped for good
                self.row(child).state = "stopped"
        elif kind == "supervisor.stopped":
            sup.state = "stopped"

    def set_mailboxes(self, counts: Mapping[str, int]) -> bool:
        """Take the unacknowledged message count of each actor's mailbox (actors not
        seen in an event yet are left out); whether any count changed."""
        changed = False
        for name, count in counts.items():
            row = self.actors.get(name)
            if row is not None and row.mail != count:
                row.mail, changed = count, True
        return changed

    def set_tasks(self, tasks: Iterable[Any]) -> list[TaskRow]:
        """Replace the board; returns the tasks that are new or changed status, owner
        or blockers since the last call."""
        old = {t.get("id"): t for t in self.tasks}
        self.tasks = [as_task_row(t) for t in tasks]
        self.board_changed = False
        keys = ("status", "owner", "blocked_by")
        changed = []
        for task in self.tasks:
            before = old.get(task.get("id"))
            if before is None or any(before.get(k) != task.get(k) for k in keys):
                changed.append(task)
        return changed


# -- one line per event, for logs ----------------------------------------------


def describe(event: Event | Mapping[str, Any]) -> str | None:
    """A plain one-line account of a significant event, or ``None`` for the rest."""
    kind, d = unpack(event)
    who = d.get("actor")
    reason = one_line(d.get("reason", ""))
    match kind:
        case "actor.crashed":
            return f"✗ {who} crashed: {reason}"
        case "actor.restarted":
            delay = d.get("delay")
            wait = f" in {delay:.1f}s" if isinstance(delay, int | float) and delay > 0 else ""
            return f"↻ {who} restarting (attempt {d.get('attempt', '?')}){wait}"
        case "actor.stopped" if reason:
            return f"■ {who} stopped: {reason}"
        case "actor.abandoned":
            return f"■ {who} abandoned: it did not stop within {d.get('timeout')}s"
        case "supervisor.gave_up":
            return f"✗ supervisor {d.get('supervisor')} gave up ({who}): {reason}"
        case "supervisor.escalated":
            return f"✗ {who} escalated to {d.get('supervisor')}: {reason}"
        case "model.retrying":
            return f"⧗ {who}: {retry_line(d)}"
        case "team.message":
            text = one_line(d.get("text", ""))
            return f"✉ {d.get('sender')} → {d.get('recipient')} [{d.get('kind')}]: {text}"
        case "demo.note":
            return f"· {who}: {one_line(d.get('text', ''))}"
    return None


#: Events whose line stays on screen above a live display: what went wrong and
#: what the supervisors did about it, which the next frame would otherwise hide.
LASTING = frozenset(
    {
        "actor.crashed",
        "actor.restarted",
        "actor.abandoned",
        "supervisor.gave_up",
        "supervisor.escalated",
    }
)


def lasting(event: Event | Mapping[str, Any]) -> bool:
    """Whether *event*'s line (:func:`describe`) is printed above a live display too
    (crashes, restarts, give-ups, escalations, and stops that give a reason)."""
    kind, d = unpack(event)
    return kind in LASTING or (kind == "actor.stopped" and bool(d.get("reason")))


def task_line(task: TaskRow) -> str:
    """A plain one-line account of a task's status."""
    owner = f" ({task['owner']})" if task.get("owner") else ""
    return f"▸ {task.get('id')} {task.get('status')}{owner}: {one_line(task.get('subject', ''))}"
