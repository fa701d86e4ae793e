"""Running a shell command in its own process group, and killing the group.

The command runs as ``bash -c`` in a new session (``start_new_session``), so
its process group id is its pid and everything it starts -- pipelines,
``&`` jobs, grandchildren -- shares that group unless it deliberately calls
``setsid``. Whatever way the call ends (exit, timeout, cancellation), the
whole group is taken down with the ladder SIGTERM, a short grace, SIGKILL.

When the caller gives a directory to record groups in (a run's, see
:mod:`coterie.procgroups`), the
command starts behind a gate: a tiny ``bash`` (it takes any descriptor
number, where dash takes only 0-9) that waits for one line on a private pipe
before it execs the command. The group is recorded durably,
then the line is sent; so a coterie killed at any moment leaves either a
record of the group or a group that exits without running anything (the
gate reads end-of-file and exits 125).

Standard output and standard error share one pipe, so the model sees them
interleaved as they happened. A background child may keep that pipe open
after the main process exits; the reader then gets a short grace to collect
what is there, and the group kill ends the rest, so such a child can never
make the call hang.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections import deque
from typing import TYPE_CHECKING

import attrs
import trio

from coterie import procgroups

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from pathlib import Path

__all__ = ["OutputBuffer", "ShellOutcome", "cap_text", "kill_process_group", "run_shell"]

_POLL_INTERVAL = 0.02


@attrs.frozen
class ShellOutcome:
    """How a command ended and what it printed (already capped)."""

    output: str
    exit_code: int | None
    timed_out: bool


def cap_text(text: str, limit: int) -> str:
    """*text* if it fits in *limit* characters, else its head and tail with a marker."""
    if len(text) <= limit:
        return text
    return _join_cut(text, text, len(text) - limit, exact=True, limit=limit)


def _join_cut(head: str, tail: str, omitted: int, *, exact: bool, limit: int) -> str:
    about = "" if exact else "about "
    marker = f"\n\n[... {about}{omitted:,} characters truncated ...]\n\n"
    keep = max(0, limit - len(marker))
    head_n = keep // 2
    tail_n = keep - head_n
    return head[:head_n] + marker + (tail[-tail_n:] if tail_n else "")


@attrs.define
class OutputBuffer:
    """Collects a stream's bytes keeping only what a capped rendering can show.

    Memory stays bounded however much a command prints: the first and last
    ``4 * limit`` bytes (enough for *limit* characters of any UTF-8) are kept,
    the middle only counted.
    """

    limit: int
    _head: bytearray = attrs.field(init=False, factory=bytearray)
    _tail: deque[bytes] = attrs.field(init=False, factory=deque)
    _tail_size: int = attrs.field(init=False, default=0)
    total: int = attrs.field(init=False, default=0)

    def feed(self, data: bytes | bytearray) -> None:
        """Take the next chunk of output."""
        self.total += len(data)
        room = 4 * self.limit - len(self._head)
        if room > 0:
            self._head += data[:room]
            data = data[room:]
        if data:
            self._tail.append(bytes(data))
            self._tail_size += len(data)
            while self._tail and self._tail_size - len(self._tail[0]) >= 4 * self.limit:
                self._tail_size -= len(self._tail.popleft())

    def render(self) -> str:
        """The decoded output, capped to *limit* characters with head and tail kept."""
        tail = b"".join(self._tail)
        dropped = self.total - len(self._head) - len(tail)
        if dropped == 0:
            return cap_text((bytes(self._head) + tail).decode("utf-8", "replace"), self.limit)
        head_text = self._head.decode("utf-8", "replace")
        tail_text = tail.decode("utf-8", "replace")
        shown = self.limit  # roughly: the kept parts are at least this long
        omitted = len(head_text) + len(tail_text) + dropped - shown
        return _join_cut(head_text, tail_text, omitted, exact=False, limit=self.limit)


def _group_alive(pgid: int) -> bool:
    """Whether any non-zombie process is left in the group.

    Zombies count as gone: they hold no resources, and a container's init may
    never reap the orphans among them.
    """
    try:
        entries = os.listdir("/proc")
    except OSError:
        entries = []
    if not entries:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True
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
        if len(fields) > 2 and int(fields[2]) == pgid and fields[0] not in (b"Z", b"X"):
            return True
    return False


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


async def _wait_group_gone(pgid: int, grace: float) -> bool:
    with trio.move_on_after(grace):
        # Nothing signals "the last member of a group died": poll /proc.
        while _group_alive(pgid):  # noqa: ASYNC110
            await trio.sleep(_POLL_INTERVAL)
        return True
    return False


async def kill_process_group(pgid: int, grace: float) -> None:
    """SIGTERM the group, wait up to *grace* seconds for it to go, then SIGKILL it.

    Returns once the group is gone (SIGKILL is not instant either), or after
    a second grace if something survives even that. Call it shielded from
    cancellation: it is the clean-up.
    """
    if not _group_alive(pgid):
        return
    _signal_group(pgid, signal.SIGTERM)
    if await _wait_group_gone(pgid, grace):
        return
    _signal_group(pgid, signal.SIGKILL)
    await _wait_group_gone(pgid, grace)


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


async def _record_then_open_gate(
    proc: trio.Process, records: Path, gate_w: int, kill_grace: float
) -> procgroups.GroupRecord:
    """Record *proc*'s group durably, then let the command go; if recording fails
    (a full disk), kill the gated group (it has run nothing) and re-raise."""
    try:
        with trio.CancelScope(shield=True):
            # Shielded: a group started must be recorded or killed, never neither.
            group = await trio.to_thread.run_sync(procgroups.record, records, proc.pid)
    except BaseException:
        _close(gate_w)  # end-of-file: the gate exits without running the command
        with trio.CancelScope(shield=True):
            await kill_process_group(proc.pid, kill_grace)
            with trio.move_on_after(kill_grace):
                await proc.wait()
            if proc.stdout is not None:
                await proc.stdout.aclose()
        raise
    try:
        os.write(gate_w, b"go\n")
    except OSError:
        pass  # the gate is gone already (killed from outside); the wait sees it
    finally:
        _close(gate_w)
    return group


async def run_shell(
    command: str,
    *,
    argv: Sequence[str] | None = None,
    cwd: Path,
    time_limit: float,
    output_limit: int,
    kill_grace: float = 1.0,
    pipe_grace: float = 0.2,
    env: Mapping[str, str] | None = None,
    records: Path | None = None,
    pass_fds: Sequence[int] = (),
) -> ShellOutcome:
    """Run *command* with ``bash -c`` in *cwd*, for at most *time_limit* seconds.

    *argv*, when given, is what actually runs instead of ``bash -c COMMAND``
    (the same command wrapped in an OS sandbox, say). The process group is
    killed when the call ends, whichever way. A cancellation of the caller
    propagates after the group is gone. With *records* (a run's
    ``procgroups/``), the group is recorded there durably before the command
    may do anything. *pass_fds* stay open in the command, with their numbers.
    """
    buffer = OutputBuffer(output_limit)
    command_argv = list(argv) if argv is not None else ["bash", "-c", command]
    gate_r, gate_w = os.pipe() if records is not None else (-1, -1)
    try:
        proc = await trio.lowlevel.open_process(
            [*_gate(gate_r), *command_argv] if records is not None else command_argv,
            cwd=cwd,
            env=dict(env) if env is not None else None,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            pass_fds=(*pass_fds, gate_r) if records is not None else tuple(pass_fds),
        )
    except BaseException:
        _close(gate_r, gate_w)
        raise
    assert proc.stdout is not None
    stdout = proc.stdout
    if records is not None:
        os.close(gate_r)
        group = await _record_then_open_gate(proc, records, gate_w, kill_grace)
    reader_done = trio.Event()

    async def read_all() -> None:
        try:
            while chunk := await stdout.receive_some(65536):
                buffer.feed(chunk)
        except (trio.ClosedResourceError, trio.BrokenResourceError):
            pass
        finally:
            reader_done.set()

    timed_out = False
    try:
        with trio.move_on_after(time_limit) as deadline:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(read_all)
                await proc.wait()
                # Exited; a background child may still hold the pipe open.
                with trio.move_on_after(pipe_grace):
                    await reader_done.wait()
                nursery.cancel_scope.cancel()
        # The main process may have exited during the pipe grace; that is no timeout.
        timed_out = deadline.cancelled_caught and proc.poll() is None
    finally:
        with trio.CancelScope(shield=True):
            await kill_process_group(proc.pid, kill_grace)
            if proc.returncode is None:
                with trio.move_on_after(kill_grace):
                    await proc.wait()
            await stdout.aclose()
        if records is not None:
            procgroups.forget(group)
    return ShellOutcome(
        output=buffer.render(),
        exit_code=None if timed_out else proc.returncode,
        timed_out=timed_out,
    )
