"""Exceptions raised by coterie, split by whose fault they are.

Every exception subclasses :class:`CoterieError` *and* the nearest builtin, so
a broad ``except ValueError`` in user code still catches a bad actor name.
"""

from __future__ import annotations


class CoterieError(Exception):
    """Base of every error coterie raises on purpose."""


# -- the caller's fault: bad input, refused before anything is written ------


class InvalidActorName(CoterieError, ValueError):
    """An actor name does not match ``^[a-z0-9][a-z0-9_-]{0,63}$``."""


class UnknownActor(CoterieError, LookupError):
    """A message was addressed to an actor that has no mailbox in this run."""


class InvalidMessage(CoterieError, TypeError):
    """A message's body is not JSON-serialisable, or a field has the wrong type."""


# -- something on disk is wrong: not the caller's input, not a bug ----------


class MailboxError(CoterieError, OSError):
    """A mailbox directory holds something coterie did not write.

    Raised on open, before anything is changed, naming the offending file.
    Corruption *inside* a record log is never raised: it is skipped and
    reported (see :class:`coterie.mailbox.CorruptRecord`).
    """


class BackendLost(CoterieError, ConnectionError):
    """The backend's server no longer holds what the run keeps there (it was
    restarted without its data, or flushed): the run cannot go on, and says so in
    one line rather than a traceback."""


class HoldLost(BackendLost):
    """A write of this process was refused by the backend because another process
    holds what it wrote for (the run, or a teammate's hosting lease) since this
    one's hold lapsed: its late records never enter the other holder's copy."""


# -- runtime outcomes --------------------------------------------------------


class AskTimeout(CoterieError, TimeoutError):
    """No reply to an :meth:`ActorContext.ask` arrived within its timeout."""


class ShutdownExit(CoterieError, RuntimeError):
    """Raised by a supervised child to end with reason ``shutdown`` (OTP's ``exit(shutdown)``).

    Its supervisor counts it as neither a normal exit nor a crash: a permanent
    child is restarted, a transient or temporary one is not.
    """


class SupervisorGaveUp(ShutdownExit):
    """A supervisor exceeded its restart intensity and shut its children down.

    :meth:`Supervisor.run` raises it, so a top-level caller can tell. Under a
    parent supervisor it is an exit with reason ``shutdown`` (as in OTP): a
    permanent child supervisor is restarted, and its restarts count against
    the parent's intensity, which is how a failure escalates; a transient or
    temporary one is not restarted.
    """


class SupervisionError(CoterieError, RuntimeError):
    """A supervisor refused a caller's request; the supervisor itself carries on.

    Each subclass is one of the errors OTP's ``supervisor`` returns.
    """


class InvalidChildSpec(SupervisionError, TypeError):
    """``start_child`` was given something that is not a child spec."""


class AlreadyStarted(SupervisionError, ValueError):
    """``start_child``: a running child already has this name (OTP ``already_started``)."""


class AlreadyPresent(SupervisionError, ValueError):
    """``start_child``: a child that is not running is kept under this name
    (OTP ``already_present``); use ``restart_child`` or ``delete_child``."""


class NoSuchChild(SupervisionError, LookupError):
    """No child of that name (OTP ``not_found``)."""


class ChildIsRunning(SupervisionError):
    """``restart_child`` / ``delete_child`` on a child that is running or waiting to
    restart (OTP ``running`` / ``restarting``)."""


class TooManyChildren(SupervisionError):
    """A dynamic supervisor already holds ``max_children`` children (Elixir ``max_children``)."""


class FailedToStartChild(SupervisionError):
    """A child failed during its start phase (OTP ``failed_to_start_child``).

    Raised by ``start_child`` / ``restart_child`` (the supervisor keeps no new
    child and carries on), and by :meth:`Supervisor.run` when one of its
    initial children fails to start (its started children are stopped first).
    ``child`` names the child, ``reason`` says what it raised.
    """

    def __init__(self, child: str, reason: str) -> None:
        super().__init__(f"child {child!r} failed to start: {reason}")
        self.child = child
        self.reason = reason


class ChildNotRunning(SupervisionError):
    """A fault was aimed at a child that is not running right now (starting,
    stopping, waiting to restart, or kept after it ended)."""


class InjectedCrash(Exception):
    """What a child raises when a crash is injected into it (``coterie crash``).

    Not a :class:`CoterieError`: to its supervisor it is a crash like any bug's,
    restarted or not by the child's restart type and the restart intensity.
    """


class RunCancelled(CoterieError):
    """``coterie cancel RUN`` stopped a run held by an embedding program: raised from
    the session's block once the run has stopped (it is left resumable)."""
