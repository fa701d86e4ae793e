"""What a backend provides: the protocols every backend implements, and nothing else.

A backend is where a run's shared state lives (docs/architecture.md,
"Backends"). It provides, through one :class:`Provider`:

- a run's **stores** (:class:`RunStores`): the post office, the task board of
  a team, and, where the run can move between hosts, a :class:`Replica` of
  its run directory;
- a **reader** (:class:`RunReader`) for the commands that look into runs
  without touching them (``runs``, ``tasks``, ``inbox``): the catalogue of
  runs, a run's board, an actor's unacknowledged mail, the run's events;
- a **source** (:class:`RunSource`) for those that follow a run as it goes
  (``watch``, ``observe``);
- an **address** (:class:`RunAddress`) for those that talk to a live run
  through its control channel (``crash``, ``stop``, ``cancel``, the observer);
- optionally a **worker directory** (:class:`WorkerDirectory`) where workers
  on other hosts offer to host teammates, and a **fetch** of a run held by
  the backend into this host's home (resume on any host).

The commands are written once, against these protocols; the conformance
suite (:mod:`coterie.backends.testing`) says when a backend keeps their
promises.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

import attrs

from coterie.errors import CoterieError

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from contextlib import AbstractAsyncContextManager
    from pathlib import Path

    from coterie.board import BoardCorruption, LogEntry, TaskBoard
    from coterie.events import Event, EventLog
    from coterie.mailbox import PostOffice
    from coterie.messages import Message
    from coterie.workers.placement import Wanted, WorkerInfo

__all__ = [
    "Pending",
    "Provider",
    "ReadError",
    "Replica",
    "RunAddress",
    "RunReader",
    "RunSource",
    "RunStores",
    "RunSummary",
    "WorkerDirectory",
]


class ReadError(CoterieError):
    """What a reader tells the user instead of an answer, with the exit code to use
    (2: nothing of that name; 1: it is there but cannot be read)."""

    def __init__(self, message: str, code: int = 2) -> None:
        super().__init__(message)
        self.code = code


class Replica(Protocol):
    """A run directory's copy kept by the backend, so that another host can go on
    with the run or one of its actors (a log is appended to, a document put)."""

    def put(self, rel: str, data: bytes) -> int:
        """Replace the document *rel* (relative to the run directory)."""
        ...

    def replica(self, rel: str) -> Any:
        """What copies the appends to the log *rel* (``append(data)``, ``flush()``)."""
        ...

    async def flush(self, upto: int | None = None) -> None:
        """Return once every write so far (or up to write *upto*) is on the backend."""
        ...

    async def materialize(
        self, run_dir: Path, only: Callable[[str], bool] | None = None
    ) -> list[str]:
        """Write the backend's copy of every file (or those *only* accepts) into
        *run_dir*, replacing what is there; the paths written."""
        ...


@attrs.frozen
class RunStores:
    """What a run keeps its shared state in, open."""

    post: PostOffice
    board: TaskBoard | None = None
    #: The run directory's copy on the backend (None where there is no other host).
    mirror: Replica | None = None


class RunSummary(Protocol):
    """One run as ``coterie runs`` shows it."""

    @property
    def run_id(self) -> str: ...
    @property
    def command(self) -> str: ...
    @property
    def state(self) -> str: ...
    @property
    def request(self) -> str: ...
    @property
    def result(self) -> str | None: ...
    @property
    def updated_at(self) -> float | None: ...
    @property
    def where(self) -> str | None:
        """Where it ran (``host:workspace``) when the backend spans workspaces."""
        ...

    def to_dict(self) -> dict[str, Any]: ...


@attrs.frozen
class Pending:
    """A message an actor has not acknowledged; on a server, whether it is out
    with a receiver now and how often it was delivered (None where not known)."""

    message: Message
    in_flight: bool | None = None
    deliveries: int | None = None


class RunReader(Protocol):
    """The runs of a backend, read without taking a lock or writing anything.
    Each method raises :class:`ReadError` (or :class:`~coterie.runs.UnknownRun`)."""

    #: Where the runs are, for a message: ``the workspace /x`` or a server's URL.
    place: str
    #: Whether runs of several workspaces and hosts are listed together.
    spans_workspaces: bool

    def runs(self) -> list[RunSummary]:
        """Every run, oldest first."""
        ...

    def find(self, run_id: str | None) -> RunSummary:
        """Run *run_id* (a unique prefix will do), or the latest run when None."""
        ...

    def is_run(self, name: str) -> bool:
        """Whether *name* is exactly a run's id."""
        ...

    def board(self, run: RunSummary) -> list[dict[str, Any]] | None:
        """The tasks of *run*'s board (``Task.to_json()``, id order); None if it has none."""
        ...

    def actors(self, run: RunSummary) -> list[str]:
        """The actors with a mailbox in *run*, sorted."""
        ...

    def pending(self, run: RunSummary, actor: str) -> list[Pending]:
        """*actor*'s unacknowledged messages, oldest first (nothing claimed or acked)."""
        ...

    def events(self, run: RunSummary) -> list[Event]:
        """*run*'s events, in order, each once."""
        ...

    def resume_hint(self, run_id: str) -> str:
        """The command that resumes *run_id* from here."""
        ...


