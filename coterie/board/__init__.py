"""The task board of a run (docs/teams.md): durable, atomic across threads and processes.

This package owns the board directory of a run (``<run_dir>/board/``): an
append-only log of operations (torn tail cut off, damaged records skipped
and reported), its flock, and the in-memory index rebuilt from the log. It
decides every rule of the board: sequential ids, ``blocked_by`` dependencies
without unknown ids or cycles, the legal status transitions, claims and
leases. It knows nothing of actors, mailboxes, supervision or agents and
must not import them: it uses only the shared durable log of
:mod:`coterie.journal` (record framing, torn-tail cuts, file lock, group
commit), through its public names, and the actor-name check of
``coterie.messages``; the team runtime and the team tools call it.

Errors come in two families: every refusal of a request (bad input, or a
change the rules do not allow now) is a :class:`BoardRefusal`, raised before
anything is written; a :class:`BoardError` means the board cannot serve (a
foreign file in its directory, a full or closed board).

Rules (details in ``_rules.py``): ``pending -> in_progress -> completed``,
``pending | in_progress -> failed``, ``in_progress -> pending`` (release,
lease expiry, update); completed and failed are final. A claim takes the
lowest-numbered ready task assigned to the worker, else the lowest unassigned
one, and leases it; a claim first returns expired leases to ``pending``. On
expiry an explicit assignment (``owner`` at creation or by ``update``) is
kept, so a restarted teammate gets its task back, and a claimed task goes
back to everyone; ``release`` always clears the owner.

The same board can live on a Redis/Valkey server instead
(``coterie/backends/redis/board.py``): the log is a stream, each process
folds it with the same pure state and rules (this package's public core:
``ops``, ``state``, ``log``, ``face``), and a change is appended by a
compare-and-append script that refuses it if the process had not read the
whole log (then it catches up and decides again); docs/scale-out.md.

Two faces of the file board, same semantics: :class:`Board` (blocking, for
threads, plain processes and tests) and :class:`AsyncBoard` (Trio; opened with
:func:`open_board`), which runs operations inline when the locks are free
and in a worker thread when they are not. Every change is fsynced before
its call returns, with concurrent callers sharing fsyncs. Time is
injectable (``now=``) wherever a lease is involved.
"""

from coterie.board._async import AsyncBoard, open_board
from coterie.board._board import Board, BoardStatistics
from coterie.board._errors import (
    BoardError,
    BoardLost,
    BoardRefusal,
    InvalidOwnerName,
    InvalidTaskField,
    InvalidTaskId,
    InvalidTransition,
    NotTaskOwner,
    TaskCycle,
    UnknownTask,
)
from coterie.board._rules import UNSET, Unset
from coterie.board._task import Lease, Task, TaskStatus, check_task_id
from coterie.board.face import TaskBoard
from coterie.board.log import BoardCorruption, LogEntry, read_log, rewind_log

__all__ = [
    "UNSET",
    "AsyncBoard",
    "Board",
    "BoardCorruption",
    "BoardError",
    "BoardLost",
    "BoardRefusal",
    "BoardStatistics",
    "InvalidOwnerName",
    "InvalidTaskField",
    "InvalidTaskId",
    "InvalidTransition",
    "Lease",
    "LogEntry",
    "NotTaskOwner",
    "Task",
    "TaskBoard",
    "TaskCycle",
    "TaskStatus",
    "UnknownTask",
    "Unset",
    "check_task_id",
    "open_board",
    "read_log",
    "rewind_log",
]
