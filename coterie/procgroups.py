"""A run's process groups on disk, so that a run killed with -9 leaves nothing running.

Every process a run starts -- a tool's shell command, a hook's command, an
MCP stdio server -- runs in a process group of its own, started through
:func:`coterie.processes.open_group`. While it runs, a record of the group sits in
the run's directory, ``procgroups/<pgid>-<start>``, where ``<start>`` is the
group leader's start time (field 22 of ``/proc/<pid>/stat``, clock ticks
since boot) and the file holds the boot id. The record is made durable
*before* the command is let go, and removed once the group is gone. A
process that dies without clean-up (kill -9, a power cut of the process)
leaves its records behind; the next start in the workspace kills those
groups (:func:`reap_workspace`).

A pid number is recycled once its process is gone, so a record alone never
justifies a kill. A process is killed only if it is in the recorded group
and started no earlier than the recorded leader, on the same boot, and the
group's leader (pid == pgid), if it still exists, is the recorded one (same
start time). Linux never hands out a pid that is still some process's group
id, so a member found under a recorded group whose leader is the recorded
one, or gone, belongs to it.
"""

from __future__ import annotations

import contextlib
import os
import signal
from pathlib import Path

__all__ = [
    "GroupRecord",
    "boot_id",
    "forget",
    "members",
    "record",
    "reap_run",
    "reap_workspace",
    "records_dir",
    "start_time",
]

_DIR = "procgroups"


def records_dir(run_dir: Path) -> Path:
    """Where a run's process groups are recorded (``ToolContext.process_groups``, the
    hooks' and the MCP servers' ``process_groups``)."""
    return run_dir / _DIR


class GroupRecord:
    """One recorded process group: its id, its leader's start time and its boot."""

    __slots__ = ("boot", "path", "pgid", "start")

    def __init__(self, path: Path, pgid: int, start: int, boot: str) -> None:
        self.path, self.pgid, self.start, self.boot = path, pgid, start, boot


def boot_id() -> str:
    """This boot's id (start times count from boot, so they compare only within one)."""
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return ""


def _stat(pid: int | str) -> tuple[int, int, str] | None:
    """(process group, start time, state) of *pid*, or None if it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            raw = f.read()
    except OSError:
        return None
    # The command name may hold spaces and parentheses; fields follow the last ')'.
    fields = raw[raw.rfind(b")") + 2 :].split()
    try:
        # fields[0] is field 3 (state), [2] field 5 (pgrp), [19] field 22 (starttime).
        return int(fields[2]), int(fields[19]), fields[0].decode()
    except (IndexError, ValueError):
        return None


def start_time(pid: int) -> int | None:
    """The start time of process *pid* (clock ticks since boot), or None if it is gone."""
    stat = _stat(pid)
    return None if stat is None else stat[1]


def record(directory: Path, pgid: int) -> GroupRecord:
    """Durably record group *pgid* (whose leader is alive) in *directory*.

    Raises OSError if it cannot be written (a full disk): the caller must then
    not let the program run.
    """
    start = start_time(pgid)
    if start is None:
        raise ProcessLookupError(f"process group {pgid} is gone before it was recorded")
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{pgid}-{start}"
    boot = boot_id()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        os.write(fd, (boot + "\n").encode())
        os.fsync(fd)
    finally:
        os.close(fd)
    dfd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(dfd)  # the new entry must survive a crash of this process
    finally:
        os.close(dfd)
    return GroupRecord(path, pgid, start, boot)


def forget(group: GroupRecord) -> None:
    """Remove the record of a group that is gone (not synced: a stale record is harmless)."""
    with contextlib.suppress(FileNotFoundError):
        group.path.unlink()


def _records(directory: Path) -> list[GroupRecord]:
    found: list[GroupRecord] = []
    try:
        entries = list(directory.iterdir())
    except OSError:
        return found
    for path in entries:
        pgid, _, start = path.name.partition("-")
        if not (pgid.isdigit() and start.isdigit()):
            continue
        try:
            boot = path.read_text().strip()
        except OSError:
            boot = ""
        found.append(GroupRecord(path, int(pgid), int(start), boot))
    return found


def members(group: GroupRecord) -> list[int]:
    """The live processes of *group* that provably belong to it (see the module doc)."""
    if group.boot != boot_id():
        return []  # another boot: every process of it is long gone
    leader = _stat(group.pgid)
    if leader is not None and leader[0] == group.pgid and leader[1] != group.start:
        return []  # the id now leads another group: the pid was recycled
    pids: list[int] = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return pids
    for entry in entries:
        if not entry.isdigit():
            continue
        stat = _stat(entry)
        if stat is None:
            continue
        pgrp, started, state = stat
        if pgrp == group.pgid and started >= group.start and state not in ("Z", "X"):
            pids.append(int(entry))
    return pids


def reap_run(run_dir: Path) -> int:
    """Kill the groups a dead run left behind (SIGKILL: their owner is gone, there is
    nobody to wait for a grace period) and remove their records; how many
    processes were killed. Call it only for a run no live process holds."""
    killed = 0
    for group in _records(run_dir / _DIR):
        # The group's id cannot be recycled while a member lives, so once one
        # member is proven ours the whole group is: kill it at once (killing
        # member by member would miss what they fork meanwhile).
        for attempt in range(10):
            found = members(group)
            if not found:
                break
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(group.pgid, signal.SIGKILL)
            killed += len(found) if attempt == 0 else 0
        forget(group)
    return killed


def reap_workspace(runs: Path) -> int:
    """:func:`reap_run` for every run under *runs* that no process holds; the count."""
    from coterie.runs import is_live

    killed = 0
    try:
        run_dirs = [p for p in runs.iterdir() if (p / _DIR).is_dir()]
    except OSError:
        return 0
    for run_dir in run_dirs:
        if not is_live(run_dir):
            killed += reap_run(run_dir)
    return killed
