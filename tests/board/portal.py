"""The Redis board called from blocking code (Hypothesis rules): a Trio loop in a thread."""

from __future__ import annotations

import functools
import inspect
import queue
import threading
from typing import TYPE_CHECKING, Any, TypeVar

import trio

from coterie.backends.redis import open_redis_board
from coterie.backends.redis.client import parse_backend

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from coterie.backends.redis import RedisBoard

T = TypeVar("T")


class Portal:
    """A Trio loop in a thread, for calling the Redis board from blocking code."""

    def __init__(
        self,
        token: trio.lowlevel.TrioToken,
        nursery: trio.Nursery,
        stopping: trio.Event,
        thread: threading.Thread,
    ) -> None:
        self.token = token
        self.nursery = nursery
        self._stopping = stopping
        self._thread = thread

    @classmethod
    def start(cls) -> Portal:
        """Start the loop's thread; returns once the loop runs."""
        handed: queue.Queue[tuple[trio.lowlevel.TrioToken, trio.Nursery]] = queue.Queue()
        stopping = trio.Event()

        async def main() -> None:
            async with trio.open_nursery() as nursery:
                handed.put((trio.lowlevel.current_trio_token(), nursery))
                await stopping.wait()
                nursery.cancel_scope.cancel()

        thread = threading.Thread(target=trio.run, args=(main,), daemon=True)
        thread.start()
        token, nursery = handed.get()
        return cls(token, nursery, stopping, thread)

    def run(self, fn: Callable[..., Awaitable[T]], *args: Any) -> T:
        return trio.from_thread.run(fn, *args, trio_token=self.token)

    def open(self, url: str, run_id: str) -> SyncRedisBoard:
        async def start() -> Any:
            return await self.nursery.start(self._hold, url, run_id)

        board, closing = self.run(start)
        return SyncRedisBoard(self, board, closing)

    async def _hold(self, url: str, run_id: str, task_status: Any) -> None:
        closing = trio.Event()
        async with open_redis_board(parse_backend(url), run_id) as board:
            task_status.started((board, closing))
            await closing.wait()

    def stop(self) -> None:
        trio.from_thread.run_sync(self._stopping.set, trio_token=self.token)
        self._thread.join()


class SyncRedisBoard:
    """A :class:`RedisBoard`'s methods, blocking (each call runs in the portal's loop)."""

    def __init__(self, portal: Portal, board: RedisBoard, closing: trio.Event) -> None:
        self._portal = portal
        self._board = board
        self._closing = closing

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._board, name)
        if not inspect.iscoroutinefunction(method):
            return method  # an attribute, or a plain method: no loop needed

        def call(*args: Any, **kwargs: Any) -> Any:
            return self._portal.run(functools.partial(method, *args, **kwargs))

        call.__name__ = name
        return call

    def close(self) -> None:
        trio.from_thread.run_sync(self._closing.set, trio_token=self._portal.token)
