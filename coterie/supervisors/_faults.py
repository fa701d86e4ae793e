"""Faults injected into a running child: what they are and what the child's end becomes.

A fault is aimed at one running child (:meth:`Supervisor.inject`): its scope
is cancelled, and once its task has finished its clean-up, :func:`end_of`
decides how the incarnation ended, as a pure function of the fault and of
what the task itself raised. The supervisor then handles that end like any
other: a crash is restarted or not by the child's restart type and counts
towards the restart intensity; a normal exit restarts a permanent child (OTP),
not a transient or temporary one.
"""

from __future__ import annotations

import enum

import attrs

from coterie.errors import InjectedCrash

__all__ = ["DEFAULT_REASON", "Fault", "Injection", "end_of"]

#: The reason of a crash injected without one.
DEFAULT_REASON = "crash injected"


class Fault(enum.StrEnum):
    """What an injection makes a running child do."""

    CRASH = "crash"
    """Raise :class:`~coterie.errors.InjectedCrash` (its reason), as a bug would."""
    STOP = "stop"
    """Return: a normal exit."""


@attrs.frozen
class Injection:
    """One fault aimed at one incarnation of a child."""

    fault: Fault = attrs.field(converter=Fault)
    reason: str = DEFAULT_REASON


def end_of(injection: Injection, raised: BaseException | None) -> BaseException | None:
    """How an injected incarnation ended: the error its supervisor sees (None: normal).

    *raised* is what the task raised while it was being cancelled (None if it
    returned). A crash always ends with :class:`InjectedCrash` (what the task
    raised kept as its context). A stop is a normal exit, unless the clean-up
    itself failed with an error, which is then a crash of its own. Whatever is
    not an :class:`Exception` (a ``KeyboardInterrupt``) passes through untouched.
    """
    if raised is not None and not isinstance(raised, Exception):
        return raised
    if injection.fault is Fault.CRASH:
        crash = InjectedCrash(injection.reason)
        crash.__context__ = raised
        return crash
    return raised
