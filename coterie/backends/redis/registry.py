"""The runs a Redis/Valkey server knows: what ``coterie runs --backend`` lists.

On files a run is found under the coterie home of the host it ran on; on
Redis any host may look into it, resume it or inject a fault, so the server
keeps a registry of its own:

    runs                 a sorted set of run ids, scored by creation time
                         (epoch seconds), written once (``ZADD NX``)
    run:<id>:info        a hash of what ``coterie runs`` shows beside the
                         state: ``workspace``, ``command``, ``prompt``, ``host``
    run:<id>:live        held while a process runs the run: its
                         ``host:pid``, with a TTL of :data:`LIVE_TTL` seconds
                         renewed every :data:`LIVE_EVERY` (the flock of a run
                         directory, for a server: a process killed with -9
                         stops renewing it and the run reads as interrupted
                         once it expires)

The run's state is its ``state.json`` in the mirror (:mod:`coterie.backends.redis.mirror`),
read with the rest. :func:`run_record` and :func:`find_registered` read; the
process that opens a run's stores (:func:`coterie.backends.stores.open_stores`)
holds :func:`held_live` around them.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import time
from typing import TYPE_CHECKING, Any

import attrs
import trio

from coterie.backends.redis.client import connect, server_errors
from coterie.runs import DAMAGED, INTERRUPTED, RUNNING, RunBusy, UnknownRun

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    import coredis

    from coterie.backends.redis.client import RedisTarget

__all__ = [
    "LIVE_EVERY",
    "LIVE_TTL",
    "RegisteredRun",
    "find_registered",
    "held_live",
    "live_holder",
    "register",
    "registered_runs",
    "run_record",
]

#: Seconds a run's live key outlives its last renewal.
LIVE_TTL = 6.0
#: Seconds between two renewals.
LIVE_EVERY = 1.5


def runs_key(target: RedisTarget) -> str:
    """The sorted set of every run id the server knows."""
    return target.key("runs")


def info_key(target: RedisTarget, run_id: str) -> str:
    return target.key("run", run_id, "info")


def live_key(target: RedisTarget, run_id: str) -> str:
    return target.key("run", run_id, "live")


async def register(
    client: coredis.Redis[bytes],
    target: RedisTarget,
    run_id: str,
    config: dict[str, Any],
    *,
    host: str,
) -> None:
    """Make run *run_id* (its ``config.json`` *config*) known to the server; a run
    registered before keeps its creation time."""
    created = float(config.get("created_at") or time.time())
    prompt = config.get("prompt") or config.get("goal") or config.get("loop") or ""
    from coredis.tokens import PureToken  # here: a run on files never imports coredis

    from coterie.backends.redis.refusals import transaction

    def fill(pipe: Any) -> None:
        pipe.zadd(runs_key(target), {run_id: created}, condition=PureToken.NX)
        pipe.hset(
            info_key(target, run_id),
            {
                "workspace": str(config.get("workdir", "")),
                "command": str(config.get("command", "?")),
                "prompt": str(prompt),
                "host": host,
            },
        )

    await transaction(client, fill)  # a server out of memory is waited out


@contextlib.asynccontextmanager
async def held_live(
    target: RedisTarget, run_id: str, config: dict[str, Any], holder: str
) -> AsyncIterator[None]:
    """Register run *run_id* (its ``config.json`` *config*), take its live key (naming
    *holder*) and keep it while the block runs, then remove it;
    :class:`~coterie.runs.RunBusy` if another process holds it. A connection of its
    own: entered before the run's other stores and left after them, the key goes
    only once they have flushed (a watcher that sees it gone has every event)."""
    from coredis.tokens import PureToken  # here: a run on files never imports coredis

    key, ttl_ms = live_key(target, run_id), int(LIVE_TTL * 1000)
    busy: str | None = None
    async with connect(target) as client:  # a hung server is one line, not a wait forever
        await register(client, target, run_id, config, host=holder.rpartition(":")[0])
        while not await client.set(key, holder, px=ttl_ms, condition=PureToken.NX):
            other = await live_holder(client, target, run_id)
            if other is not None and dead_here(other):  # killed on this host: no wait
                await client.delete([key])
                continue
            busy = other or "ending"
            break
        if busy is None:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(_renew, client, key, holder, ttl_ms)
                try:
                    yield
                finally:
                    nursery.cancel_scope.cancel()
                    with trio.CancelScope(shield=True), trio.move_on_after(2.0):
                        try:
                            if _text(await client.get(key) or b"") == holder:
                                await client.delete([key])
                        except server_errors():
                            pass  # it expires on its own
    if busy is not None:  # raised here: the client's task group would wrap it
        raise RunBusy(
            f"run {run_id} is being run by another process right now ({busy});"
            f" if that process was killed, it reads as interrupted within {LIVE_TTL:g} s"
        )


# KEYS[1] the live key, ARGV[1] its holder, ARGV[2] ms: extend only one's own key
# (after a lapse another process may hold it: it is not taken back).
_RENEW = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
"""


