"""Teams spread over processes (docs/scale-out.md): a worker's teammates, the lead's watch.

A worker (``coterie worker``) hosts teammates of runs that want them
(:func:`coterie.workers.serve_worker` decides which); :class:`Hosting` is how
it starts one: the run's options read from the server's copy of its
``config.json`` (by the run's first teammate on this worker), a run directory
of the worker's own (under the coterie home: ``workers/<id>/<run_id>``)
holding the server's copy of that teammate's files (its transcript, its Auto
Mode counts, its plan approvals; brought by the run's open stores for every
teammate after the first), and :func:`~coterie.runtime.tree.teammate_spec`
run under a supervisor of the worker's. What the teammates of one run on one
worker share is opened once, by the first of them, and closed after the
last: the run prepared for this host
(:func:`~coterie.runtime.prepare.prepare_hosted`: the worker's workdir,
settings and permission mode), one event log (one sequence of events per
process, as the server's stream counts them), the run's stores on the server
(one connection each, not one per teammate), the team and the agents' shared
parts (the system prompt, the subagents' supervisor). Board changes made by
other processes reach the teammates' wake-ups through the board's
``wait_for_change`` on the server, and what it read (``known``).

The lead's side of ``--remote`` is :func:`watch_remote`: it asks for the
run's teammates to be hosted while the run is open, and hands back (tasks to
the board, a ``teammate_stopped`` notice to the lead) a teammate nobody has
hosted for longer than a grace period, once, as a teammate that gave up.
"""

from __future__ import annotations

import contextlib
import functools
import json
import time
from typing import TYPE_CHECKING

import attrs
import trio

from coterie.backends import Backend, open_stores
from coterie.errors import SupervisorGaveUp
from coterie.events import EventLog
from coterie.home import coterie_home, private_dir
from coterie.runs import teammate_files
from coterie.runtime.agents import Agents, run_hooks
from coterie.runtime.options import RunOptions
from coterie.runtime.prepare import prepare_hosted
from coterie.runtime.tree import run_team, teammate_spec
from coterie.supervisors import DynamicSupervisor, Strategy, Supervisor
from coterie.team import Team, Wakeups, hand_back
from coterie.workers import RETIRED, HostingWatch

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable
    from pathlib import Path

    from coterie.backends import RunStores, WorkerDirectory
    from coterie.board import Task, TaskBoard
    from coterie.mailbox import PostOffice
    from coterie.runtime.prepare import PreparedRun

__all__ = ["Hosting", "HostedTeammate", "watch_remote"]

#: Seconds a run's shared part waits, once the worker stops, for its teammates to go.
CLOSE_GRACE = 30.0
#: Seconds between the lead's looks at who hosts its teammates.
WATCH_EVERY = 1.0


@attrs.define(eq=False)  # one teammate, by identity
class HostedTeammate:
    """One teammate a worker hosts (a :class:`coterie.workers.Hosted`)."""

    name: str
    run_id: str
    scope: trio.CancelScope = attrs.field(factory=trio.CancelScope)
    finished: trio.Event = attrs.field(factory=trio.Event)
    _ended: bool = False

    @property
    def ended(self) -> bool:
        """It stopped by itself: its supervisor gave up, or the run told it to stop."""
        return self._ended

    def end(self) -> None:
        self._ended = True

    async def stop(self) -> None:
        self.scope.cancel()
        await self.finished.wait()


@attrs.define
class _SharedRun:
    """What the teammates of one run hosted by this worker share: one set of each
    (the prepared run, its event log, its stores and their connections, the team,
    the agents' shared parts), open while at least one of them is hosted."""

    prepared: PreparedRun
    events: EventLog
    stores: RunStores
    team: Team
    agents: Agents
    hosted: set[HostedTeammate] = attrs.field(factory=set)
    idle: trio.Event = attrs.field(factory=trio.Event)


