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
    "ChildCounts",
    "ChildInfo",
    "ChildState",
    "Decision",
    "GiveUp",
    "InitFailed",
    "RemoveChild",
    "RestartChild",
    "ShutDown",
    "StartChild",
    "StartFailed",
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
    STOPPED = "stopped"  # not running; its spec is kept (OTP: pid ``undefined``)
    CRASHED = "crashed"  # not running after a crash or a failed restart_child; spec kept

    @property
    def running(self) -> bool:
        """True while the child has a task (OTP: a pid)."""
        return self in (ChildState.STARTING, ChildState.RUNNING, ChildState.STOPPING)


@attrs.frozen
class ChildInfo:
    """A snapshot of one child, for displays and tests."""

    name: str
    state: ChildState
    restarts: int
    last_reason: str | None
    kind: str
    restart: Restart

    @property
    def running(self) -> bool:
        """True while the child has a task; False for a kept spec or a pending restart."""
        return self.state.running


@attrs.frozen
class ChildCounts:
    """What OTP's ``count_children`` returns: child specs, running children, and specs by kind."""

    specs: int
    active: int
    supervisors: int
    workers: int


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
    """Stop these children one after the other, in this order; confirm each.

    With ``together`` (a dynamic supervisor's shutdown, as OTP's
    ``simple_one_for_one``) they are all cancelled at once and waited for
    side by side, each within its own timeout.
    """

    names: tuple[str, ...]
    together: bool = False


@attrs.frozen
class StartFailed:
    """The start a caller asked for (``start_child``, ``restart_child``) failed; answer it."""

    name: str
    reason: str


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
class InitFailed:
    """An initial child failed to start; the others are stopped. The supervisor's start fails."""

    child: str
    reason: str


@attrs.frozen
class ShutDown:
    """All children are stopped; the supervisor ends normally."""

    reason: str


Decision = (
    StartChild
    | RestartChild
    | StopChildren
    | RemoveChild
    | StartFailed
    | GiveUp
    | InitFailed
    | ShutDown
)
Outcome = GiveUp | InitFailed | ShutDown
"""The decisions that finish a machine."""
