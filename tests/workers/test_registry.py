"""The workers' keys on a real Redis server: heartbeats lapse, one lease per teammate."""

from __future__ import annotations

import trio

from coterie.backends.redis.client import connect, parse_backend
from coterie.backends.redis.workers import WorkerRegistry
from coterie.workers import RETIRED, Wanted, WorkerInfo


async def test_a_heartbeat_lapses_and_the_worker_is_gone(redis_url: str) -> None:
    target = parse_backend(redis_url)
    async with connect(target) as client:
        registry = WorkerRegistry(client, target)
        await registry.heartbeat(WorkerInfo("w1", 2, host="a"), ttl=1.0)
        await registry.heartbeat(WorkerInfo("w2", 1, host="b"), ttl=30)
        assert [w.id for w in await registry.workers()] == ["w1", "w2"]
        with trio.fail_after(10):  # real time: the server expires the key
            while [w.id for w in await registry.workers()] != ["w2"]:
                await trio.sleep(0.1)
        await registry.leave("w2")
        assert await registry.workers() == []


async def test_two_workers_racing_for_one_teammate_one_wins(redis_url: str) -> None:
    target = parse_backend(redis_url)
    async with connect(target) as client:
        registry = WorkerRegistry(client, target)
        won: list[str] = []

        async def claim(worker: str) -> None:
            if await registry.try_host("r1", "alice", worker, ttl=30):
                won.append(worker)

        async with trio.open_nursery() as nursery:
            for i in range(8):
                nursery.start_soon(claim, f"w{i}")
        assert len(won) == 1
        assert await registry.hosts("r1", ("alice", "bob")) == {"alice": won[0], "bob": None}


async def test_only_the_holder_renews_or_releases_and_a_lapsed_lease_is_lost(
    redis_url: str,
) -> None:
    target = parse_backend(redis_url)
    async with connect(target) as client:
        registry = WorkerRegistry(client, target)
        assert await registry.try_host("r1", "bob", "w1", ttl=30)
        assert await registry.renew([("r1", "bob")], "w2", ttl=30) == [False]
        # Every lease of a worker in one call, each answered on its own.
        assert await registry.try_host("r1", "carol", "w2", ttl=30)
        leases = [("r1", "bob"), ("r1", "carol"), ("r1", "dave")]
        assert await registry.renew(leases, "w1", ttl=30) == [True, False, False]
        assert await registry.renew(leases, "w2", ttl=30) == [False, True, False]
        assert not await registry.release("r1", "bob", "w2")
        assert await registry.renew([("r1", "bob")], "w1", ttl=0.05) == [True]
        await trio.sleep(0.15)
        # w1 was presumed dead: w2 takes over, and w1 coming back cannot take it away.
        assert await registry.try_host("r1", "bob", "w2", ttl=30)
        assert await registry.renew([("r1", "bob")], "w1", ttl=30) == [False]
        assert not await registry.release("r1", "bob", "w1")
        assert await registry.hosts("r1", ("bob",)) == {"bob": "w2"}
        assert await registry.release("r1", "bob", "w2")
        assert await registry.hosts("r1", ("bob",)) == {"bob": None}


async def test_runs_that_want_hosts_oldest_first_until_they_end(redis_url: str) -> None:
    target = parse_backend(redis_url)
    async with connect(target) as client:
        registry = WorkerRegistry(client, target)
        await registry.want("r2", ("carol",), since=20.0)
        await registry.want("r1", ("alice", "bob"), since=10.0)
        assert await registry.wanted() == [
            Wanted("r1", ("alice", "bob"), 10.0),
            Wanted("r2", ("carol",), 20.0),
        ]
        await registry.unwant("r1")
        assert [w.run_id for w in await registry.wanted()] == ["r2"]


async def test_a_retire_after_the_run_stopped_leaves_no_key(redis_url: str) -> None:
    """The worker's retire and the run's stop race: either order, nothing is left."""
    target = parse_backend(redis_url)
    async with connect(target) as client:
        registry = WorkerRegistry(client, target)
        await registry.want("r1", ("alice", "bob"), since=1.0)
        for name in ("alice", "bob"):
            assert await registry.try_host("r1", name, "w1", 5.0)
        assert await registry.retire("r1", "alice", "w1")  # while the run wants hosts
        assert await registry.hosts("r1", ("alice",)) == {"alice": RETIRED}
        await registry.unwant("r1", ("alice", "bob"))
        assert await registry.retire("r1", "bob", "w1")  # after the run stopped
        assert not await registry.retire("r1", "bob", "w1")  # not its lease any more
        assert await registry.hosts("r1", ("alice", "bob")) == {"alice": None, "bob": None}
