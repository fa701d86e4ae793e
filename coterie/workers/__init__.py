"""Workers: processes that host teammates for runs that want them (docs/scale-out.md).

This package owns who hosts which teammate when a team is spread over
several processes or hosts on a Redis/Valkey backend: a worker's heartbeat
(a key with a time to live, renewed while it lives), the runs that want their
teammates hosted elsewhere (``coterie team --remote``), and the hosting lease
of each teammate (held by one worker at a time, renewed with the heartbeat,
lapsing when the worker dies so that a live worker takes the teammate over).
Which teammates a worker should take, and when a run must be told that
nobody hosts a teammate, are pure decisions (``placement.py``); the
backend's worker directory (:class:`coterie.backends.WorkerDirectory`, on
Redis ``coterie/backends/redis/workers.py``) only reads and writes keys,
atomically where two workers could race. It knows nothing of actors, mailboxes or the board.
"""

from coterie.workers.host import Hosted, WorkerConfig, serve_worker
from coterie.workers.placement import (
    RETIRED,
    HostingWatch,
    StartBackoff,
    Unhosted,
    Wanted,
    WorkerInfo,
    choose_claims,
)

__all__ = [
    "RETIRED",
    "Hosted",
    "HostingWatch",
    "StartBackoff",
    "Unhosted",
    "Wanted",
    "WorkerConfig",
    "WorkerInfo",
    "choose_claims",
    "serve_worker",
]
