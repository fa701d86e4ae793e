"""A run's stores, opened on the backend chosen (:class:`~coterie.backends.protocol.RunStores`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from coterie.backends.protocol import RunStores

if TYPE_CHECKING:
    from collections.abc import Callable
    from contextlib import AbstractAsyncContextManager
    from pathlib import Path

    from coterie.backends.choice import Backend
    from coterie.board import BoardCorruption
    from coterie.events import EventLog

__all__ = ["RunStores", "open_stores"]


def open_stores(
    backend: Backend,
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
) -> AbstractAsyncContextManager[RunStores]:
    """Open run *run_id*'s stores on *backend* (its board only for a *team*).

    The process that *holds_run* (the one running it) holds the run for as
    long as they are open, where the backend spans hosts; another process of
    the run (a worker hosting one teammate) passes False. *bring* chooses the
    files of the backend's copy of the run directory that replace this host's
    (by default all but the run's config, which each host keeps as it wrote it).
    A worker passes its id as *hosted_by*: its teammates' files are written under
    its hosting leases (a write after another worker took one over is refused).
    """
    return backend.provider.open_stores(
        backend.location,
        run_id,
        run_dir,
        events,
        team=team,
        on_change=on_change,
        on_corruption=on_corruption,
        holds_run=holds_run,
        bring=bring,
        hosted_by=hosted_by,
    )