@attrs.frozen
class Hosting:
    """How a worker starts the teammates it takes (see the module docstring)."""

    backend: Backend
    worker_id: str
    workdir: Path
    permission_mode: str
    #: The worker's ``--setting-sources`` (None: all of the worker's files), never the run's.
    setting_sources: tuple[str, ...] | None
    nursery: trio.Nursery
    #: The runs whose teammates this worker hosts now, by id.
    _runs: dict[str, _SharedRun] = attrs.field(factory=dict)
    _opening: trio.Lock = attrs.field(factory=trio.Lock)

    def run_dir(self, run_id: str) -> Path:
        return coterie_home() / "workers" / self.worker_id / run_id

    async def start(self, run_id: str, name: str) -> HostedTeammate:
        """Start teammate *name* of run *run_id*; returns once it has started."""
        hosted: HostedTeammate = await self.nursery.start(self._host, run_id, name)
        return hosted

    async def _host(
        self, run_id: str, name: str, *, task_status: trio.TaskStatus[HostedTeammate]
    ) -> None:
        private_dir(self.run_dir(run_id))
        hosted = HostedTeammate(name, run_id)
        started = False

        def begun(value: HostedTeammate) -> None:
            nonlocal started
            started = True
            task_status.started(value)

        try:
            with hosted.scope:
                async with self._shared(run_id, name, hosted) as run:
                    await _serve(run, name, hosted, begun)
        except Exception:
            if not started:
                raise  # the start failed: the worker lets the lease go
            hosted.end()  # it broke after it started: the worker retires it
        finally:
            hosted.finished.set()

    @contextlib.asynccontextmanager
    async def _shared(
        self, run_id: str, name: str, hosted: HostedTeammate
    ) -> AsyncIterator[_SharedRun]:
        """The run's shared part, opened by its first teammate on this worker and
        closed after its last; teammate *name*'s files brought from the backend's
        copy (by the run's open stores, when it is open here already: no
        connection of its own, and the run's options are known)."""
        run_dir = self.run_dir(run_id)
        async with self._opening:
            run = self._runs.get(run_id)
            if run is None:
                recorded, request = await _read_run(self.backend, run_id, run_dir, name)
                _check_teammate(recorded, run_id, name)
                run = await self.nursery.start(self._keep_run, run_id, recorded, request)
                self._runs[run_id] = run
            else:
                _check_teammate(run.prepared.options, run_id, name)
                assert run.stores.mirror is not None  # a run hosted elsewhere has a copy
                await run.stores.mirror.materialize(run_dir, teammate_files(name))
            run.hosted.add(hosted)
        try:
            yield run
        finally:
            run.hosted.discard(hosted)
            if not run.hosted:
                if self._runs.get(run_id) is run:
                    del self._runs[run_id]
                run.idle.set()

    async def _keep_run(
        self,
        run_id: str,
        recorded: RunOptions,
        request: str | None,
        *,
        task_status: trio.TaskStatus[_SharedRun],
    ) -> None:
        """Open run *run_id*'s shared part and keep it until it is idle; if it breaks,
        its teammates end with it (the worker retires them)."""
        run_dir = self.run_dir(run_id)
        # In a thread: settings, git and the model client are read synchronously, and
        # the worker's heartbeat must go on meanwhile.
        prepared = await trio.to_thread.run_sync(
            functools.partial(
                prepare_hosted, recorded, run_id, run_dir,
                workdir=self.workdir, permission_mode=self.permission_mode,
                setting_sources=self.setting_sources,
            )
        )  # fmt: skip
        events = EventLog(run_dir / "events.jsonl")  # one log: one sequence per process
        run: _SharedRun | None = None
        wakeups = Wakeups()
        # The lead's process holds the run; this one holds its teammates' hosting
        # leases. Each teammate brought its own files when it was read.
        opened = open_stores(
            self.backend, run_id, run_dir, events, team=True,
            on_change=wakeups.changed, holds_run=False, bring=lambda _rel: False,
            hosted_by=self.worker_id,
        )  # fmt: skip
        try:
            async with opened as stores, trio.open_nursery() as nursery:
                board = stores.board
                assert board is not None
                team = run_team(prepared, board, wakeups, request=request)
                nursery.start_soon(_follow_board, board, wakeups, self.backend.errors())
                subagents = DynamicSupervisor("subagents", events=events)
                await nursery.start(subagents.run)
                agents = await trio.to_thread.run_sync(
                    functools.partial(
                        Agents,
                        prepared,
                        events,
                        stores.post,
                        None,
                        subagents,
                        hooks=run_hooks(prepared, events),
                        mirror=stores.mirror,
                    )
                )  # fmt: skip (built in a thread: its system prompt reads git and files)
                run = _SharedRun(prepared, events, stores, team, agents)
                task_status.started(run)
                try:
                    await run.idle.wait()
                finally:
                    # The worker stopping cancels this too: its teammates, which the
                    # worker stops first, keep their stores until the last is gone.
                    with trio.CancelScope(shield=True):
                        with trio.move_on_after(CLOSE_GRACE):
                            await run.idle.wait()
                        await subagents.stop()
                    nursery.cancel_scope.cancel()
        except Exception:
            if run is None:
                raise  # it never opened: the first teammate's start fails with it
            for member in list(run.hosted):
                member.end()
                member.scope.cancel()
        finally:
            if self._runs.get(run_id) is run:
                del self._runs[run_id]
            events.close()


