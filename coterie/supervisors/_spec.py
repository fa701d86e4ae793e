"""What a supervisor is told to do: strategies, restart types, backoff, child specs.

Everything here is immutable and free of I/O; both the pure restart logic
(:mod:`._state`) and the Trio driver (:mod:`._driver`) read these objects.
"""

from __future__ import annotations

import enum
import math
from typing import TYPE_CHECKING, Literal

import attrs

from coterie.errors import InvalidChildSpec

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Iterable

__all__ = [
    "AutoShutdown",
    "Backoff",
    "ChildSpec",
    "Restart",
    "Strategy",
    "check_children",
    "check_intensity",
]


class Strategy(enum.StrEnum):
    """Which children are restarted when one of them has to be restarted (OTP names)."""

    ONE_FOR_ONE = "one_for_one"
    """Only the child that exited."""
    ONE_FOR_ALL = "one_for_all"
    """Every child: the others are stopped (reverse start order), then all start again."""
    REST_FOR_ONE = "rest_for_one"
    """The child that exited and every child started after it."""


class Restart(enum.StrEnum):
    """When a child that exited is started again (OTP restart types)."""

    PERMANENT = "permanent"
    """Always, whether it crashed or returned."""
    TRANSIENT = "transient"
    """Only after a crash; after a normal or ``shutdown`` exit its spec is kept, not running."""
    TEMPORARY = "temporary"
    """Never; it is forgotten however it ended, even when a sibling's failure stopped it."""


class AutoShutdown(enum.StrEnum):
    """When a supervisor shuts itself down because *significant* children ended (OTP 24)."""

    NEVER = "never"
    """Significant children are not allowed."""
    ANY_SIGNIFICANT = "any_significant"
    """As soon as one significant child ends on its own and is not restarted."""
    ALL_SIGNIFICANT = "all_significant"
    """When the last remaining significant child ends on its own and is not restarted."""


def _non_negative(_inst: object, attribute: attrs.Attribute[float], value: float) -> None:
    if not value >= 0:  # written this way round so that NaN is refused too
        raise ValueError(f"{attribute.name} must be >= 0, got {value!r}")


@attrs.frozen
class Backoff:
    """Exponential delay before restarting a child that keeps failing.

    The n-th restart of a child within the supervisor's ``period`` waits
    ``min(max, initial * factor ** (n - 1))`` seconds; a child whose earlier
    restarts have all left the period starts again from ``initial``.
    """

    initial: float = attrs.field(default=0.1, validator=_non_negative)
    factor: float = attrs.field(default=2.0)
    max: float = attrs.field(default=30.0, validator=_non_negative)

    @factor.validator
    def _check_factor(self, _attribute: attrs.Attribute[float], value: float) -> None:
        if not value >= 1:
            raise ValueError(f"factor must be >= 1, got {value!r}")

    def delay(self, n: int) -> float:
        """Seconds to wait before the *n*-th consecutive restart (``n >= 1``; 0 for less)."""
        if n < 1:
            return 0.0
        try:
            return min(self.max, self.initial * self.factor ** (n - 1))
        except OverflowError:  # factor ** n beyond float range: the cap applies anyway
            return self.max


def _check_name(_inst: object, _attribute: attrs.Attribute[str], value: str) -> None:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"a child needs a non-empty name, got {value!r}")


def _check_timeout(_inst: object, _attribute: attrs.Attribute[float], value: float | None) -> None:
    if value is not None and not value >= 0:
        raise ValueError(f"shutdown_timeout must be >= 0 (math.inf to wait forever), got {value!r}")


#: A worker's shutdown timeout when its spec gives none (OTP's 5000 ms).
WORKER_SHUTDOWN_TIMEOUT = 5.0


