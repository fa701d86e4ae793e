"""A run directory's files copied to Redis, so that any host can resume any actor.

On the Redis backend each host keeps a local run directory (the code that
reads and writes run state is the same as on files), and a
:class:`RunMirror` keeps a copy of the files that matter on the server:
append-only logs (transcripts) as lists of the bytes appended, in order, and
small documents (``state.json``, ``config.json``, an agent's denial counts)
as strings, each under its path relative to the run directory. A host that
takes an actor over, or resumes the run, first calls :meth:`RunMirror.
materialize`: the server's copy replaces the local files it names.

Writes are queued in order and copied by :meth:`RunMirror.run` in batches
(one script each, so a batch is on the server whole or not at all, and only on a
server that still holds the run: one that lost it is a
:class:`~coterie.errors.BackendLost`, never a partial copy);
:meth:`RunMirror.flush` waits until everything queued before it is there.
Whoever must not go on before its write is on the server (a transcript's
``tool_started`` before the tool runs; a request recorded before it is
sent) flushes: the transcript does it on every append through
:meth:`RunMirror.replica`. What is lost when a host dies is what it had not
flushed: the actor that takes over goes on from the server's copy, which is
the local file as of the last flush (a model call made again, never a tool
run twice). While the server is away, writes wait in memory and flushes
wait with them.
"""

from __future__ import annotations

from collections import deque
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Literal

import attrs
import trio

from coterie.backends.redis.client import accepted, refused, server_errors
from coterie.errors import BackendLost, HoldLost
from coterie.fsutil import atomic_write

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    import coredis

    from coterie.backends.redis.client import RedisTarget

__all__ = ["Fence", "LogReplica", "RunMirror"]

#: Seconds between tries while the server is away (doubling up to the last).
RETRY_FIRST, RETRY_LAST = 0.05, 2.0
#: Writes copied in one round trip at most.
BATCH = 256


#: One batch of writes, all at once, and only to a server that still holds the run.
#: KEYS: the files hash, the run's ``config.json`` document, then for each write its
#: key and its fence's key (its own key again when it has none); ARGV: for each write
#: kind (``log``, ``doc``), path, bytes, the fence's value ('' for none) and the
#: milliseconds a fence taken anew lives. Returns ``{0}`` (nothing written) when the
#: server has no ``config.json`` of the run and the batch does not bring it: the
#: server lost the run (restarted empty), and copying on would leave a partial run
#: there that a resume would take for the whole. Else ``{1, i, ...}``: written, but
#: for the i-th writes, refused by their fence: it names another holder now (this
#: writer's hold lapsed and someone took it). A fence that lapsed with nobody
#: taking it is taken back (NX) and the write goes in: no one else wrote meanwhile.
_COPY = """
local brings = false
for i = 1, #ARGV, 5 do
  if ARGV[i] == 'doc' and ARGV[i + 1] == 'config.json' then brings = true end
end
if not brings and redis.call('EXISTS', KEYS[2]) == 0 then
  return {0}
end
local out = {1}
for i = 1, #ARGV, 5 do
  local n = (i - 1) / 5
  local key, fence, holder = KEYS[3 + 2 * n], KEYS[4 + 2 * n], ARGV[i + 3]
  local ok = true
  if holder ~= '' then
    local now = redis.call('GET', fence)
    if not now then
      redis.call('SET', fence, holder, 'PX', ARGV[i + 4], 'NX')
    elseif now ~= holder then
      ok = false
      table.insert(out, n + 1)
    end
  end
  if ok then
    redis.call('HSET', KEYS[1], ARGV[i + 1], ARGV[i])
    if ARGV[i] == 'log' then
      redis.call('RPUSH', key, ARGV[i + 2])
    else
      redis.call('SET', key, ARGV[i + 2])
    end
  end
end
return out
"""


@attrs.frozen
class Fence:
    """What a write must still hold on the server to go in: *key* holding *holder*
    (the run's live key, or a teammate's hosting lease); *ttl* seconds if it is
    taken back after a lapse nobody else used."""

    key: str
    holder: str
    ttl: float


@attrs.frozen
class _Write:
    seq: int
    kind: Literal["log", "doc"]
    rel: str
    data: bytes
    fence: Fence | None = None


def check_rel(rel: str) -> str:
    """*rel* if it is a plain relative path inside a run directory, else ValueError."""
    path = PurePosixPath(rel)
    if path.is_absolute() or not path.parts or ".." in path.parts or rel != str(path):
        raise ValueError(f"not a path inside a run directory: {rel!r}")
    return rel


