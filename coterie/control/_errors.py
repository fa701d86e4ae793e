"""Why a fault was not injected: the refusals of :func:`coterie.control.inject`.

Each carries the exit code the CLI's ``crash`` / ``stop`` / ``cancel`` use
(1: the run could not take it now; 2: the request itself is wrong). An
unknown run is :class:`coterie.runs.UnknownRun`, as for every run command.
"""

from __future__ import annotations

from typing import ClassVar

from coterie.errors import CoterieError

__all__ = ["ControlError", "FaultRefused", "NoReply", "NoSuchActor", "RunNotRunning"]


class ControlError(CoterieError):
    """A fault was not injected; :attr:`exit_code` is the CLI's exit code."""

    exit_code: ClassVar[int] = 1


class RunNotRunning(ControlError):
    """No process is running the run: there is nothing to inject a fault into."""


class NoReply(ControlError, TimeoutError):
    """The run did not answer within the timeout (it may be stuck, or stopping)."""


class NoSuchActor(ControlError, LookupError):
    """No actor of that name in the run's supervision tree; ``known`` lists the
    actors there are, ``closest`` the likeliest one meant (or None)."""

    exit_code: ClassVar[int] = 2

    def __init__(self, message: str, known: tuple[str, ...], closest: str | None) -> None:
        super().__init__(message)
        self.known = known
        self.closest = closest


class FaultRefused(ControlError):
    """The run refused the fault: a bad request or a target that may not take one
    (exit 2), or an actor that is not running right now (exit 1)."""

    def __init__(self, message: str, exit_code: int) -> None:
        super().__init__(message)
        self.code = exit_code
