"""The workers' keys on Redis: heartbeats, wanted runs, hosting leases.

Keys, under the backend's prefix (``coterie:`` by default):

* ``workers``: the set of worker ids ever seen (pruned as heartbeats lapse);
* ``worker:<id>``: the worker's :class:`~coterie.workers.WorkerInfo` as JSON,
  with a time to live; the worker is alive while it exists;
* ``remote``: the runs that want their teammates hosted (sorted by when they
  asked), and ``run:<id>:wanted``: the teammates of each, as JSON;
* ``run:<id>:host:<teammate>``: the id of the worker hosting it, with the
  same time to live as a heartbeat. Taken with ``SET NX`` (two workers
  racing for one teammate: exactly one wins), renewed and released only by
  its holder (a script compares before it touches the key), so a worker
  that was presumed dead and comes back cannot take a lease from its
  successor. A teammate that ended for good is marked ``retired`` (no time
  to live), so that no worker starts it again.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from coterie.backends.redis.client import server_errors
from coterie.workers.placement import RETIRED, Wanted, WorkerInfo

if TYPE_CHECKING:
    from collections.abc import Sequence

    import coredis

    from coterie.backends.redis.client import RedisTarget

__all__ = ["FAILURE_TTL", "WorkerRegistry", "lease_key"]

#: Seconds a worker's reason for not starting a teammate is kept for the run's lead.
FAILURE_TTL = 600.0


# KEYS: the leases, ARGV[1] the holder, ARGV[2] ms: extend only one's own leases;
# for each, 1 if it was extended, 0 if it is not the holder's (any more).
_RENEW = """
local kept = {}
for i, key in ipairs(KEYS) do
  if redis.call('GET', key) == ARGV[1] then
    kept[i] = redis.call('PEXPIRE', key, ARGV[2])
  else
    kept[i] = 0
  end