class RunSource(Protocol):
    """One run, followed as it goes (``watch``, ``observe``); Trio only."""

    run_id: str
    #: Its config as recorded (``{}`` if unreadable).
    config: dict[str, Any]

    async def live(self) -> str | None:
        """Who runs it now (``""``: a process of this host), None if nobody does."""
        ...

    async def events(self, wait: float = 0.0) -> list[Event]:
        """The events written since the last call, each once; waits up to *wait*
        seconds for one if there is none yet."""
        ...

    async def board(self) -> list[LogEntry] | None:
        """The board's log (None: the run has no board)."""
        ...

    async def mail_counts(self) -> dict[str, int]:
        """Each actor's unacknowledged messages (pending or in flight)."""
        ...

    async def outcome(self) -> tuple[str, str | None]:
        """Where the run stands now, and its result if it has one."""
        ...


class RunAddress(Protocol):
    """How a process outside a run reaches it (its control channel)."""

    run_id: str

    async def live(self) -> bool:
        """Whether a process runs it now."""
        ...

    def post_office(self, reply: str) -> AbstractAsyncContextManager[PostOffice]:
        """The run's post office as a sender opens it; the mailbox *reply* (made by
        the caller) removed when it closes."""
        ...


class WorkerDirectory(Protocol):
    """Where workers offer to host teammates and runs say which they want hosted
    (docs/scale-out.md): heartbeats, wanted runs, and one hosting lease per
    teammate, taken by one worker at a time and renewed or released only by it."""

    #: What a call raises while the backend cannot be reached.
    errors: tuple[type[BaseException], ...]

    async def heartbeat(self, info: WorkerInfo, ttl: float) -> None:
        """Worker *info* is alive for *ttl* seconds more."""
        ...

    async def leave(self, worker_id: str) -> None:
        """Worker *worker_id* is gone."""
        ...

    async def workers(self) -> list[WorkerInfo]:
        """The live workers."""
        ...

    async def want(self, run_id: str, teammates: tuple[str, ...], since: float) -> None:
        """Run *run_id* wants *teammates* hosted."""
        ...

    async def unwant(self, run_id: str, teammates: tuple[str, ...] = ()) -> None:
        """Run *run_id* wants nothing hosted any more (its retired teammates forgotten)."""
        ...

    async def wanted(self) -> list[Wanted]:
        """The runs that want teammates hosted, oldest first."""
        ...

    async def try_host(self, run_id: str, teammate: str, worker_id: str, ttl: float) -> bool:
        """Take *teammate*'s lease if nobody holds it."""
        ...

    async def renew(
        self, leases: Sequence[tuple[str, str]], worker_id: str, ttl: float
    ) -> list[bool]:
        """Extend one's own leases of *leases* (``(run_id, teammate)`` pairs) at once;
        for each, False if it is not one's own any more."""
        ...

    async def release(self, run_id: str, teammate: str, worker_id: str) -> bool:
        """Drop one's own lease."""
        ...

    async def retire(self, run_id: str, teammate: str, worker_id: str) -> bool:
        """Mark one's own teammate ended for good (no worker starts it again)."""
        ...

    async def hosts(self, run_id: str, teammates: tuple[str, ...]) -> dict[str, str | None]:
        """Who hosts each of *teammates* (a worker id, ``RETIRED``, or None)."""
        ...

    async def failed(self, run_id: str, teammate: str, worker_id: str, reason: str) -> None:
        """Worker *worker_id* could not start *teammate*, for *reason* (one line)."""
        ...

    async def failures(self, run_id: str, teammates: tuple[str, ...]) -> dict[str, str]:
        """Why a worker last could not start each of *teammates* (those with a reason)."""
        ...


