"""Workers against a real Redis server: teammates spread within capacity, a clean
stop hands them over at once, a lapsed lease stops the teammate, an ended one
is never started again."""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs
import pytest
import trio

from coterie.backends.redis.client import connect, parse_backend
from coterie.backends.redis.workers import WorkerRegistry
from coterie.workers import RETIRED, WorkerConfig, serve_worker

if TYPE_CHECKING:
    from collections.abc import Callable


@attrs.define
class Fake:
    """A hosted teammate that only records what happens to it."""

    run_id: str
    name: str
    log: list[str]
    ended: bool = False

    async def stop(self) -> None:
        self.log.append(f"stop {self.name}")
        await trio.lowlevel.checkpoint()


def starter(worker: str, log: list[str], hosted: dict[str, Fake]) -> Callable[..., object]:
    async def start(run_id: str, name: str) -> Fake:
        log.append(f"{worker} start {name}")
        hosted[name] = Fake(run_id, name, log)
        await trio.lowlevel.checkpoint()
        return hosted[name]

    return start


async def until(check: Callable[[], bool], timeout: float = 10) -> None:
    with trio.fail_after(timeout):
        while not check():
            await trio.sleep(0.02)


async def recording_worker(
    registry: WorkerRegistry,
    start: Callable[..., object],
    changes: list[tuple[str, str]],
    *,
    task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Worker ``wa`` (room for 4, short beats), its changes recorded as (what, name)."""
    await serve_worker(
        registry,
        WorkerConfig("wa", 4, beat=0.05, ttl=1),
        start,
        on_change=lambda what, run, name, detail: changes.append((what, name)),
        task_status=task_status,
    )


async def test_two_workers_share_a_run_within_capacity_and_hand_over_on_stop(
    redis_url: str,
) -> None:
    target = parse_backend(redis_url)
    log: list[str] = []
    a_has: dict[str, Fake] = {}
    b_has: dict[str, Fake] = {}
    async with connect(target) as client, trio.open_nursery() as nursery:
        registry = WorkerRegistry(client, target)
        await registry.want("r1", ("alice", "bob", "carol"), since=1.0)
        a = trio.CancelScope()

        async def worker_a() -> None:
            with a:
                await serve_worker(
                    registry, WorkerConfig("wa", 2, beat=0.05, ttl=1), starter("wa", log, a_has)
                )

        nursery.start_soon(worker_a)
        await until(lambda: len(a_has) == 2)
        await nursery.start(
            serve_worker,
            registry,
            WorkerConfig("wb", 2, beat=0.05, ttl=1),
            starter("wb", log, b_has),
        )
        await until(lambda: len(b_has) == 1)
        hosts = await registry.hosts("r1", ("alice", "bob", "carol"))
        assert sorted(hosts.values()) == ["wa", "wa", "wb"]  # nobody twice, within room
        assert set(a_has) | set(b_has) == {"alice", "bob", "carol"}
        a.cancel()  # a clean stop: its teammates stop and go to b at once (b has room for 1)
        await until(lambda: len(b_has) == 2)
        assert [w.id for w in await registry.workers()] == ["wb"]
        nursery.cancel_scope.cancel()
    assert log.count("stop alice") + log.count("stop bob") + log.count("stop carol") >= 2


async def test_a_lease_lost_stops_the_teammate_and_an_ended_one_stays_retired(
    redis_url: str,
) -> None:
    target = parse_backend(redis_url)
    log: list[str] = []
    has: dict[str, Fake] = {}
    changes: list[tuple[str, str]] = []
    async with connect(target) as client, trio.open_nursery() as nursery:
        registry = WorkerRegistry(client, target)
        await registry.want("r1", ("alice", "bob"), since=1.0)
        await nursery.start(recording_worker, registry, starter("wa", log, has), changes)
        await until(lambda: len(has) == 2)
        # Presumed dead: another worker took alice (her lease lapsed, say).
        await client.set(target.key("run", "r1", "host", "alice"), "wz")
        await until(lambda: ("lost", "alice") in changes)
        assert "stop alice" in log
        has["bob"].ended = True  # bob's supervisor gave up
        await until(lambda: ("ended", "bob") in changes)
        await trio.sleep(0.3)  # several rounds: nobody starts bob again
        assert log.count("wa start bob") == 1
        assert await registry.hosts("r1", ("alice", "bob")) == {"alice": "wz", "bob": RETIRED}
        nursery.cancel_scope.cancel()
    async with connect(target) as client:
        registry = WorkerRegistry(client, target)
        await registry.unwant("r1", ("alice", "bob"))  # the run stopped: bob is forgotten
        assert await registry.hosts("r1", ("alice", "bob")) == {"alice": "wz", "bob": None}


class RetireFailsOnce(WorkerRegistry):
    """A registry whose first retire finds the server away."""

    failed = False

    async def retire(self, run_id: str, teammate: str, worker_id: str) -> bool:
        if not self.failed:
            self.failed = True
            raise ConnectionResetError("the server went away")
        return await super().retire(run_id, teammate, worker_id)


async def test_a_retire_the_server_did_not_answer_is_retried(redis_url: str) -> None:
    target = parse_backend(redis_url)
    log: list[str] = []
    has: dict[str, Fake] = {}
    changes: list[tuple[str, str]] = []
    async with connect(target) as client, trio.open_nursery() as nursery:
        registry = RetireFailsOnce(client, target)
        await registry.want("r1", ("bob",), since=1.0)
        await nursery.start(recording_worker, registry, starter("wa", log, has), changes)
        await until(lambda: "bob" in has)
        has["bob"].ended = True
        await until(lambda: ("ended", "bob") in changes)
        assert registry.failed
        assert ("unreachable", "") in changes  # the first try, said
        assert await registry.hosts("r1", ("bob",)) == {"bob": RETIRED}
        assert log == ["wa start bob", "stop bob"]  # stopped once, never started again
        nursery.cancel_scope.cancel()


async def test_a_teammate_that_fails_to_start_is_tried_again_less_and_less_often(
    redis_url: str,
) -> None:
    target = parse_backend(redis_url)
    tries: list[float] = []

    async def broken(run_id: str, name: str) -> Fake:
        tries.append(trio.current_time())
        raise RuntimeError("its run cannot be read")

    async with connect(target) as client, trio.open_nursery() as nursery:
        registry = WorkerRegistry(client, target)
        await registry.want("r1", ("bob",), since=1.0)
        start = trio.current_time()
        await nursery.start(
            lambda task_status: serve_worker(
                registry, WorkerConfig("wa", 4, beat=0.05, ttl=1), broken,
                task_status=task_status,
            )
        )  # fmt: skip
        await trio.sleep(1.6)
        nursery.cancel_scope.cancel()
    # At every beat that would be about 32 tries; waiting 0.05, 0.1, 0.2, 0.4, 0.8 s
    # between them, 6 (a slow beat can only make it fewer).
    assert 3 <= len(tries) <= 6, [round(t - start, 2) for t in tries]


@pytest.mark.parametrize(
    ("options", "says"),
    [({"capacity": 0}, "capacity"), ({"beat": 5, "ttl": 5}, "shorter than its time to live")],
)
def test_a_worker_config_that_cannot_work_is_refused(options: dict[str, float], says: str) -> None:
    with pytest.raises(ValueError, match=says):
        WorkerConfig("w", **options)  # type: ignore[arg-type]