async def _renew(client: coredis.Redis[bytes], key: str, holder: str, ttl_ms: int) -> None:
    """Renew the live key until cancelled (a server away only delays the renewals)."""
    renew = client.register_script(_RENEW)
    while True:
        await trio.sleep(LIVE_EVERY)
        with contextlib.suppress(*server_errors()):
            await renew(keys=[key], args=[holder, ttl_ms])


def dead_here(holder: str, host: str | None = None) -> bool:
    """Whether *holder* (``host:pid``) names a process of this host that is gone."""
    name, _, pid = holder.rpartition(":")
    if name != (host or socket.gethostname()) or not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False  # alive, someone else's
    return False


async def live_holder(client: coredis.Redis[bytes], target: RedisTarget, run_id: str) -> str | None:
    """Who runs run *run_id* right now (``host:pid``), None if nobody does."""
    found = await client.get(live_key(target, run_id))
    return None if found is None else _text(found)


@attrs.frozen
class RegisteredRun:
    """One run the server knows, as ``coterie runs --backend`` shows it."""

    run_id: str
    created_at: float
    workspace: str
    command: str
    host: str
    state: str
    request: str
    result: str | None
    updated_at: float | None
    #: Who runs it now (``host:pid``), None when nobody does.
    holder: str | None

    @property
    def where(self) -> str:
        """Where it ran: ``host:workspace``."""
        return f"{self.host}:{self.workspace}" if self.host else self.workspace

    def to_dict(self) -> dict[str, Any]:
        return attrs.asdict(self)


async def registered_runs(client: coredis.Redis[bytes], target: RedisTarget) -> list[str]:
    """Every run id the server knows, oldest first."""
    return [_text(m) for m in await client.zrange(runs_key(target), 0, -1)]


async def find_registered(client: coredis.Redis[bytes], target: RedisTarget, run_id: str) -> str:
    """The id of the run the server knows as *run_id* (a unique prefix is enough);
    :class:`~coterie.runs.UnknownRun` if it knows none or several."""
    known = await registered_runs(client, target)
    if run_id in known:
        return run_id
    found = [r for r in known if run_id and r.startswith(run_id)]
    if len(found) == 1:
        return found[0]
    what = "is ambiguous" if found else "not found"
    hint = f"; recent runs: {', '.join(known[-5:])}" if known else "; it knows no runs"
    raise UnknownRun(f"run {run_id!r} {what} on {target.url}{hint} (see `coterie runs --backend`)")


async def run_record(
    client: coredis.Redis[bytes], target: RedisTarget, run_id: str
) -> RegisteredRun:
    """What the server knows of run *run_id* (state ``damaged`` if its
    ``state.json`` there cannot be read)."""
    from coterie.backends.redis.mirror import RunMirror

    info = {_text(k): _text(v) for k, v in (await client.hgetall(info_key(target, run_id))).items()}
    created = await client.zscore(runs_key(target), run_id)
    holder = await live_holder(client, target, run_id)
    if holder is not None and dead_here(holder):
        holder = None  # killed on this host: its key has not expired yet
    raw = await RunMirror(client, target, run_id).read("state.json")
    request, result = info.get("prompt", ""), None
    try:
        state = json.loads(raw) if raw else {}
        if not isinstance(state, dict):
            raise ValueError("not an object")
    except ValueError:
        state, status = {}, DAMAGED
    else:
        status = str(state.get("state", RUNNING))
        if status == RUNNING and holder is None:
            status = INTERRUPTED
        asked = state.get("request") or {}
        request = str(asked.get("text") or request) if isinstance(asked, dict) else request
        outcome = state.get("result") or {}
        result = outcome.get("result") if isinstance(outcome, dict) else None
    return RegisteredRun(
        run_id=run_id,
        created_at=float(created or 0.0),
        workspace=info.get("workspace", ""),
        command=info.get("command", "?"),
        host=info.get("host", ""),
        state=status,
        request=request,
        result=result,
        updated_at=state.get("updated_at"),
        holder=holder,
    )


def _text(value: str | bytes) -> str:
    return value.decode() if isinstance(value, bytes) else value