@attrs.frozen
class ChildSpec:
    """How to run one child of a supervisor.

    ``start`` is called every time the child (re)starts; the awaitable it
    returns *is* the child: returning means a normal exit, raising
    :class:`~coterie.errors.ShutdownExit` (or :class:`SupervisorGaveUp`) an
    exit with reason ``shutdown``, raising any other :class:`Exception` a
    crash.

    With ``reports_started`` the child has a start phase, as an OTP child's
    ``init``: ``start`` is called with ``task_status=`` (Trio's
    ``nursery.start`` idiom) and the child is started once it calls
    ``task_status.started()``. If it raises before that, the start failed
    (``start_child`` raises :class:`~coterie.errors.FailedToStartChild`); if
    it returns before that, it *ignored* the start (OTP ``ignore``: kept, not
    running). Without it the child counts as started as soon as it is
    launched. Nested supervisors (:meth:`Supervisor.as_child`) always report.

    ``shutdown_timeout`` bounds how long a stop waits for the child's
    clean-up after its scope is cancelled (0: OTP's ``brutal_kill``;
    ``math.inf``: wait forever); left out, it is 5 s for a worker and
    infinite for a ``kind="supervisor"`` child, as in OTP. ``significant``
    children drive the supervisor's :class:`AutoShutdown`; a permanent child
    cannot be significant, since it never ends on its own (as in OTP).
    ``supervisor`` is the :class:`Supervisor` a ``kind="supervisor"`` child
    runs, so that a fault can be aimed at a child anywhere below.
    """

    name: str = attrs.field(validator=_check_name)
    start: Callable[..., Awaitable[object]] = attrs.field()
    restart: Restart = attrs.field(default=Restart.PERMANENT, converter=Restart)
    _shutdown_timeout: float | None = attrs.field(
        default=None, validator=_check_timeout, alias="shutdown_timeout"
    )
    kind: Literal["worker", "supervisor"] = attrs.field(default="worker")
    significant: bool = attrs.field(default=False)
    reports_started: bool = attrs.field(default=False)
    #: The supervisor this child runs, if it runs one (set by ``as_child`` and
    #: ``isolated``): walks over the tree (``Supervisor.find``) go through it.
    supervisor: object = attrs.field(default=None, eq=False, repr=False)

    @property
    def shutdown_timeout(self) -> float:
        """Seconds a stop waits for the child's clean-up (the default resolved by kind)."""
        if self._shutdown_timeout is not None:
            return self._shutdown_timeout
        return math.inf if self.kind == "supervisor" else WORKER_SHUTDOWN_TIMEOUT

    @start.validator
    def _check_start(self, _attribute: attrs.Attribute[object], value: object) -> None:
        if not callable(value):
            raise TypeError(f"child {self.name!r}: start must be callable, got {value!r}")

    @kind.validator
    def _check_kind(self, _attribute: attrs.Attribute[str], value: str) -> None:
        if value not in ("worker", "supervisor"):
            raise ValueError(f"child {self.name!r}: kind must be 'worker' or 'supervisor'")

    @significant.validator
    def _check_significant(self, _attribute: attrs.Attribute[bool], value: bool) -> None:
        if value and self.restart is Restart.PERMANENT:
            raise ValueError(
                f"child {self.name!r}: a permanent child cannot be significant "
                "(it is always restarted, so it never ends on its own)"
            )


def check_children(specs: Iterable[object], auto_shutdown: AutoShutdown) -> None:
    """Raise unless every item is a :class:`ChildSpec` (:class:`InvalidChildSpec`), the
    names are unique and significance is allowed (:class:`ValueError`)."""
    seen: set[str] = set()
    for spec in specs:
        if not isinstance(spec, ChildSpec):
            raise InvalidChildSpec(f"not a ChildSpec: {spec!r}")
        if spec.name in seen:
            raise ValueError(f"duplicate child name {spec.name!r}")
        seen.add(spec.name)
        if spec.significant and auto_shutdown is AutoShutdown.NEVER:
            raise ValueError(
                f"child {spec.name!r} is significant but auto_shutdown is 'never' "
                "(pick any_significant or all_significant)"
            )


def check_intensity(max_restarts: int, period: float) -> None:
    """Raise :class:`ValueError` for a restart intensity OTP would refuse."""
    if isinstance(max_restarts, bool) or not isinstance(max_restarts, int) or max_restarts < 0:
        raise ValueError(f"max_restarts must be an int >= 0, got {max_restarts!r}")
    if not (period > 0 and math.isfinite(period)):
        raise ValueError(f"period must be a finite number of seconds > 0, got {period!r}")