class Provider(Protocol):
    """A backend: what :data:`~coterie.backends.choice.PROVIDERS` names."""

    def parse(self, url: str) -> Any:
        """The location in *url*, checked (a :class:`~coterie.backends.choice.BackendError`)."""
        ...

    def of_run(self, recorded: str, given: str | None) -> Any:
        """The location a run recorded, with the credentials of *given* (the
        environment's URL) when it names the same place."""
        ...

    def url(self, location: Any) -> str:
        """*location*'s URL, without a password."""
        ...

    def errors(self) -> tuple[type[BaseException], ...]:
        """The exceptions of a backend that cannot be reached right now."""
        ...

    def client_errors(self) -> tuple[type[BaseException], ...]:
        """The exceptions of the backend's own client (none for one without a client):
        what the CLI says in one line when nothing waited one out."""
        ...

    def hold(self, location: Any, run_id: str, run_dir: Path) -> AbstractAsyncContextManager[None]:
        """Hold run *run_id* live for this process while the block runs (registered
        in the catalogue first); :class:`~coterie.runs.RunBusy` if another holds it."""
        ...

    def open_stores(
        self,
        location: Any,
        run_id: str,
        run_dir: Path,
        events: EventLog,
        *,
        team: bool,
        on_change: Callable[[object], None] | None,
        on_corruption: Callable[[BoardCorruption], None] | None,
        holds_run: bool,
        bring: Callable[[str], bool] | None,
        hosted_by: str | None,
    ) -> AbstractAsyncContextManager[RunStores]:
        """Run *run_id*'s stores (its board only for a *team*). What this process
        writes for the run is fenced by its hold (*holds_run*), or by the hosting
        lease of the worker *hosted_by* for its teammates' files: a write made after
        another process took that over is refused (:class:`~coterie.errors.HoldLost`)."""
        ...

    def reader(self, location: Any, workdir: Path) -> RunReader:
        """The runs of *backend* (on files: those of *workdir*)."""
        ...

    def open_source(
        self, location: Any, workdir: Path, run_id: str
    ) -> AbstractAsyncContextManager[RunSource]:
        """Run *run_id* (a unique prefix), to follow."""
        ...

    async def address(self, location: Any, workdir: Path, run_id: str) -> RunAddress:
        """Run *run_id* (a unique prefix), to reach."""
        ...

    async def fetch(self, location: Any, workdir: Path, run_id: str) -> Path | None:
        """Run *run_id* brought from the backend into *workdir*'s runs (None: the
        backend keeps no run elsewhere)."""
        ...

    async def copy_of_run(
        self,
        location: Any,
        run_id: str,
        run_dir: Path,
        *,
        read: tuple[str, ...],
        bring: Callable[[str], bool],
    ) -> dict[str, bytes | None]:
        """The backend's copy of run *run_id*: the documents *read* (None: not there),
        and the files *bring* accepts written into *run_dir* (a worker's teammate)."""
        ...

    def open_workers(self, location: Any) -> AbstractAsyncContextManager[WorkerDirectory]:
        """The worker directory (a :class:`~coterie.backends.choice.BackendError` if
        the backend has none)."""
        ...
