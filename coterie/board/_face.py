"""What every Trio face of the board offers: the file board's :class:`AsyncBoard`
and the Redis board (:class:`~coterie.board.RedisBoard`) both are one."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from collections.abc import Iterable

    from coterie.board._board import BoardStatistics
    from coterie.board._rules import Unset
    from coterie.board._task import Task, TaskStatus

    TaskList = list[Task]


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
