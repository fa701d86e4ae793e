"""Running a tool's shell command, and collecting what it prints.

The command runs as ``bash -c`` through :func:`coterie.processes.open_group`,
the owner of every child process's lifetime: in a process group of its own,
recorded in the run's ``procgroups/`` before it may do anything, and the
whole group ended (SIGTERM, a short grace, SIGKILL) whatever way the call
ends (exit, timeout, cancellation).

Standard output and standard error share one pipe, so the model sees them
interleaved as they happened. A background child may keep that pipe open
after the main process exits; the reader then gets a short grace to collect
what is there, and the group kill ends the rest, so such a child can never
make the call hang.
"""

from __future__ import annotations

import subprocess
from collections import deque
from typing import TYPE_CHECKING

import attrs
import trio

from coterie.processes import open_group

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from pathlib import Path

__all__ = ["OutputBuffer", "ShellOutcome", "cap_text", "run_shell"]


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
    reader_done = trio.Event()
    timed_out = False
    async with open_group(
        list(argv) if argv is not None else ["bash", "-c", command],
        cwd=cwd,
        records=records,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        pass_fds=pass_fds,
        grace=kill_grace,
    ) as proc:
        assert proc.stdout is not None
        stdout = proc.stdout

        async def read_all() -> None:
            try:
                while chunk := await stdout.receive_some(65536):
                    buffer.feed(chunk)
            except (trio.ClosedResourceError, trio.BrokenResourceError):
                pass
            finally:
                reader_done.set()

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
    return ShellOutcome(
        output=buffer.render(),
        exit_code=None if timed_out else proc.returncode,
        timed_out=timed_out,
    )