class RunMirror:
    """The server's copy of one run directory (see the module docstring)."""

    def __init__(
        self,
        client: coredis.Redis[bytes],
        target: RedisTarget,
        run_id: str,
        fence: Callable[[str], Fence | None] | None = None,
    ) -> None:
        self._client = client
        self._target = target
        self.run_id = run_id
        #: What each write (by its path) must still hold to go in (None: nothing).
        self._fence = fence
        #: The last write refused by its fence, by path.
        self._refused: dict[str, int] = {}
        self._queue: deque[_Write] = deque()
        self._queued = 0  # seq of the last write queued
        self._copied = 0  # seq of the last write on the server
        self._wake = trio.Event()
        self._moved = trio.Event()
        #: Copies that failed (the server away) and were tried again.
        self.failures = 0
        self._copier = client.register_script(_COPY)

    def _key(self, *parts: str) -> str:
        return self._target.key("run", self.run_id, *parts)

    # -- writing ---------------------------------------------------------------

    def append(self, rel: str, data: bytes) -> int:
        """Queue *data* appended to the log at *rel*; the write's number."""
        return self._put(_Write(0, "log", check_rel(rel), data))

    def put(self, rel: str, data: bytes) -> int:
        """Queue the document at *rel* replaced by *data*; the write's number."""
        return self._put(_Write(0, "doc", check_rel(rel), data))

    def _put(self, write: _Write) -> int:
        self._queued += 1
        fence = None if self._fence is None else self._fence(write.rel)
        self._queue.append(attrs.evolve(write, seq=self._queued, fence=fence))
        self._wake.set()
        return self._queued

    async def flush(self, upto: int | None = None, rel: str | None = None) -> None:
        """Until every write queued so far (or up to number *upto*) is on the server;
        :class:`~coterie.errors.HoldLost` if one of them (of the file *rel*, if
        given) was refused because another process holds what it was written for."""
        target = self._queued if upto is None else upto
        while self._copied < target:
            await self._moved.wait()
        refused = [r for r, seq in self._refused.items() if seq <= target and rel in (None, r)]
        if refused:
            raise HoldLost(
                f"the Redis server refused this process's writes to {', '.join(sorted(refused))}"
                f" of run {self.run_id}: its hold lapsed and another process holds it now"
            )

    def replica(self, rel: str) -> LogReplica:
        """A transcript's replica: its appends copied to the log at *rel*."""
        return LogReplica(self, check_rel(rel))

    @property
    def backlog(self) -> int:
        """Writes queued and not on the server yet."""
        return len(self._queue)

    # -- the copier ------------------------------------------------------------

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Copy queued writes to the server until cancelled (then what is left, for
        a few seconds, shielded)."""
        task_status.started()
        try:
            while True:
                await self._wake.wait()
                self._wake = trio.Event()
                await self._copy()
        finally:
            # What is left, once: if the server cannot take it now (or the connection
            # went with the cancellation), it stays local only, as after a kill -9
            # (the server's copy is the file as of the last flush).
            with trio.CancelScope(shield=True), trio.move_on_after(5.0):
                await self._copy(once=True)

    async def _copy(self, *, once: bool = False) -> None:
        delay = RETRY_FIRST
        while self._queue:
            batch = [self._queue[i] for i in range(min(BATCH, len(self._queue)))]
            keys = [self._key("files"), self._key("doc", "config.json")]
            args: list[str | bytes] = []
            for write in batch:
                key = self._key(write.kind, write.rel)
                fence = write.fence
                keys += [key, key if fence is None else fence.key]
                args += [write.kind, write.rel, write.data]
                args += ["", "0"] if fence is None else [fence.holder, str(round(fence.ttl * 1000))]
            try:
                answer: list[int] = await self._copier(keys=keys, args=args)
            except server_errors() as exc:
                self.failures += 1
                refused(exc)  # a server out of memory is said once
                if once:
                    return
                await trio.sleep(delay)
                delay = min(delay * 2, RETRY_LAST)
                continue
            if delay != RETRY_FIRST:
                accepted()
            if not answer[0]:
                raise BackendLost(
                    f"the Redis server at {self._target.url} no longer holds run {self.run_id}"
                    " (restarted without its data, or flushed); the run stopped: what the"
                    " server kept for it is gone"
                )
            delay = RETRY_FIRST
            for index in answer[1:]:  # dropped: another process holds what they were for
                fenced = batch[int(index) - 1]
                self._refused[fenced.rel] = fenced.seq
            for _ in batch:
                self._queue.popleft()
            self._copied = batch[-1].seq
            moved, self._moved = self._moved, trio.Event()
            moved.set()

    # -- reading ---------------------------------------------------------------

    async def files(self) -> dict[str, str]:
        """Every file the server has a copy of: its path and kind (``log``, ``doc``)."""
        found = await self._client.hgetall(self._key("files"))
        return {_text(k): _text(v) for k, v in found.items()}

    async def read(self, rel: str, files: Mapping[str, str] | None = None) -> bytes | None:
        """The server's copy of the file at *rel* (None: it has none); *files*: what
        :meth:`files` said just before, if the caller asked (one listing for many reads)."""
        listing = await self.files() if files is None else files
        kind = listing.get(check_rel(rel))
        if kind == "log":
            return b"".join(await self._client.lrange(self._key("log", rel), 0, -1))
        if kind == "doc":
            return await self._client.get(self._key("doc", rel))
        return None

    async def materialize(
        self,
        run_dir: Path,
        only: Callable[[str], bool] | None = None,
        files: Mapping[str, str] | None = None,
    ) -> list[str]:
        """Write the server's copy of every file (or those *only* accepts) into
        *run_dir*, replacing what is there; the paths written. *files* as for
        :meth:`read`: the server's listing is read once, not once per file."""
        written = []
        listing = await self.files() if files is None else files
        for rel in sorted(listing):
            if only is not None and not only(rel):
                continue
            data = await self.read(rel, listing)
            if data is None:
                continue
            path = Path(run_dir, *PurePosixPath(rel).parts)
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(path, data, sync=True)
            written.append(rel)
        return written


@attrs.frozen
class LogReplica:
    """What a transcript needs of the mirror: queue its appends, wait for them."""

    mirror: RunMirror
    rel: str

    def append(self, data: bytes) -> int:
        return self.mirror.append(self.rel, data)

    async def flush(self, upto: int | None = None) -> None:
        await self.mirror.flush(upto, self.rel)


def _text(value: str | bytes) -> str:
    return value.decode() if isinstance(value, bytes) else value
