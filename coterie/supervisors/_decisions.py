"""The vocabulary of the restart state machine: child states, snapshots, decisions.

Plain immutable data with no I/O (no Trio import), shared by :mod:`._state`,
which produces it, and :mod:`._driver`, which acts on it.
"""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING

import attrs

from coterie.errors import CoterieError

if TYPE_CHECKING:
    from coterie.supervisors._spec import Restart

__all__ = [
    "ChildInfo",
    "ChildState",
    "Decision",
    "GiveUp",
    "RemoveChild",
    "RestartChild",
    "ShutDown",
    "StartChild",
    "StopChildren",
    "SupervisionProtocolError",
]


class SupervisionProtocolError(CoterieError, RuntimeError):
    """The driver fed the machine an event that is impossible in its state.

    This is a bug in the driver (or the test), never a child's failure.
    """


class ChildState(enum.StrEnum):
    """Where a child is in its life, as shown by ``which_children()``."""

    STARTING = "starting"
    RUNNING = "running"
    RESTARTING = "restarting"  # planned to start again, waiting for its delay or for stops
    STOPPING = "stopping"
    STOPPED = "stopped"
    CRASHED = "crashed"


@attrs.frozen
class ChildInfo:
    """A snapshot of one child, for displays and tests."""

    name: str
    state: ChildState
    restarts: int
    last_reason: str | None
    kind: str
    restart: Restart


# -- decisions ----------------------------------------------------------------


@attrs.frozen
class StartChild:
    """Start *name* now; report it with ``child_started``. ``attempt`` 0 is the first start."""

    name: str
    attempt: int


@attrs.frozen
class RestartChild:
    """*name* will start again after *delay* seconds (a ``StartChild`` follows)."""

    name: str
    attempt: int
    delay: float


@attrs.frozen
class StopChildren:
    """Stop these children one after the other, in this order; confirm each."""

    names: tuple[str, ...]


@attrs.frozen
class RemoveChild:
    """Forget *name*; it is no longer a child (its name may be reused)."""

    name: str


@attrs.frozen
class GiveUp:
    """Restart intensity exceeded; all children are stopped. The supervisor fails."""

    reason: str
    child: str


@attrs.frozen
class ShutDown:
    """All children are stopped; the supervisor ends normally."""

    reason: str


Decision = StartChild | RestartChild | StopChildren | RemoveChild | GiveUp | ShutDown
