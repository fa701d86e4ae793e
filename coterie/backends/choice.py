"""Which backend a command or a run names, and the one table that maps a URL to it.

:class:`Backend` is the choice alone, made from ``--backend URL``,
``$COTERIE_BACKEND`` or what a run recorded, without opening anything: it
imports neither Trio nor the stores, so that the commands that only read
(``coterie runs``, ``tasks``, ``inbox``, ``watch``) and the fault commands
tell one backend from another without loading the runtime. :data:`PROVIDERS`
is the only place a URL's scheme is named: each scheme's module provides
:class:`~coterie.backends.protocol.Provider`, imported the first time a
command needs more than the choice.
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import TYPE_CHECKING, Any, cast

import attrs

from coterie.errors import CoterieError

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping
    from contextlib import AbstractAsyncContextManager
    from pathlib import Path

    from coterie.backends.protocol import (
        Provider,
        RunAddress,
        RunReader,
        RunSource,
        WorkerDirectory,
    )

__all__ = ["BACKEND_ENV", "PROVIDERS", "Backend", "BackendError"]

#: The environment variable a command reads when ``--backend`` is not given.
BACKEND_ENV = "COTERIE_BACKEND"

#: Every backend, by the scheme of its URL (``files`` is also the bare word):
#: the module whose ``PROVIDER`` serves it. A new backend is a line here and a
#: folder that passes :mod:`coterie.backends.testing`.
PROVIDERS = {
    "files": "coterie.backends.files.provider",
    "redis": "coterie.backends.redis.provider",
    "valkey": "coterie.backends.redis.provider",
}


class BackendError(CoterieError, ValueError):
    """A backend URL that cannot be used (a usage error), or a backend that cannot serve."""


def client_failures(leaves: Iterable[BaseException]) -> list[BaseException]:
    """The errors of a backend's own client among *leaves*, for the backends whose
    provider this process loaded (a run on files loads none: nothing is imported)."""
    found: list[BaseException] = []
    for module in dict.fromkeys(PROVIDERS.values()):
        loaded = sys.modules.get(module)
        if loaded is not None:
            kinds = cast("Provider", loaded.PROVIDER).client_errors()
            found += [e for e in leaves if kinds and isinstance(e, kinds)]
    return found


def _provider(scheme: str) -> Provider:
    return cast("Provider", importlib.import_module(PROVIDERS[scheme]).PROVIDER)


def _scheme(url: str) -> str:
    if url == "files":
        return "files"
    scheme, sep, _ = url.partition("://")
    if not sep or scheme not in PROVIDERS or scheme == "files":
        known = ", ".join(f"{s}://" for s in PROVIDERS if s != "files")
        raise BackendError(
            f"backend {url!r}: expected 'files' or a URL starting with one of {known}"
            " (files are the default backend)"
        )
    return scheme


@attrs.frozen
class Backend:
    """A backend chosen: its scheme and where it is (``location``: the provider's
    parsed URL, None on files)."""

    scheme: str = "files"
    location: Any = None

    @classmethod
    def parse(cls, url: str | None, env: Mapping[str, str] | None = None) -> Backend:
        """``--backend URL``, else ``$COTERIE_BACKEND``, else files; a bad URL is a
        :class:`BackendError`."""
        chosen = url if url else (env if env is not None else os.environ).get(BACKEND_ENV)
        if not chosen:
            return cls()
        scheme = _scheme(chosen)
        if scheme == "files":
            return cls()
        return cls(scheme, _provider(scheme).parse(chosen))

    @classmethod
    def of_run(cls, recorded: str | None, env: Mapping[str, str] | None = None) -> Backend:
        """The backend a run recorded (its URL, never with a password), with the
        credentials of ``$COTERIE_BACKEND`` when that names the same place."""
        if recorded is None:
            return cls()
        scheme = _scheme(recorded)
        if scheme == "files":
            return cls()
        given = (env if env is not None else os.environ).get(BACKEND_ENV)
        return cls(scheme, _provider(scheme).of_run(recorded, given))

    @property
    def on_files(self) -> bool:
        """Whether the run's state is in its run directory (no server)."""
        return self.location is None

    @property
    def provider(self) -> Provider:
        """What serves this backend (its module imported now)."""
        return _provider(self.scheme)

    @property
    def recorded(self) -> str | None:
        """What a run's options record (the URL without its password; None on files)."""
        return None if self.location is None else self.provider.url(self.location)

    @property
    def name(self) -> str:
        """How the user names it: ``files``, or its URL without the password."""
        return self.recorded or "files"

    # What the provider offers, for this backend (docs in :mod:`coterie.backends.protocol`).

    def errors(self) -> tuple[type[BaseException], ...]:
        """What a call raises while the backend cannot be reached."""
        return self.provider.errors()

    def hold(self, run_id: str, run_dir: Path) -> AbstractAsyncContextManager[None]:
        """Hold run *run_id* live while the block runs (:class:`~coterie.runs.RunBusy`
        if another process does)."""
        return self.provider.hold(self.location, run_id, run_dir)

    def reader(self, workdir: Path) -> RunReader:
        """The runs (on files: those of the workspace *workdir*), to read."""
        return self.provider.reader(self.location, workdir)

    def open_source(self, workdir: Path, run_id: str) -> AbstractAsyncContextManager[RunSource]:
        """Run *run_id* (a unique prefix), to follow."""
        return self.provider.open_source(self.location, workdir, run_id)

    async def address(self, workdir: Path, run_id: str) -> RunAddress:
        """Run *run_id* (a unique prefix), to reach while it runs."""
        return await self.provider.address(self.location, workdir, run_id)

    async def fetch(self, workdir: Path, run_id: str) -> Path | None:
        """Run *run_id* brought into *workdir*'s runs (None: nothing kept elsewhere)."""
        return await self.provider.fetch(self.location, workdir, run_id)

    async def copy_of_run(
        self, run_id: str, run_dir: Path, *, read: tuple[str, ...], bring: Callable[[str], bool]
    ) -> dict[str, bytes | None]:
        """The backend's copy of run *run_id*: documents *read*, files *bring*s into *run_dir*."""
        return await self.provider.copy_of_run(
            self.location, run_id, run_dir, read=read, bring=bring
        )

    def open_workers(self) -> AbstractAsyncContextManager[WorkerDirectory]:
        """The worker directory (a :class:`BackendError` if there is none)."""
        return self.provider.open_workers(self.location)
