"""Starting a program in a recorded process group, and ending the whole group.

:func:`open_group` runs a program in a new session, so its process group id
is its pid and everything it starts -- pipelines, ``&`` jobs, an MCP
server's helpers, grandchildren -- shares that group unless it deliberately
calls ``setsid``. When the block ends, whichever way (done, timed out,
cancelled), the whole group is taken down with the ladder SIGTERM, a short
grace, SIGKILL (:func:`end_group`), and the record is removed.

When the caller gives a directory to record groups in (a run's, see
:mod:`coterie.procgroups`), the program starts behind a gate: a tiny
``bash`` (it takes any descriptor number, where dash takes only 0-9) that
waits for one line on a private pipe before it execs the program. The group
is recorded durably, then the line is sent; so a coterie killed at any
moment leaves either a record of the group or a group that exits without
running anything (the gate reads end-of-file and exits 125). The gate reads
neither standard input nor output: a hook's input and an MCP server's
messages pass through untouched.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from typing import IO, TYPE_CHECKING, Any, TypeAlias

import trio

from coterie import procgroups

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Mapping, Sequence
    from pathlib import Path


__all__ = ["Redirect", "end_group", "group_alive", "open_group"]

#: Where a standard stream of the program goes: ``subprocess.PIPE``, ``DEVNULL``,
#: ``STDOUT`` (standard error only), an open file, or None (inherited).
Redirect: TypeAlias = "int | IO[Any] | None"

_POLL_INTERVAL = 0.02


def group_alive(pgid: int) -> bool:
    """Whether any non-zombie process is left in group *pgid*.

    Zombies count as gone: they hold no resources, and a container's init may
    never reap the orphans among them (this one's does, now and then).
    """
    groups = _live_groups()
    if groups is not None:
        return pgid in groups
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _live_groups() -> frozenset[int] | None:
    """The groups with a non-zombie member, from one pass over ``/proc`` (None: no ``/proc``)."""
    try:
        entries = os.listdir("/proc")
    except OSError:
        entries = []
    if not entries:
        return None
    groups: set[int] = set()
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        # The command name may hold spaces and parentheses; fields follow the last ')'.
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) > 2 and fields[0] not in (b"Z", b"X"):
            groups.add(int(fields[2]))
    return frozenset(groups)


#: The last pass over ``/proc`` (when, what), shared by every group being waited
#: for: ending a hundred groups at once costs one pass per poll, not a hundred.
_census: tuple[float, frozenset[int] | None] = (-1.0, None)


def _recently_alive(pgid: int, since: float) -> bool:
    """:func:`group_alive`, from a pass over ``/proc`` at most half a poll old and not
    older than *since* (the group's start: an older pass would not have seen it)."""
    global _census
    taken, groups = _census
    now = time.monotonic()
    if taken < since or now - taken > _POLL_INTERVAL / 2:
        groups = _live_groups()
        _census = (time.monotonic(), groups)
    if groups is None:
        return group_alive(pgid)
    return pgid in groups


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


async def _wait_group_gone(pgid: int, grace: float, since: float) -> bool:
    with trio.move_on_after(grace):
        # Nothing signals "the last member of a group died": poll /proc.
        while _recently_alive(pgid, since):  # noqa: ASYNC110
            await trio.sleep(_POLL_INTERVAL)
        return True
    return False


async def end_group(pgid: int, grace: float, *, since: float | None = None) -> None:
    """SIGTERM group *pgid*, wait up to *grace* seconds for it to go, then SIGKILL it.

    Returns once the group is gone (SIGKILL is not instant either), or after
    a second grace if something survives even that. Call it shielded from
    cancellation: it is the clean-up. *since* is when the group started
    (``time.monotonic()``; None: now): groups ended together share their looks
    at ``/proc`` taken since then.
    """
    since = time.monotonic() if since is None else since
    if not _recently_alive(pgid, since):
        return
    _signal_group(pgid, signal.SIGTERM)
    if await _wait_group_gone(pgid, grace, since):
        return
    _signal_group(pgid, signal.SIGKILL)
    await _wait_group_gone(pgid, grace, since)


def _gate(fd: int) -> list[str]:
    """``bash -c GATE coterie-gate``, to be followed by ARGV: wait for the go line on
    *fd* (inherited at its own number), close it, exec ARGV; exit 125 on end-of-file."""
    script = f'IFS= read -r go <&{fd} && [ "$go" = go ] || exit 125; exec {fd}<&-; exec "$@"'
    return ["bash", "-c", script, "coterie-gate"]


def _close(*fds: int) -> None:
    for fd in fds:
        if fd >= 0:
            with contextlib.suppress(OSError):
                os.close(fd)


async def _record_then_go(proc: trio.Process, records: Path, gate_w: int) -> procgroups.GroupRecord:
    """Record *proc*'s group durably, then let the program go; close *gate_w* either
    way. If recording fails (a full disk), the gate reads end-of-file and exits: the
    group has run nothing, and the error is raised."""
    try:
        with trio.CancelScope(shield=True):
            # Shielded: a group started must be recorded or ended, never neither.
            group = await trio.to_thread.run_sync(procgroups.record, records, proc.pid)
        with contextlib.suppress(OSError):  # the gate is gone already (killed from outside)
            os.write(gate_w, b"go\n")
    finally:
        _close(gate_w)
    return group


@contextlib.asynccontextmanager
async def open_group(
    argv: Sequence[str],
    *,
    cwd: Path,
    records: Path | None,
    env: Mapping[str, str] | None = None,
    stdin: Redirect = subprocess.DEVNULL,
    stdout: Redirect = subprocess.PIPE,
    stderr: Redirect = subprocess.PIPE,
    pass_fds: Sequence[int] = (),
    grace: float = 1.0,
    linger: bool = False,
) -> AsyncIterator[trio.Process]:
    """Run *argv* in *cwd* in a process group of its own while the block runs.

    With *records* (a run's ``procgroups/``) the group is recorded there
    durably before the program may do anything; OSError if that fails, and
    nothing ran. On the way out the whole group is ended (:func:`end_group`
    with *grace*), the leader reaped if it can be, the pipes closed and the
    record removed; a cancellation of the caller propagates after that.
    *pass_fds* stay open in the program, with their numbers.

    With *linger* (and *records*), a group whose leader exited by itself while
    the block ran normally, but whose background members live on (a hook's
    ``server &``), is left running and recorded: the run's end ends it
    (:func:`coterie.procgroups.reap_run`), and so does the next start after a
    kill -9. A block left by an error or a cancellation ends the group as ever.
    """
    gate_r, gate_w = os.pipe() if records is not None else (-1, -1)
    try:
        proc = await trio.lowlevel.open_process(
            [*_gate(gate_r), *argv] if records is not None else list(argv),
            cwd=cwd,
            env=dict(env) if env is not None else None,
            stdin=stdin,
            stdout=stdout,
            stderr=stderr,
            start_new_session=True,
            pass_fds=(*pass_fds, gate_r) if records is not None else tuple(pass_fds),
        )
    except BaseException:
        _close(gate_w)
        raise
    finally:
        _close(gate_r)  # the gate has its own copy
    # Once the leader exists: a look at /proc taken from now on has seen it.
    started = time.monotonic()
    group: procgroups.GroupRecord | None = None
    left_running = False
    try:
        if records is not None:
            group = await _record_then_go(proc, records, gate_w)
        yield proc
        left_running = (
            linger and group is not None and proc.returncode is not None and group_alive(proc.pid)
        )
    finally:
        with trio.CancelScope(shield=True):
            if not left_running:
                await end_group(proc.pid, grace, since=started)
            if proc.returncode is None:
                with trio.move_on_after(grace):
                    await proc.wait()
            for stream in (proc.stdin, proc.stdout, proc.stderr):
                if stream is not None:
                    await stream.aclose()
        if group is not None and not left_running:
            procgroups.forget(group)