async def _serve(
    run: _SharedRun, name: str, hosted: HostedTeammate, started: Callable[[HostedTeammate], None]
) -> None:
    """Teammate *name* of *run*, under a supervisor of its own, until it is stopped."""
    spec = teammate_spec(run.agents, run.team, name)
    inner = spec.start

    async def watched(*, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        try:
            await inner(task_status=task_status)
        except SupervisorGaveUp:
            hosted.end()
            raise
        hosted.end()  # it ended normally (the lead's shutdown)

    root = Supervisor(
        f"host-{name}",
        [attrs.evolve(spec, start=watched)],
        strategy=Strategy.ONE_FOR_ONE,
        events=run.events,
    )
    async with trio.open_nursery() as nursery:
        await nursery.start(root.run)
        started(hosted)
        try:
            await trio.sleep_forever()
        finally:
            with trio.CancelScope(shield=True):
                await root.stop()
            nursery.cancel_scope.cancel()


def _check_teammate(options: RunOptions, run_id: str, name: str) -> None:
    if name not in options.teammates:
        raise ValueError(f"run {run_id} has no teammate {name!r}")


async def _read_run(
    backend: Backend, run_id: str, run_dir: Path, name: str
) -> tuple[RunOptions, str | None]:
    """Run *run_id*'s options and request, from the backend's copy; teammate *name*'s
    files written into *run_dir* (the run's own documents stay on the backend: this
    host must not send back an old copy of them)."""
    read = await backend.copy_of_run(
        run_id, run_dir, read=("config.json", "state.json"), bring=teammate_files(name)
    )
    raw, state = read["config.json"], read["state.json"]
    if raw is None:
        raise ValueError(f"run {run_id} has no config.json on {backend.name}")
    data = json.loads(raw)
    request = None
    if state is not None:
        with contextlib.suppress(ValueError, AttributeError, TypeError):
            request = json.loads(state).get("request", {}).get("text")
    return RunOptions.from_json(data), request


async def _follow_board(
    board: TaskBoard, wakeups: Wakeups, errors: tuple[type[BaseException], ...]
) -> None:
    """Feed *wakeups* with the board's changes, whoever made them: the tasks that
    changed, as the lead's process hands it each operation's result (the whole
    list would wake every owner of a pending task at every change)."""
    seq = -1
    seen: dict[str, Task] = {}
    while True:
        try:
            seq = await board.wait_for_change(seq)
            tasks = await board.known()  # as wait_for_change just read it
            wakeups.changed([t for t in tasks if seen.get(t.id) != t])
            seen = {t.id: t for t in tasks}
        except errors:
            await trio.sleep(1.0)  # the server is away: the teammate's own poll goes on


async def watch_remote(
    backend: Backend,
    run_id: str,
    team: Team,
    post: PostOffice,
    events: EventLog,
    *,
    grace: float,
    task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
) -> None:
    """The lead's side of ``--remote`` (see the module docstring), until cancelled."""
    try:
        async with backend.open_workers() as registry:
            if team.checkouts is not None:  # the base branch the workers' clones start from
                await team.checkouts.publish_base()
            await registry.want(run_id, team.teammates, time.time())
            task_status.started()
            await _watch_hosts(registry, run_id, team, post, events, grace)
    finally:
        # A connection of its own: the one above is closed by the cancellation.
        with (
            trio.CancelScope(shield=True),
            trio.move_on_after(5),
            contextlib.suppress(*backend.errors()),
        ):
            async with backend.open_workers() as registry:
                await registry.unwant(run_id, team.teammates)


async def _watch_hosts(
    registry: WorkerDirectory,
    run_id: str,
    team: Team,
    post: PostOffice,
    events: EventLog,
    grace: float,
) -> None:
    watch = HostingWatch(team.teammates, grace)
    while True:
        with contextlib.suppress(*registry.errors):  # the server away: look again
            hosts = await registry.hosts(run_id, team.teammates)
            held = {name: None if w == RETIRED else w for name, w in hosts.items()}
            for name in watch.taken_anew(held, frozenset(team.stopped)):
                team.stopped.pop(name, None)  # hosted again: it works again
            # A retired teammate ended for good on its worker, which told the lead.
            for lost in watch.observe(trio.current_time(), hosts):
                last = lost.last_worker or "none"
                why = f"no worker has hosted it for {grace:g} s (last worker: {last})"
                failures = await registry.failures(run_id, (lost.teammate,))
                if lost.teammate in failures:
                    why += f"; a worker could not start it: {failures[lost.teammate]}"
                await hand_back(team, lost.teammate, why, post, events)
        await trio.sleep(WATCH_EVERY)
