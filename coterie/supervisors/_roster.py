"""The children of one supervisor as its restart machine sees them (pure bookkeeping).

A :class:`Roster` holds the child records in start order, the queue of
children due to start, the one start in flight and the restart timers. It
decides nothing: :mod:`._state` applies the rules and uses this for the
records. No Trio, no clock, no I/O.
"""

from __future__ import annotations

import bisect
import enum
import itertools
from collections import deque
from typing import TYPE_CHECKING

import attrs

from coterie.errors import NoSuchChild
from coterie.supervisors._decisions import ChildCounts, ChildInfo, ChildState, RemoveChild

if TYPE_CHECKING:
    from collections.abc import Iterator

    from coterie.supervisors._spec import ChildSpec

__all__ = ["LIVE", "RESTARTS", "Child", "Exit", "Roster", "prune"]


class Exit(enum.Enum):
    """How a child ended on its own (OTP exit reasons ``normal``, ``shutdown``, other)."""

    NORMAL = "exited"
    SHUTDOWN = "shut down"
    CRASH = "crashed"


# Whether a child that ended is started again, by (restart type, how it ended).
RESTARTS: dict[tuple[str, Exit], bool] = {
    ("permanent", Exit.NORMAL): True,
    ("permanent", Exit.SHUTDOWN): True,
    ("permanent", Exit.CRASH): True,
    ("transient", Exit.NORMAL): False,
    ("transient", Exit.SHUTDOWN): False,
    ("transient", Exit.CRASH): True,
    ("temporary", Exit.NORMAL): False,
    ("temporary", Exit.SHUTDOWN): False,
    ("temporary", Exit.CRASH): False,
}
"""The restart table, indexed by ``(spec.restart, how)`` (restart types are strings)."""

LIVE = frozenset(
    {ChildState.STARTING, ChildState.RUNNING, ChildState.STOPPING, ChildState.RESTARTING}
)
"""States of a child that has not ended for good (running, or waiting to restart)."""


@attrs.define(eq=False)
class Child:
    """The machine's record of one child."""

    spec: ChildSpec
    seq: int
    state: ChildState = ChildState.STARTING
    restarts: int = 0
    attempt: int = 0
    last_reason: str | None = None
    #: this child's own restart times within the period: n for its backoff
    recent: deque[float] = attrs.field(factory=deque)
    #: its next start answers a caller (start_child, restart_child): a failure is not a crash
    answers: bool = True
    #: a new child that fails its first start is forgotten; a known one is kept
    ever_started: bool = False
    #: the restart plan it waits in, while RESTARTING
    plan: int | None = None

    @property
    def name(self) -> str:
        """The child's name (from its spec)."""
        return self.spec.name


@attrs.define
class Roster:
    """Child records in start order, the start queue and the restart timers."""

    children: dict[str, Child] = attrs.field(factory=dict)
    queue: list[Child] = attrs.field(factory=list)  # due to start, in start order
    scheduled: dict[str, float] = attrs.field(factory=dict)  # RESTARTING child -> due time
    in_flight: Child | None = None
    _seq: itertools.count[int] = attrs.field(factory=itertools.count)

    def __iter__(self) -> Iterator[Child]:
        return iter(self.children.values())

    def __reversed__(self) -> Iterator[Child]:
        return reversed(self.children.values())

    def __len__(self) -> int:
        return len(self.children)

    def get(self, name: str) -> Child:
        """The record of *name*; :class:`NoSuchChild` if there is none."""
        child = self.children.get(name)
        if child is None:
            raise NoSuchChild(f"no child named {name!r}")
        return child

    def add(self, spec: ChildSpec) -> Child:
        """A new record, last in start order, queued to start."""
        child = self.children[spec.name] = Child(spec, next(self._seq))
        self.queue.append(child)
        return child

    def remove(self, child: Child) -> list[RemoveChild]:
        """Forget *child*."""
        del self.children[child.name]
        self.scheduled.pop(child.name, None)
        return [RemoveChild(child.name)]

    def enqueue(self, child: Child) -> None:
        """Queue *child* to start, in its place in start order."""
        child.state, child.plan = ChildState.STARTING, None
        bisect.insort(self.queue, child, key=lambda c: c.seq)

    def queue_due(self, now: float) -> None:
        """Queue the children whose restart delay is over."""
        for name in [name for name, at in self.scheduled.items() if at <= now]:
            del self.scheduled[name]
            self.enqueue(self.children[name])

    def start_next(self) -> Child | None:
        """Take the first queued child as the start in flight."""
        if self.in_flight is not None or not self.queue:
            return None
        child = self.in_flight = self.queue.pop(0)
        return child

    def settle(self, name: str) -> Child | None:
        """End the start in flight, if it is *name*'s; None otherwise."""
        child = self.in_flight
        if child is None or child.name != name:
            return None
        self.in_flight = None
        return child

    def drop_pending(self) -> Child | None:
        """Cancel every queued start and timer; return the start in flight (still running)."""
        in_flight, self.in_flight = self.in_flight, None
        self.scheduled.clear()
        for child in self.queue:
            child.state = ChildState.STOPPED  # queued, never launched
        self.queue.clear()
        return in_flight

    def next_deadline(self) -> float | None:
        """The earliest restart due time, or None."""
        return min(self.scheduled.values()) if self.scheduled else None

    def infos(self) -> list[ChildInfo]:
        """A snapshot of every child, in start order."""
        return [
            ChildInfo(c.name, c.state, c.restarts, c.last_reason, c.spec.kind, c.spec.restart)
            for c in self.children.values()
        ]

    def counts(self) -> ChildCounts:
        """OTP's ``count_children``."""
        supervisors = sum(c.spec.kind == "supervisor" for c in self.children.values())
        return ChildCounts(
            specs=len(self.children),
            active=sum(c.state.running for c in self.children.values()),
            supervisors=supervisors,
            workers=len(self.children) - supervisors,
        )


def prune(times: deque[float], threshold: float) -> None:
    """Drop the times before *threshold* (oldest first)."""
    while times and times[0] < threshold:
        times.popleft()
