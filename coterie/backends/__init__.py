"""Backends: where a run's shared state lives, chosen in one place (docs/architecture.md).

This package owns the choice of a backend and everything a backend does. A
backend provides a run's stores (post office, task board, a replica of the
run directory where runs move between hosts), a reader and a source for the
commands that look at runs (``runs``, ``tasks``, ``inbox``, ``watch``,
``observe``), an address for those that talk to a live run (``crash``,
``stop``, ``cancel``), and optionally a worker directory and a fetch of a
run into this host (:mod:`.protocol`). :data:`~.choice.PROVIDERS` maps a
URL's scheme to the folder that serves it: ``files/`` (the default: the run
directory, one host) and ``redis/`` (a Redis or Valkey server, any host).
Nothing outside this package imports a backend's folder, and nothing but the
table names a scheme (``tests/test_architecture.py``); the conformance suite
:mod:`.testing` says when a backend keeps the protocol's promises.

The mailbox and board packages keep their pure cores (``coterie.mailbox.base``,
``coterie.board.ops`` / ``state`` / ``log`` / ``face``) public for the
backends that build on them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from coterie.backends.choice import BACKEND_ENV, PROVIDERS, Backend, BackendError
    from coterie.backends.files.address import RunDirectory
    from coterie.backends.protocol import (
        Pending,
        Provider,
        ReadError,
        Replica,
        RunAddress,
        RunReader,
        RunSource,
        RunStores,
        RunSummary,
        WorkerDirectory,
    )
    from coterie.backends.stores import open_stores

__all__ = [
    "BACKEND_ENV",
    "PROVIDERS",
    "Backend",
    "BackendError",
    "Pending",
    "Provider",
    "ReadError",
    "Replica",
    "RunAddress",
    "RunDirectory",
    "RunReader",
    "RunSource",
    "RunStores",
    "RunSummary",
    "WorkerDirectory",
    "open_stores",
]

#: Where each public name is defined, imported on first use (PEP 562): the
#: choice of a backend must not load the stores.
_HOMES = {
    **dict.fromkeys(("BACKEND_ENV", "PROVIDERS", "Backend", "BackendError"), "choice"),
    **dict.fromkeys(
        (
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
        ),
        "protocol",
    ),
    "open_stores": "stores",
    "RunDirectory": "files.address",  # the address of a run directory, for any caller
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"coterie.backends.{home}"), name)
    globals()[name] = value  # once is enough
    return value