end
return kept
"""
# KEYS[1] the lease, KEYS[2] the run's wanted list, ARGV[1] the holder: mark one's
# own lease retired while the run wants hosts; once it wants none (it stopped, and
# unwant forgot its retired teammates) drop the lease instead, so that a retire
# landing after the run's stop leaves no key behind.
_RETIRE = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
if redis.call('EXISTS', KEYS[2]) == 1 then
  redis.call('SET', KEYS[1], 'retired')
else
  redis.call('DEL', KEYS[1])
end
return 1
"""
# KEYS[1] the lease, ARGV[1] the holder: drop only one's own lease.
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
"""


class WorkerRegistry:
    """Reads and writes the workers' keys for one backend (see the module docstring)."""

    def __init__(self, client: coredis.Redis[bytes], target: RedisTarget) -> None:
        self._client = client
        self._target = target
        self._renew = client.register_script(_RENEW)
        self._release = client.register_script(_RELEASE)
        self._retire = client.register_script(_RETIRE)

    @property
    def errors(self) -> tuple[type[BaseException], ...]:
        """What a call raises while the server cannot be reached."""
        return server_errors()

    def _key(self, *parts: str) -> str:
        return self._target.key(*parts)

    def _lease(self, run_id: str, teammate: str) -> str:
        return lease_key(self._target, run_id, teammate)

    # -- workers -----------------------------------------------------------------

    async def heartbeat(self, info: WorkerInfo, ttl: float) -> None:
        """*info* is alive for *ttl* seconds more (one round trip)."""
        from coterie.backends.redis.refusals import transaction

        def fill(pipe: Any) -> None:
            pipe.sadd(self._key("workers"), [info.id])
            pipe.set(self._key("worker", info.id), json.dumps(info.to_json()), px=_ms(ttl))

        await transaction(self._client, fill)

    async def leave(self, worker_id: str) -> None:
        """A worker that stops cleanly says so at once (its leases go with it)."""
        await self._client.delete([self._key("worker", worker_id)])
        await self._client.srem(self._key("workers"), [worker_id])

    async def workers(self) -> list[WorkerInfo]:
        """The workers alive now (those whose heartbeat has not lapsed)."""
        ids = sorted(m.decode() for m in await self._client.smembers(self._key("workers")))
        if not ids:
            return []
        found = await self._client.mget([self._key("worker", i) for i in ids])
        alive, gone = [], []
        for worker_id, raw in zip(ids, found, strict=True):
            if raw is None:
                gone.append(worker_id)
            else:
                alive.append(WorkerInfo.from_json(json.loads(raw)))
        if gone:
            await self._client.srem(self._key("workers"), gone)
        return alive

    # -- runs that want hosts -----------------------------------------------------

    async def want(self, run_id: str, teammates: tuple[str, ...], since: float) -> None:
        """Run *run_id* wants *teammates* hosted by workers."""
        await self._client.set(self._key("run", run_id, "wanted"), json.dumps(list(teammates)))
        await self._client.zadd(self._key("remote"), {run_id: since})

    async def unwant(self, run_id: str, teammates: tuple[str, ...] = ()) -> None:
        """The run ended (or stopped, to be resumed): no worker should take its
        teammates any more; those of *teammates* retired are forgotten (a resume
        starts them again, as a resume on one machine does)."""
        await self._client.zrem(self._key("remote"), [run_id])
        await self._client.delete([self._key("run", run_id, "wanted")])
        for name, worker in (await self.hosts(run_id, teammates)).items():
            if worker == RETIRED:
                await self._client.delete([self._lease(run_id, name)])

    async def wanted(self) -> list[Wanted]:
        """Every run that wants hosts, oldest first."""
        members = await self._client.zrange(self._key("remote"), 0, -1, withscores=True)
        out = []
        for member in members:
            name, score = member  # withscores: (member, score) pairs
            run_id = name.decode() if isinstance(name, bytes) else str(name)
            raw = await self._client.get(self._key("run", run_id, "wanted"))
            if raw is not None:
                names = tuple(str(n) for n in json.loads(raw))
                out.append(Wanted(run_id, names, float(score)))
        return out

    # -- hosting leases -------------------------------------------------------------

    async def try_host(self, run_id: str, teammate: str, worker_id: str, ttl: float) -> bool:
        """Take *teammate*'s hosting lease for *worker_id*; False if someone holds it."""
        from coredis.tokens import PureToken  # here: a run on files never imports coredis

        taken = await self._client.set(
            self._lease(run_id, teammate), worker_id, condition=PureToken.NX, px=_ms(ttl)
        )
        return bool(taken)

    async def renew(
        self, leases: Sequence[tuple[str, str]], worker_id: str, ttl: float
    ) -> list[bool]:
        """Extend *worker_id*'s leases of *leases* (``(run_id, teammate)`` pairs), all
        in one round trip; for each, False if it is no longer theirs (it lapsed)."""
        if not leases:
            return []
        keys = [self._lease(run_id, teammate) for run_id, teammate in leases]
        kept: list[int] = await self._renew(keys=keys, args=[worker_id, _ms(ttl)])
        return [bool(k) for k in kept]

    async def release(self, run_id: str, teammate: str, worker_id: str) -> bool:
        """Give the lease up (a clean stop); False if it was not theirs."""
        dropped: int = await self._release(keys=[self._lease(run_id, teammate)], args=[worker_id])
        return bool(dropped)

    async def retire(self, run_id: str, teammate: str, worker_id: str) -> bool:
        """*teammate* ended for good (its supervisor gave up, the run told it to
        stop): no worker takes it again while the run goes on; :meth:`hosts` says
        :data:`RETIRED` (nothing, once the run stopped). False: the lease was not
        *worker_id*'s."""
        keys = [self._lease(run_id, teammate), self._key("run", run_id, "wanted")]
        done: int = await self._retire(keys=keys, args=[worker_id])
        return bool(done)

    async def hosts(self, run_id: str, teammates: tuple[str, ...]) -> dict[str, str | None]:
        """Who hosts each of *teammates* now (None: nobody)."""
        if not teammates:
            return {}
        found = await self._client.mget([self._lease(run_id, t) for t in teammates])
        return {
            t: None if raw is None else raw.decode()
            for t, raw in zip(teammates, found, strict=True)
        }

    async def failed(self, run_id: str, teammate: str, worker_id: str, reason: str) -> None:
        """Worker *worker_id* could not start *teammate*: *reason*, kept for the run's
        lead (:meth:`failures`) for :data:`FAILURE_TTL` seconds."""
        record = json.dumps({"worker": worker_id, "reason": reason})
        key = self._key("run", run_id, "failed", teammate)
        await self._client.set(key, record, px=_ms(FAILURE_TTL))

    async def failures(self, run_id: str, teammates: tuple[str, ...]) -> dict[str, str]:
        """Why a worker last could not start each of *teammates* (those with a reason)."""
        if not teammates:
            return {}
        found = await self._client.mget([self._key("run", run_id, "failed", t) for t in teammates])
        said = {}
        for name, raw in zip(teammates, found, strict=True):
            if raw is not None:
                record = json.loads(raw)
                said[name] = f"{record['reason']} (worker {record['worker']})"
        return said


def lease_key(target: RedisTarget, run_id: str, teammate: str) -> str:
    """The key of *teammate*'s hosting lease in run *run_id* (its worker's id)."""
    return target.key("run", run_id, "host", teammate)


def _ms(seconds: float) -> int:
    return max(1, round(seconds * 1000))
