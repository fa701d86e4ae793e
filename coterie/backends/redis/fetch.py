"""Resume on any host: a run the Redis server holds, brought into this coterie home.

``coterie resume RUN --backend redis://…`` on a host (or a coterie home)
that has never seen the run: :func:`fetch_run` finds it among the runs the
server knows (:mod:`coterie.backends.redis.registry`, a unique prefix will do), refuses
it while another process holds it live, and writes the server's copy of its
run directory (:mod:`coterie.backends.redis.mirror`) into ``runs_root(workdir)/<id>``,
the layout of :mod:`coterie.runs`. Its ``config.json`` names the workspace
it is resumed from (paths inside the old workspace follow, as for a moved
workspace) and is signed again under this user's key: the server is
trusted with the run (docs/scale-out.md), as whoever can write to it can
already send the agents messages. The directory is written beside its
final place and renamed into it, so a fetch cut short leaves no half run
that ``coterie runs`` would list. The resume then goes on as usual: the
mailboxes, the board and the events are on the server already.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from coterie.backends.redis.client import BackendError, connect, server_errors
from coterie.backends.redis.mirror import RunMirror
from coterie.backends.redis.registry import dead_here, find_registered, live_holder
from coterie.errors import CoterieError
from coterie.runs import DamagedRun, RunBusy, UnknownRun, rebased, runs_root, write_config

if TYPE_CHECKING:
    from coterie.backends.redis.client import RedisTarget

__all__ = ["fetch_run"]


async def fetch_run(target: RedisTarget, workdir: Path, run_id: str) -> Path:
    """The directory of run *run_id* (or a unique prefix), fetched from *target* into
    the runs of *workdir* (a resolved path; see the module docstring);
    :class:`~coterie.runs.UnknownRun`, :class:`~coterie.runs.RunBusy` or
    :class:`~coterie.runs.DamagedRun` if it cannot be, a
    :class:`~coterie.backends.redis.client.BackendError` if the server cannot be read."""
    try:
        return await _fetch(target, workdir, run_id)
    except* CoterieError as group:  # raised inside the client's task group: bare again
        raise _first(group) from None
    except* server_errors() as group:
        raise BackendError(f"cannot read {target.url}: {_first(group)}") from None


def _first(error: BaseException) -> BaseException:
    while isinstance(error, BaseExceptionGroup):
        error = error.exceptions[0]
    return error


async def _fetch(target: RedisTarget, workdir: Path, run_id: str) -> Path:
    async with connect(target) as client:
        found = await find_registered(client, target, run_id)
        holder = await live_holder(client, target, found)
        if holder is not None and not dead_here(holder):
            raise RunBusy(f"run {found} is being run by {holder} right now")
        mirror = RunMirror(client, target, found)
        raw = await mirror.read("config.json")
        if raw is None:
            raise UnknownRun(f"run {found} on {target.url} has no config.json to resume it with")
        try:
            config = json.loads(raw)
            if not isinstance(config, dict):
                raise ValueError("not an object")
        except ValueError as exc:
            damaged = f"run {found}: its config.json on {target.url} is damaged ({exc})"
            raise DamagedRun(damaged) from None
        root = runs_root(workdir)
        final = root / found
        if (final / "config.json").is_file():
            return final  # fetched before (or run here)
        staging = root / f".fetch-{found}-{secrets.token_hex(4)}"
        staging.mkdir(parents=True)
        try:
            await mirror.materialize(staging)
            (staging / "mailboxes").mkdir(exist_ok=True)
            recorded = Path(str(config.get("workdir") or workdir))
            write_config(staging, {**rebased(config, recorded, workdir), "workdir": str(workdir)})
            os.rename(staging, final)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
    return final
