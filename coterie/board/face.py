"""What every Trio face of the board offers, and the operations they share.

The file board's :class:`AsyncBoard` and the Redis board
(:class:`~coterie.board.RedisBoard`) both are a :class:`TaskBoard`; both get
its operations from :class:`BoardOperations`, which turns each call into an
operation of ``_ops`` and hands it to the face's own ``_mutate`` / ``_read``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, TypeVar

from coterie.board import ops as ops
from coterie.board._rules import UNSET, Unset

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from coterie.board._board import BoardStatistics
    from coterie.board._task import Task, TaskStatus
    from coterie.board.ops import Txn
    from coterie.board.state import BoardState

    TaskList = list[Task]

T = TypeVar("T")


class TaskBoard(Protocol):
    """The task board as the team, its tools and the CLI use it (docs/teams.md)."""

    async def create(
        self,
        subject: str,
        description: str,
        blocked_by: Iterable[str] = (),
        owner: str | None = None,
    ) -> Task: ...
    async def get(self, task_id: str) -> Task: ...
    async def list(self) -> TaskList: ...
    async def known(self) -> TaskList: ...
    async def update(
        self,
        task_id: str,
        *,
        status: TaskStatus | str | None = None,
        owner: str | Unset | None = ...,
        add_blocked_by: Iterable[str] = (),
        result: str | None = None,
        lease_seconds: float | None = None,
        now: float | None = None,
    ) -> Task: ...
    async def claim(
        self, worker: str, *, lease_seconds: float, now: float | None = None
    ) -> Task | None: ...
    async def renew(
        self, task_id: str, worker: str, *, lease_seconds: float, now: float | None = None
    ) -> Task: ...
    async def complete(self, task_id: str, worker: str, result: str) -> Task: ...
    async def fail(self, task_id: str, worker: str, reason: str) -> Task: ...
    async def release(self, task_id: str, worker: str) -> Task: ...
    async def expire_leases(self, now: float | None = None) -> TaskList: ...
    async def statistics(self) -> BoardStatistics: ...
    async def wait_for_change(self, after: int, *, poll_interval: float = ...) -> int: ...
    async def aclose(self) -> None: ...


class BoardOperations:
    """The board's operations, once, for every Trio face: a face gives ``_mutate``
    (run an operation of :mod:`._ops` as one atomic change, durable when it
    returns) and ``_read`` (a function of the state as it is now)."""

    async def _mutate(self, op: Callable[[Txn], T]) -> T:
        raise NotImplementedError

    async def _read(self, fn: Callable[[BoardState], T]) -> T:
        raise NotImplementedError

    async def create(
        self,
        subject: str,
        description: str,
        blocked_by: Iterable[str] = (),
        owner: str | None = None,
    ) -> Task:
        """:meth:`Board.create`."""
        return await self._mutate(ops.create(subject, description, blocked_by, owner))

    async def get(self, task_id: str) -> Task:
        """:meth:`Board.get`."""
        return await self._read(ops.lookup(task_id))

    async def list(self) -> TaskList:
        """:meth:`Board.list`."""
        return await self._read(ops.all_tasks)

    async def known(self) -> TaskList:
        """The tasks as this process last read the board, without reading it again
        where that is a round trip (the Redis board's): for a follower that
        :meth:`wait_for_change` has just brought up to date. Anything that decides
        on the board calls :meth:`list`, which sees every change made before it."""
        return await self._read_known(ops.all_tasks)

    async def _read_known(self, fn: Callable[[BoardState], T]) -> T:
        return await self._read(fn)

    async def update(
        self,
        task_id: str,
        *,
        status: TaskStatus | str | None = None,
        owner: str | Unset | None = UNSET,
        add_blocked_by: Iterable[str] = (),
        result: str | None = None,
        lease_seconds: float | None = None,
        now: float | None = None,
    ) -> Task:
        """:meth:`Board.update`."""
        return await self._mutate(
            ops.update(task_id, status, owner, add_blocked_by, result, lease_seconds, now)
        )

    async def claim(
        self, worker: str, *, lease_seconds: float, now: float | None = None
    ) -> Task | None:
        """:meth:`Board.claim`."""
        return await self._mutate(ops.claim(worker, lease_seconds, now))

    async def renew(
        self, task_id: str, worker: str, *, lease_seconds: float, now: float | None = None
    ) -> Task:
        """:meth:`Board.renew`."""
        return await self._mutate(ops.renew(task_id, worker, lease_seconds, now))

    async def complete(self, task_id: str, worker: str, result: str) -> Task:
        """:meth:`Board.complete`."""
        return await self._mutate(ops.complete(task_id, worker, result))

    async def fail(self, task_id: str, worker: str, reason: str) -> Task:
        """:meth:`Board.fail`."""
        return await self._mutate(ops.fail(task_id, worker, reason))

    async def release(self, task_id: str, worker: str) -> Task:
        """:meth:`Board.release`."""
        return await self._mutate(ops.release(task_id, worker))

    async def expire_leases(self, now: float | None = None) -> TaskList:
        """:meth:`Board.expire_leases`."""
        return await self._mutate(ops.expire(now))
