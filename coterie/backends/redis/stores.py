"""A run's stores on a Redis/Valkey server.

:func:`open_stores` opens what a run keeps its state in and yields it as
:class:`~coterie.backends.protocol.RunStores`: the post office, the task
board (a team's) and the run's mirror (:mod:`coterie.backends.redis.mirror`: the run directory's
transcripts and documents copied to the server, so that another host can
take an actor over or resume the run) and the forwarder of its event log
(:mod:`coterie.backends.redis.eventstream`). On files every process of the run uses the run
directory; on Redis each host keeps a run directory of its own (the code that
reads and writes it is the same) and the server holds what they share: the
mailboxes, the board, the events, and the mirror. The server is trusted with
the run: whoever can write to it can send the agents messages and change the
run's recorded options, so it must be protected (a password or ACL, and no
route from the agents' tools: docs/scale-out.md).

A run is held by one process at a time: as the run's lock does on one
machine, its live key on the server (:func:`coterie.backends.redis.registry.held_live`)
names the process that runs it, renewed every few seconds; another process
that opens the run meanwhile gets :class:`~coterie.runs.RunBusy`. When the
run opens, the server's copy of the run directory replaces this host's (it
has every write that any host made before going on); a new run's documents
go to the server.
"""

from __future__ import annotations

import contextlib
import os
import socket
from typing import TYPE_CHECKING

import trio

from coterie.backends.protocol import RunStores
from coterie.backends.redis.board import open_redis_board
from coterie.backends.redis.client import RedisTarget, connect
from coterie.backends.redis.eventstream import FLUSH_GRACE, Forwarder, forward_events
from coterie.backends.redis.mirror import Fence, RunMirror
from coterie.backends.redis.office import open_redis_post_office
from coterie.backends.redis.registry import LIVE_TTL, held_live, live_key
from coterie.backends.redis.workers import lease_key
from coterie.errors import BackendLost
from coterie.runs import actor_of_file, read_config

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable
    from pathlib import Path

    import coredis

    from coterie.board import BoardCorruption
    from coterie.events import EventLog

__all__ = ["MIRRORED", "mirrored", "open_stores"]

#: The files of a run directory its mirror copies (paths relative to it): what
#: another host needs to go on with the run or one of its actors.
MIRRORED = ("config.json", "config.sig", "state.json", "schedule.json", "cron.json")
MIRRORED_DIRS = ("transcripts/", "auto-mode/", "teammates/")


def _documents(run_dir: Path) -> list[str]:
    """The mirrored documents of *run_dir* there now (not the transcripts: a
    transcript is a log, copied as it is appended)."""
    found = [rel for rel in MIRRORED if (run_dir / rel).is_file()]
    for folder in MIRRORED_DIRS:
        if folder == "transcripts/" or not (run_dir / folder).is_dir():
            continue
        found += sorted(f"{folder}{p.name}" for p in (run_dir / folder).iterdir() if p.is_file())
    return found


def _ran_before(run_dir: Path) -> bool:
    """Whether the run in *run_dir* has run already: a transcript holds something."""
    folder = run_dir / "transcripts"
    return folder.is_dir() and any(p.is_file() and p.stat().st_size > 0 for p in folder.iterdir())


def _shared(rel: str) -> bool:
    """What a host brings from the server when it opens a run: every mirrored file
    but the run's config (see :func:`open_stores`)."""
    return mirrored(rel) and rel not in ("config.json", "config.sig")


def mirrored(rel: str) -> bool:
    """Whether the mirror copies the run directory's file at *rel*."""
    return rel in MIRRORED or rel.startswith(MIRRORED_DIRS)


