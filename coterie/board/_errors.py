"""Exceptions the task board raises, split by whose fault they are.

Like :mod:`coterie.errors`, each subclasses :class:`~coterie.errors.CoterieError`
*and* the nearest builtin, so ``except ValueError`` still catches a bad id.

Two families. A :class:`BoardRefusal` is the board saying no to a request:
bad input, or a change its rules do not allow now. It is raised before
anything is written (a refused operation leaves the board exactly as it
was), so the caller can carry on: report it (to the model, as a tool error)
and try something else. A :class:`BoardError` means the board itself cannot
serve: its directory holds something coterie did not write, it is full, or
it was closed. ``except BoardRefusal`` catches every refusal and nothing else.
"""

from __future__ import annotations

from coterie.errors import BackendLost, CoterieError, InvalidActorName


class BoardRefusal(CoterieError):
    """The board refused a request; nothing was written, and the board is fine.

    Base of every refusal: :class:`InvalidTaskId`, :class:`UnknownTask`,
    :class:`InvalidTaskField`, :class:`TaskCycle`, :class:`InvalidOwnerName`
    (the caller's input) and :class:`InvalidTransition`, :class:`NotTaskOwner`
    (well-formed, but against the rules now). Differs from
    :class:`BoardError`, where the request may be fine but something on disk
    (or the board object) is wrong.
    """


# -- the caller's fault: bad input -------------------------------------------


class InvalidTaskId(BoardRefusal, ValueError):
    """A task id does not match ``^task_[1-9][0-9]{0,8}$``.

    Raised for a malformed id anywhere (``get``, ``update``, ``blocked_by``),
    before the board is read. A well-formed id that is not on the board raises
    :class:`UnknownTask` instead.
    """


class UnknownTask(BoardRefusal, LookupError):
    """A well-formed task id names no task on this board (yet)."""


class InvalidTaskField(BoardRefusal, ValueError):
    """A field has the wrong type or value: an empty subject, a ``blocked_by``
    given as one string, a non-positive lease, an unknown status name..."""


class InvalidOwnerName(BoardRefusal, InvalidActorName):
    """An ``owner`` or a worker is not a valid actor name.

    Also an :class:`~coterie.errors.InvalidActorName` (and so a ``ValueError``),
    with the same message, so handlers written for that keep working.
    """


class TaskCycle(BoardRefusal, ValueError):
    """Adding these blockers would make a task wait, directly or not, on itself.

    The message names the cycle, e.g. ``task_3 -> task_5 -> task_3``.
    """


# -- the rules of the board: the request is well-formed but not allowed now --


class InvalidTransition(BoardRefusal, ValueError):
    """The task's status does not allow this change.

    Examples: completing a task that was never started, starting one whose
    blockers are not all completed, changing a finished (completed or failed)
    task, or reassigning a task that is in progress.
    """


class NotTaskOwner(BoardRefusal, PermissionError):
    """A worker acted on a task it does not hold.

    Raised by ``renew``, ``complete``, ``fail`` and ``release`` when the task
    is not in progress under that worker, typically because its lease expired
    and the task went back to ``pending`` (and perhaps to another worker).
    Differs from :class:`InvalidTransition`, raised when the task is already
    finished.
    """


# -- something on disk is wrong ----------------------------------------------


class BoardError(CoterieError, OSError):
    """The board cannot serve: its directory holds something coterie did not
    write, it is full, or it was closed.

    Raised on open (naming the offending file, before anything is changed),
    by a ``create`` on a full board, or by any call after ``close``. It is not
    a :class:`BoardRefusal`: the request is not what is wrong. Corruption
    *inside* the log is never raised: damaged records are skipped (or a torn
    tail cut off) and reported through ``on_corruption``.
    """


class BoardLost(BoardError, BackendLost):
    """The board's server no longer holds the log this board read (restarted
    without its data, or flushed): the run cannot go on with it."""
