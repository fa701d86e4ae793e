"""Which backend a command or a run names: files (the default) or a Redis/Valkey server.

:class:`Backend` is the choice alone, made from ``--backend URL``,
``$COTERIE_BACKEND`` or what a run recorded, without opening anything: it
imports neither Trio nor the stores, so that the commands that only read
(``coterie runs``, ``tasks``, ``inbox``, ``watch``) and the fault commands
tell files from a server without loading the runtime. Opening the stores of
the backend chosen is :func:`coterie.runtime.backend.open_stores`.
"""

from __future__ import annotations

import contextlib
import os
from typing import TYPE_CHECKING

import attrs

from coterie.redisclient import BACKEND_ENV, RedisTarget, parse_backend

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["Backend"]


@attrs.frozen
class Backend:
    """Files (``target`` None) or the Redis server *target*."""

    target: RedisTarget | None = None

    @classmethod
    def parse(cls, url: str | None, env: Mapping[str, str] | None = None) -> Backend:
        """``--backend URL``, else ``$COTERIE_BACKEND``, else files; a bad URL is a
        :class:`~coterie.redisclient.BackendError`."""
        chosen = url if url else (env if env is not None else os.environ).get(BACKEND_ENV)
        if not chosen or chosen == "files":
            return cls()
        return cls(parse_backend(chosen))

    @classmethod
    def of_run(cls, recorded: str | None, env: Mapping[str, str] | None = None) -> Backend:
        """The backend a run recorded: its URL, with the password of
        ``$COTERIE_BACKEND`` when that names the same server and keyspace (a run
        records none)."""
        if recorded is None:
            return cls()
        target = parse_backend(recorded)
        given = (env if env is not None else os.environ).get(BACKEND_ENV)
        if given and given != "files":
            with contextlib.suppress(ValueError):
                theirs = parse_backend(given)
                if attrs.evolve(theirs, password=None, username=None) == attrs.evolve(
                    target, username=None
                ):
                    return cls(theirs)
        return cls(target)

    @property
    def recorded(self) -> str | None:
        """What a run's options record (the URL without its password)."""
        return None if self.target is None else self.target.url
