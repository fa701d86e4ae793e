"""The files backend's :class:`~coterie.backends.protocol.Provider`: a run's state in
its run directory under the coterie home (the default; one host).

Light to import: ``coterie runs``, ``tasks`` and ``inbox`` read files without
Trio, the runtime or a server's client.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any

from coterie.backends.choice import BackendError

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable
    from contextlib import AbstractAsyncContextManager
    from pathlib import Path

    from coterie.backends.protocol import (
        RunAddress,
        RunReader,
        RunSource,
        RunStores,
        WorkerDirectory,
    )
    from coterie.board import BoardCorruption
    from coterie.events import EventLog

__all__ = ["PROVIDER", "FilesProvider"]


class FilesProvider:
    """A run's state in its run directory (docs/runtime.md)."""

    def parse(self, url: str) -> None:
        return None

    def of_run(self, recorded: str, given: str | None) -> None:
        return None

    def url(self, location: Any) -> str:
        return "files"

    def errors(self) -> tuple[type[BaseException], ...]:
        return (OSError,)

    def client_errors(self) -> tuple[type[BaseException], ...]:
        return ()

    @contextlib.asynccontextmanager
    async def hold(self, location: Any, run_id: str, run_dir: Path) -> AsyncIterator[None]:
        import trio

        from coterie.runs import hold_run

        await trio.lowlevel.checkpoint()
        with hold_run(run_dir):  # the run's lock: released by the kernel if we die
            yield

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
        from coterie.backends.files.stores import open_stores

        return open_stores(
            run_dir, events, team=team, on_change=on_change, on_corruption=on_corruption
        )

    def reader(self, location: Any, workdir: Path) -> RunReader:
        from coterie.backends.files.reader import FileReader

        return FileReader(workdir)

    def open_source(
        self, location: Any, workdir: Path, run_id: str
    ) -> AbstractAsyncContextManager[RunSource]:
        from coterie.backends.files.source import open_source

        return open_source(workdir, run_id)

    async def address(self, location: Any, workdir: Path, run_id: str) -> RunAddress:
        from coterie.backends.files.address import RunDirectory
        from coterie.runs import find_run

        return RunDirectory(find_run(workdir, run_id))

    async def fetch(self, location: Any, workdir: Path, run_id: str) -> Path | None:
        return None  # every run on files is in this home already

    async def copy_of_run(
        self,
        location: Any,
        run_id: str,
        run_dir: Path,
        *,
        read: tuple[str, ...],
        bring: Callable[[str], bool],
    ) -> dict[str, bytes | None]:
        raise BackendError(f"run {run_id} has no copy elsewhere: its run directory is the run")

    def open_workers(self, location: Any) -> AbstractAsyncContextManager[WorkerDirectory]:
        raise BackendError(
            "workers need a server every host reaches (files are one host's): --backend URL"
        )


PROVIDER = FilesProvider()
