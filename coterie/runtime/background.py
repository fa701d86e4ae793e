"""The run's background commands: owned by the run, not by the tool call that started them.

A Bash call with ``run_in_background`` (or a Monitor) hands its command to
the run's :class:`BackgroundShells`, which

- records the task durably (``background/<id>.json``, :mod:`.bgrecords`)
  and starts it through :func:`coterie.processes.open_group` (its process
  group recorded in the run's ``procgroups/`` before it runs), as a task of
  its own nursery: the tool call returns as soon as the program runs;
- sends its standard output and error straight to ``background/<id>.output``
  (the file descriptor is the program's: coterie copies nothing, and what
  was printed survives a crash of coterie); a Monitor's output goes through
  a pipe instead, each line appended to the file and told to the owner;
- when it ends, appends how it ended to the file, records it, emits
  ``background.finished`` and queues a notice for its owner (the agent that
  started it), which the agent gets before its next model call
  (:func:`coterie.tools.background.background_notices`) or, idle, as the
  prompt that wakes it (:meth:`BackgroundShells.next_wakeup`);
- ends every task's whole group when the run ends, whichever way (done,
  Ctrl-C, SIGTERM: the nursery is cancelled and each group gets SIGTERM, a
  grace, SIGKILL), recording it as stopped with the run so that a resumed run
  tells the owner. After a kill -9 the start-up reaper kills the groups, and
  :meth:`BackgroundShells.run` finds their records still ``running``: the
  owners are told the tasks were lost.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs
import trio

from coterie.errors import CoterieError
from coterie.processes import open_group
from coterie.procgroups import records_dir
from coterie.runtime.bgrecords import (
    COMPLETED,
    FAILED,
    RUNNING,
    STOPPED,
    TaskRecord,
    append_trailer,
    event_notice,
    finish_notice,
    load_records,
    new_task_id,
)
from coterie.tools.background import Started, Stopped

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Mapping, Sequence

    from coterie.events import EventLog

__all__ = ["BackgroundShells", "background_dir"]

#: The longest Monitor line told to the agent (the file keeps it whole).
_EVENT_CHARS = 2_000


def background_dir(run_dir: Path) -> Path:
    """Where a run keeps its background tasks' records and output files."""
    return run_dir / "background"


@attrs.define(eq=False)
class _Live:
    record: TaskRecord
    scope: trio.CancelScope = attrs.field(factory=trio.CancelScope)
    done: trio.Event = attrs.field(factory=trio.Event)
    stopped_by_call: bool = False


