"""A worker's Trio layer: heartbeat, hosting leases, and the teammates it hosts.

:func:`serve_worker` runs a worker until cancelled. Every ``beat`` seconds it
renews its heartbeat and the lease of every teammate it hosts (a lease it
lost, because it was presumed dead, stops that teammate at once: another
worker has it now), lets go of teammates that ended and of runs that no
longer want hosts, then takes what :func:`~coterie.workers.choose_claims`
says, each with an atomic claim (losing a race is normal). Starting a
teammate is the caller's (the composition root builds it from the run's
state on the server); here it is a callable that returns a :class:`Hosted`.
A clean stop stops every teammate, releases their leases and removes the
heartbeat, so that other workers take them over at once instead of after
the time to live.
"""

from __future__ import annotations

import contextlib
import os
import socket
from typing import TYPE_CHECKING, Protocol

import attrs
import trio

from coterie.workers.placement import StartBackoff, WorkerInfo, choose_claims

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable
    from contextlib import AbstractAsyncContextManager

    from coterie.backends import WorkerDirectory

__all__ = ["Hosted", "WorkerConfig", "serve_worker"]


class Hosted(Protocol):
    """A teammate a worker hosts: ``ended`` once it stopped by itself (gave up, the
    run ended); ``stop`` stops it (shielded clean-up included)."""

    @property
    def ended(self) -> bool: ...
    async def stop(self) -> None: ...


@attrs.frozen
class WorkerConfig:
    """How a worker runs: its identity, room, and timing."""

    id: str
    capacity: int = 4
    run: str | None = None
    #: Seconds between heartbeats; a lease lives ``ttl`` seconds past the last one.
    beat: float = 1.0
    ttl: float = 5.0
    host: str = attrs.field(factory=socket.gethostname)
    pid: int = attrs.field(factory=os.getpid)

    def __attrs_post_init__(self) -> None:
        if self.capacity < 1:
            raise ValueError(f"a worker's capacity must be at least 1, not {self.capacity}")
        if not 0 < self.beat < self.ttl:
            raise ValueError(
                f"the heartbeat ({self.beat} s) must be shorter than its time to live"
                f" ({self.ttl} s)"
            )


