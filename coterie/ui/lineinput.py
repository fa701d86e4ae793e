"""Reading one typed line from the terminal, cancellably, without a thread.

A worker thread blocked in ``readline`` cannot be stopped: abandoned on
cancellation, it would still take the next line the person types (meant for
whatever asks next). :func:`read_line` instead waits with Trio for the file
descriptor to be readable and reads one byte at a time up to the newline, so
it never takes more than the line it answers, and a cancellation while it
waits leaves nothing behind. The terminal stays in its normal (canonical)
mode: the person edits the line as usual and Enter sends it.
"""

from __future__ import annotations

import os

import trio

__all__ = ["read_line"]

MAX_LINE = 4096  # bytes: a longer line is cut there (the rest is read by the next call)


async def read_line(fd: int = 0) -> str | None:
    """The next line typed on *fd* (without its newline), or None at end of input."""
    got = bytearray()
    while len(got) < MAX_LINE:
        await trio.lowlevel.wait_readable(fd)
        try:
            byte = os.read(fd, 1)
        except BlockingIOError:
            continue  # another reader was quicker: wait again
        if not byte:
            if not got:
                return None
            break
        if byte == b"\n":
            break
        got += byte
    return got.decode("utf-8", errors="replace")