@contextlib.asynccontextmanager
async def open_stores(
    target: RedisTarget,
    run_id: str,
    run_dir: Path,
    events: EventLog,
    *,
    team: bool,
    on_change: Callable[[object], None] | None = None,
    on_corruption: Callable[[BoardCorruption], None] | None = None,
    holds_run: bool = True,
    bring: Callable[[str], bool] | None = None,
    hosted_by: str | None = None,
) -> AsyncIterator[RunStores]:
    """Open run *run_id*'s stores on the server *target* (its board only for a *team*).

    The process that *holds_run* (the one running it: the lead's)
    registers the run and holds its live key (:mod:`coterie.backends.redis.registry`)
    around the other stores; another process of the run (a worker hosting one
    teammate, which holds that teammate's hosting lease instead) passes False,
    or it would be refused as a second holder. The files of the server's copy
    that *bring* accepts replace this host's (by default every mirrored file but
    the run's config, which each host keeps as it wrote it: rebased onto its own
    workspace and signed with its own key; a worker brings its teammate's).
    """
    origin = f"{socket.gethostname()}:{os.getpid()}"
    # Known to the server and held live before anything else of it is there, and
    # until everything else has flushed.
    live = (
        held_live(target, run_id, read_config(run_dir), origin)
        if holds_run
        else contextlib.nullcontext()
    )
    async with live, connect(target) as client, trio.open_nursery() as nursery:
        async with (
            _opened(
                client,
                target,
                run_id,
                run_dir,
                events,
                origin,
                nursery,
                bring or _shared,
                holds_run,
                _fences(target, run_id, origin if holds_run else None, hosted_by),
            ) as mirror,  # fmt: skip
            open_redis_post_office(target, run_id, events=events) as post,
        ):
            if not team:
                yield RunStores(post, None, mirror)
            else:
                shared = open_redis_board(
                    target, run_id, on_change=on_change, on_corruption=on_corruption
                )
                async with shared as board_on_server:
                    yield RunStores(post, board_on_server, mirror)
        nursery.cancel_scope.cancel()


#: Seconds a teammate's hosting lease lives when a write takes it back after a lapse
#: nobody used (its worker's next renewal gives it the worker's own time to live).
LEASE_TAKEN_BACK = 10.0


def _fences(
    target: RedisTarget, run_id: str, holder: str | None, hosted_by: str | None
) -> Callable[[str], Fence | None] | None:
    """What this process's writes to the run's mirror must still hold: the run's
    live key (the *holder* of the run), or for a worker the hosting lease of the
    teammate each file belongs to (*hosted_by*: the worker's id)."""
    if holder is not None:
        run_fence = Fence(live_key(target, run_id), holder, LIVE_TTL)
        return lambda _rel: run_fence
    if hosted_by is not None:

        def lease(rel: str) -> Fence | None:
            name = actor_of_file(rel)
            if name is None:
                return None
            return Fence(lease_key(target, run_id, name), hosted_by, LEASE_TAKEN_BACK)

        return lease
    return None


@contextlib.asynccontextmanager
async def _opened(
    client: coredis.Redis[bytes],
    target: RedisTarget,
    run_id: str,
    run_dir: Path,
    events: EventLog,
    origin: str,
    nursery: trio.Nursery,
    bring: Callable[[str], bool],
    holds_run: bool,
    fence: Callable[[str], Fence | None] | None,
) -> AsyncIterator[RunMirror]:
    """The run's mirror, with this host's run directory brought up to date, and
    its events forwarded; both flushed on the way out."""
    mirror = RunMirror(client, target, run_id, fence)
    await nursery.start(mirror.run)
    forwarder: Forwarder = await nursery.start(
        lambda task_status: forward_events(
            events, client, target, run_id, origin=origin, task_status=task_status
        )
    )
    if files := await mirror.files():
        # The server's copy wins: it has every write any host made before it
        # went on (what this host wrote and never got there did not happen).
        await mirror.materialize(run_dir, only=bring, files=files)
    elif holds_run:  # a new run: what this host has is what the server keeps
        if _ran_before(run_dir):
            # Its transcripts say it ran, yet the server has nothing of it: the
            # mailboxes (the pending prompt with them) and the board are gone, and a
            # resume would wait forever for them. One line instead.
            raise BackendLost(
                f"the Redis server at {target.url} no longer holds run {run_id}"
                " (restarted without its data, or flushed): it cannot go on from there;"
                f" what this host kept of it is in {run_dir}"
            )
        for rel in _documents(run_dir):
            mirror.put(rel, (run_dir / rel).read_bytes())
        await mirror.flush()
    yield mirror
    await mirror.flush()
    with trio.move_on_after(FLUSH_GRACE):  # the server away: what is left stays local
        await forwarder.drain()