def failure_reason(exc: BaseException) -> str:
    """Why a teammate could not be started, in one line."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__


async def serve_worker(
    registry: WorkerDirectory,
    config: WorkerConfig,
    start: Callable[[str, str], Awaitable[Hosted]],
    *,
    on_change: Callable[[str, str, str, str], None] | None = None,
    leaving: Callable[[], AbstractAsyncContextManager[WorkerDirectory]] | None = None,
    task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve as worker *config* until cancelled (see the module docstring).

    *leaving* opens the registry the clean stop releases the leases with (a
    connection of its own, when the cancellation closes *registry*'s).

    *on_change* is told ``(what, run_id, teammate, detail)`` for ``hosting``,
    ``lost``, ``ended``, ``released`` and ``failed`` (a start that raised; *detail*
    says why, in one line, and the run's lead reads it too), and
    ``unreachable`` (with empty names) for a round the server did not answer, for
    display. While the server is away the hosted teammates go on; a lease that
    lapsed meanwhile is found lost at the next round, and its teammate stopped.
    """
    hosted: dict[tuple[str, str], Hosted] = {}
    starting: set[tuple[str, str]] = set()  # leases held while their teammate starts
    retiring: set[tuple[str, str]] = set()  # ended, stopped, not yet retired on the server
    backoff = StartBackoff(config.beat)  # a start that failed is not tried at every beat
    keeping_lock = trio.Lock()  # one renewal pass at a time

    def said(what: str, key: tuple[str, str], detail: str = "") -> None:
        if on_change is not None:
            on_change(what, *key, detail)

    def info() -> WorkerInfo:
        keys = tuple(f"{r}/{t}" for r, t in sorted({*hosted, *starting}))
        return WorkerInfo(config.id, config.capacity, keys, config.host, config.pid, config.run)

    async def let_go(key: tuple[str, str]) -> None:
        """Stop a teammate whose run no longer wants it: one that had already
        ended by itself (its supervisor gave up just before the run stopped) is
        retired and said ``ended``, the others are released."""
        member = hosted.pop(key, None)
        if member is None:
            return  # the renewals found it lost or ended meanwhile
        with trio.CancelScope(shield=True):
            ended = member.ended
            await member.stop()
            if ended:
                retiring.add(key)
                await retire(key)
                return
            await registry.release(*key, config.id)
        said("released", key)

    async def keep() -> None:
        """The heartbeat and the leases, renewed every beat whatever else is going
        on (a teammate that takes long to start must not cost the others theirs)."""
        async with keeping_lock:
            await renew_all()

    async def retire(key: tuple[str, str]) -> None:
        """Retire an ended teammate's lease; one the server did not answer stays in
        *retiring* and is retried every beat (nobody else takes the teammate
        meanwhile: its lease is this worker's until its time to live runs out)."""
        await registry.retire(*key, config.id)
        retiring.discard(key)
        said("ended", key)

    async def renew_all() -> None:
        await registry.heartbeat(info(), config.ttl)
        # Every lease in one round trip, whatever the number of teammates; one
        # still starting is checked once it has started.
        held = list(hosted)
        kept = await registry.renew([*starting, *held], config.id, config.ttl)
        for key in list(retiring):
            await retire(key)
        for key, ours in zip(held, kept[len(kept) - len(held) :], strict=True):
            if not ours:
                member = hosted.pop(key, None)  # someone else hosts it now: stop, no release
                if member is None:
                    continue
                with trio.CancelScope(shield=True):
                    await member.stop()
                said("lost", key)
            elif key in hosted and hosted[key].ended:  # gave up, or told to stop: for good
                member = hosted.pop(key)
                retiring.add(key)
                with trio.CancelScope(shield=True):
                    await member.stop()
                    await retire(key)

    async def keeping() -> None:
        while True:
            await trio.sleep(config.beat)
            try:
                await keep()
            except registry.errors:
                said("unreachable", ("", ""))  # the server is away: the teammates go on

    async def round() -> None:
        await keep()
        wanted = await registry.wanted()
        runs = {w.run_id for w in wanted}
        backoff.forget_runs_but(runs)
        for key in [k for k in hosted if k[0] not in runs]:
            await let_go(key)
        held: dict[str, str] = {}
        for run in wanted:
            for name, worker in (await registry.hosts(run.run_id, run.teammates)).items():
                if worker is not None:
                    held[f"{run.run_id}/{name}"] = worker
        peers = max(1, len(await registry.workers()))
        now = trio.current_time()
        for run_id, name in choose_claims(info(), wanted, held, peers):
            key, slot = (run_id, name), f"{run_id}/{name}"
            if not backoff.allows(slot, now):
                continue  # its last start failed: not yet
            if not await registry.try_host(run_id, name, config.id, config.ttl):
                continue  # another worker was quicker
            starting.add(key)
            try:
                member = await start(run_id, name)
            except Exception as exc:
                reason = failure_reason(exc)
                await registry.release(run_id, name, config.id)
                await registry.failed(run_id, name, config.id, reason)  # for the run's lead
                backoff.failed(slot, trio.current_time())
                said("failed", key, reason)
                continue
            finally:
                starting.discard(key)
            backoff.started(slot)
            hosted[key] = member
            said("hosting", key)

    try:
        await registry.heartbeat(info(), config.ttl)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(keeping)
            task_status.started()
            while True:
                try:
                    await round()
                except registry.errors:
                    said("unreachable", ("", ""))  # the server is away: the teammates go on
                await trio.sleep(config.beat)
    finally:
        with trio.CancelScope(shield=True), trio.move_on_after(config.ttl):
            hosted_at_stop = []
            for key in list(hosted):
                member = hosted.pop(key)
                if member.ended:
                    retiring.add(key)  # gave up by itself: not to be started again
                else:
                    hosted_at_stop.append(key)
                await member.stop()
            opened = contextlib.nullcontext(registry) if leaving is None else leaving()
            with contextlib.suppress(*registry.errors):
                async with opened as last:
                    for key in [*hosted_at_stop]:
                        with contextlib.suppress(*registry.errors):
                            await last.release(*key, config.id)
                        said("released", key)
                    for key in list(retiring):  # ended: not to be started again
                        with contextlib.suppress(*registry.errors):
                            await last.retire(*key, config.id)
                            said("ended", key)
                    await last.leave(config.id)