@attrs.define(eq=False)
class BackgroundShells:
    """The background tasks of one run (see the module docstring); open it with :meth:`open`."""

    directory: Path
    #: The run's ``procgroups/`` (None: groups not recorded, for tests).
    records: Path | None
    events: EventLog | None = None
    kill_grace: float = 1.0
    #: How long a wake-up waits for more notices after the first (a Monitor's burst
    #: of lines, a command's last line and its end) so that they come as one prompt.
    batch: float = 0.2
    _nursery: trio.Nursery | None = attrs.field(init=False, default=None)
    _scope: trio.CancelScope = attrs.field(init=False, factory=trio.CancelScope)
    _live: dict[str, _Live] = attrs.field(init=False, factory=dict)
    _known: dict[str, TaskRecord] = attrs.field(init=False, factory=dict)
    _read_at: dict[str, int] = attrs.field(init=False, factory=dict)
    #: agent -> notices waiting, each with the id of the task it closes (None: an event).
    _notices: dict[str, list[tuple[str | None, str]]] = attrs.field(init=False, factory=dict)
    _changed: trio.Event = attrs.field(init=False, factory=trio.Event)

    @classmethod
    def of_run(cls, run_dir: Path, events: EventLog | None = None) -> BackgroundShells:
        """The background tasks of the run in *run_dir*."""
        return cls(background_dir(run_dir), records_dir(run_dir), events)

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Own the run's background tasks until :meth:`close` (or a cancellation), then
        end them all. Reports started once what a dead process of the run left is
        queued for the owners (so that the agents, started after, find it)."""
        self._recover()
        try:
            with self._scope:
                async with trio.open_nursery() as nursery:
                    self._nursery = nursery
                    task_status.started()
                    await trio.sleep_forever()
        finally:
            self._nursery = None

    def close(self) -> None:
        """End every task (their groups are ended before :meth:`run` returns); no task
        starts from now on."""
        self._nursery = None
        self._scope.cancel()

    @contextlib.asynccontextmanager
    async def open(self) -> AsyncIterator[BackgroundShells]:
        """:meth:`run` while the block runs, then :meth:`close` (for a program of its own)."""
        async with trio.open_nursery() as nursery:
            await nursery.start(self.run)
            try:
                yield self
            finally:
                self.close()

    # -- what the tools call ------------------------------------------------

    async def start(
        self,
        *,
        agent: str,
        command: str,
        argv: Sequence[str],
        cwd: Path,
        env: Mapping[str, str],
        description: str,
        monitor_ms: int | None = None,
    ) -> Started:
        """Start a task for *agent*; returns once its program runs (see the module doc)."""
        nursery = self._nursery
        if nursery is None:
            raise CoterieError("the run is ending: no background command can start now")
        task_id = new_task_id()
        record = TaskRecord(
            id=task_id,
            agent=agent,
            kind="bash" if monitor_ms is None else "monitor",
            command=command,
            description=description,
            output=str(self.directory / f"{task_id}.output"),
        )
        await trio.to_thread.run_sync(self._save_new, record)
        live = _Live(record)
        await nursery.start(self._run, live, list(argv), cwd, dict(env), monitor_ms)
        self._emit(
            "background.started",
            task=task_id,
            agent=agent,
            kind=record.kind,
            command=command,
            description=description,
            output=record.output,
        )
        return Started(task_id, Path(record.output))

    async def stop(self, task_id: str) -> Stopped | None:
        """End task *task_id*'s whole group and wait for it; None if it is not running."""
        live = self._live.get(task_id)
        if live is None:
            return None
        live.stopped_by_call = True
        live.scope.cancel()
        await live.done.wait()
        return Stopped(task_id, live.record.command, live.record.kind)

    def read_new(self, task_id: str) -> str | None:
        """What task *task_id* printed since the previous call (None: no such task)."""
        record = self._known.get(task_id)
        if record is None:
            return None
        start = self._read_at.get(task_id, 0)
        try:
            with open(record.output, "rb") as f:
                f.seek(start)
                data = f.read(4 * 1024 * 1024)
        except OSError:
            data = b""
        self._read_at[task_id] = start + len(data)
        return data.decode("utf-8", "replace")

    def take_notices(self, agent: str) -> list[str]:
        """The notices waiting for *agent*, each given once; the tasks they close are
        recorded as told."""
        waiting = self._notices.pop(agent, [])
        for task_id, _ in waiting:
            record = self._known.get(task_id or "")
            if record is not None and not record.notified:
                record.notified = True
                record.save(self.directory, sync=False)
        return [text for _, text in waiting]

    # -- what the run calls -------------------------------------------------

    def busy(self, agent: str) -> bool:
        """Whether *agent* has a background task running."""
        return any(live.record.agent == agent for live in self._live.values())

    def running(self) -> list[str]:
        """The ids of the tasks running now."""
        return sorted(self._live)

    def owns(self, task_id: str) -> bool:
        """Whether *task_id* is a background task of this run (running or not)."""
        return task_id in self._known

    async def next_wakeup(self, agent: str) -> str | None:
        """The prompt that wakes *agent*, idle: its notices, once there are some; None
        when it has none and no task of its running (nothing will come)."""
        while True:
            if self._notices.get(agent):
                await trio.sleep(self.batch)
                return "\n\n".join(self.take_notices(agent))
            if not self.busy(agent):
                return None
            await self._changed.wait()

    # -- the tasks ----------------------------------------------------------

    def _save_new(self, record: TaskRecord) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        # Durable before the program runs: a kill -9 from now on is reported, not lost.
        record.save(self.directory, sync=True)

    async def _run(
        self,
        live: _Live,
        argv: list[str],
        cwd: Path,
        env: dict[str, str],
        monitor_ms: int | None,
        task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        record = live.record
        fd = os.open(record.output, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        code: int | None = None
        expired = False
        ended_with_run = True
        try:
            with live.scope:
                async with open_group(
                    argv,
                    cwd=cwd,
                    records=self.records,
                    env=env,
                    stdin=subprocess.DEVNULL,
                    stdout=fd if monitor_ms is None else subprocess.PIPE,
                    stderr=subprocess.STDOUT,
                    grace=self.kill_grace,
                ) as proc:
                    if monitor_ms is None:
                        os.close(fd)  # the program has its own copy
                        fd = -1
                    self._live[record.id] = live
                    self._known[record.id] = record
                    task_status.started()
                    if monitor_ms is None:
                        code = await proc.wait()
                    else:
                        with trio.move_on_after(monitor_ms / 1000) as timer:
                            await self._watch(record, proc, fd)
                            code = await proc.wait()
                        expired = timer.cancelled_caught
            ended_with_run = False
        finally:
            if fd >= 0:
                os.close(fd)
            if record.id in self._known:  # it ran (not a failed start)
                with trio.CancelScope(shield=True):
                    await self._ended(live, code, expired=expired, with_run=ended_with_run)
            else:  # it never ran: nothing to report later either
                record.status, record.why, record.notified = FAILED, "could not start", True
                record.save(self.directory, sync=False)
            # Only now: its owner is not idle-free of it until its notice is queued.
            self._live.pop(record.id, None)
            live.done.set()
            self._wake()

    async def _watch(self, record: TaskRecord, proc: trio.Process, fd: int) -> None:
        """A Monitor's lines: each appended to its file and told to its owner."""
        assert proc.stdout is not None
        pending = b""
        async for chunk in proc.stdout:
            os.write(fd, chunk)
            *lines, pending = (pending + chunk).split(b"\n")
            for line in lines:
                self._event_line(record, line)
        if pending:
            self._event_line(record, pending)

    def _event_line(self, record: TaskRecord, raw: bytes) -> None:
        text = raw.decode("utf-8", "replace").rstrip("\r")
        if text.strip():
            self._queue(record.agent, None, event_notice(record, text[:_EVENT_CHARS]))

    async def _ended(self, live: _Live, code: int | None, *, expired: bool, with_run: bool) -> None:
        record = live.record
        record.ended_at = time.time()
        record.exit_code = code
        if with_run:
            record.status, record.why = STOPPED, "was stopped when the run ended"
        elif live.stopped_by_call:
            record.status, record.why = STOPPED, "was stopped"
            record.notified = True  # the agent stopped it: nothing to tell
        elif expired:
            record.status, record.why = STOPPED, "expired; start it again if still needed"
        elif record.kind == "monitor":
            record.status, record.why = COMPLETED, "ended: its command exited"
        elif code == 0:
            record.status, record.why = COMPLETED, "finished (exit code 0)"
        elif code is not None and code < 0:
            record.status, record.why = FAILED, f"was killed by signal {-code}"
        else:
            record.status, record.why = FAILED, f"failed (exit code {code})"
        if with_run:
            # Not synced: ending a hundred tasks must not take a hundred fsyncs; a
            # record lost to a crash now says "running", and is reported as lost.
            self._persist(record, sync=False)
        else:
            await trio.to_thread.run_sync(self._persist, record, True)
        self._emit(
            "background.finished",
            task=record.id,
            agent=record.agent,
            kind=record.kind,
            status=record.status,
            exit_code=code,
            output=record.output,
            summary=record.summary,
        )
        if not record.notified and not with_run:
            self._queue(record.agent, record.id, finish_notice(record))

    def _persist(self, record: TaskRecord, sync: bool) -> None:
        append_trailer(record, sync=sync)
        record.save(self.directory, sync=sync)

    def _recover(self) -> None:
        """Records a previous process of the run left: lost tasks and untold ends."""
        for record in load_records(self.directory):
            self._known[record.id] = record
            if record.status == RUNNING:
                record.status = FAILED
                record.why = (
                    "was lost: the run was killed while it ran, and its processes with it;"
                    " what it printed until then is in its output file"
                )
                append_trailer(record)
                record.save(self.directory, sync=True)
            if not record.notified:
                self._queue(record.agent, record.id, finish_notice(record))

    def _queue(self, agent: str, task_id: str | None, text: str) -> None:
        self._notices.setdefault(agent, []).append((task_id, text))
        self._wake()

    def _wake(self) -> None:
        self._changed.set()
        self._changed = trio.Event()

    def _emit(self, type: Any, **data: object) -> None:
        # ``type`` is one of coterie.eventtypes' literals (typed loosely here).
        if self.events is not None:
            self.events.emit(type, **data)
