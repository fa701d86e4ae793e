"""Exceptions the task board raises, split by whose fault they are.

Like :mod:`coterie.errors`, each subclasses :class:`~coterie.errors.CoterieError`
*and* the nearest builtin, so ``except ValueError`` still catches a bad id.
Every one is raised before anything is written: a refused operation leaves
the board exactly as it was.
"""

from __future__ import annotations

from coterie.errors import CoterieError

# -- the caller's fault: bad input -------------------------------------------


class InvalidTaskId(CoterieError, ValueError):
    """A task id does not match ``^task_[1-9][0-9]{0,8}$``.

    Raised for a malformed id anywhere (``get``, ``update``, ``blocked_by``),
    before the board is read. A well-formed id that is not on the board raises
    :class:`UnknownTask` instead.
    """


class UnknownTask(CoterieError, LookupError):
    """A well-formed task id names no task on this board (yet)."""


class InvalidTaskField(CoterieError, ValueError):
    """A field has the wrong type or value: an empty subject, a ``blocked_by``
    given as one string, a non-positive lease, an unknown status name..."""


class TaskCycle(CoterieError, ValueError):
    """Adding these blockers would make a task wait, directly or not, on itself.

    The message names the cycle, e.g. ``task_3 -> task_5 -> task_3``.
    """


# -- the rules of the board: the request is well-formed but not allowed now --


class InvalidTransition(CoterieError, ValueError):
    """The task's status does not allow this change.

    Examples: completing a task that was never started, starting one whose
    blockers are not all completed, changing a finished (completed or failed)
    task, or reassigning a task that is in progress.
    """


class NotTaskOwner(CoterieError, PermissionError):
    """A worker acted on a task it does not hold.

    Raised by ``renew``, ``complete``, ``fail`` and ``release`` when the task
    is not in progress under that worker, typically because its lease expired
    and the task went back to ``pending`` (and perhaps to another worker).
    Differs from :class:`InvalidTransition`, raised when the task is already
    finished.
    """


# -- something on disk is wrong ----------------------------------------------


class BoardError(CoterieError, OSError):
    """The board directory holds something coterie did not write, or is full.

    Raised on open, naming the offending file, before anything is changed.
    Corruption *inside* the log is never raised: damaged records are skipped
    (or a torn tail cut off) and reported through ``on_corruption``.
    """
