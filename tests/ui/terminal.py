"""A pseudo-terminal to run the real CLI in, and a small screen emulator to read it.

:func:`run_in_pty` runs ``python -m coterie ...`` on a pty and answers prompts
as they appear; :func:`screen` replays what it wrote the way a terminal would
(the subset rich's live display uses: carriage return, newline as a pty
sends it, cursor up and down, erase line, colours ignored), so a test sees the final screen and the
scrollback as a person would, erased frames gone.
"""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
import time
from typing import TYPE_CHECKING

from tests.agent.conftest import clean_env

if TYPE_CHECKING:
    from pathlib import Path

WIDTH = 160
_CSI = re.compile(r"\x1b\[([0-9;?]*)([A-Za-z])|\x1b[()][A-Za-z0-9]|\x1b[=>]")


def run_in_pty(
    args: list[str],
    cwd: Path,
    home: Path,
    answers: list[tuple[str, str]],
    *,
    timeout: float = 90,
) -> tuple[int, str]:
    """Run the CLI with *args* on a terminal; each ``(needle, keys)`` of *answers*,
    in order, types *keys* once *needle* has appeared after the previous answer.
    Returns the exit code and everything written, raw."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 60, WIDTH, 0, 0))
    proc = subprocess.Popen(
        [sys.executable, "-m", "coterie", *args],
        cwd=cwd,
        env=clean_env(HOME=str(home), COLUMNS=str(WIDTH), LINES="60", TERM="xterm"),
        stdin=slave,
        stdout=slave,
        stderr=slave,
        close_fds=True,
        preexec_fn=_controlling_terminal,
    )
    os.close(slave)
    raw, seen_to, pending = b"", 0, list(answers)
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.5)
            if ready:
                try:
                    chunk = os.read(master, 65536)
                except OSError:  # the child closed the terminal
                    break
                if not chunk:
                    break
                raw += chunk
            text = raw.decode(errors="replace")
            if pending and pending[0][0] in text[seen_to:]:
                needle, keys = pending.pop(0)
                seen_to = text.index(needle, seen_to) + len(needle)
                os.write(master, keys.encode())
            if not ready and proc.poll() is not None:
                break
        code = proc.wait(timeout=max(1.0, deadline - time.monotonic()))
    finally:
        proc.kill()
        proc.wait()
        os.close(master)
    text = raw.decode(errors="replace")
    assert not pending, f"never saw {pending[0][0]!r}; got:\n{plain(text)}"
    return code, text


def _controlling_terminal() -> None:
    """In the child: the pty becomes its terminal, so Ctrl-C typed there is SIGINT."""
    os.setsid()
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


def screen(raw: str) -> list[str]:
    """The lines a terminal shows (scrollback included) after receiving *raw*."""
    lines: list[list[str]] = [[]]
    row = col = 0
    pos = 0
    while pos < len(raw):
        match = _CSI.match(raw, pos)
        if match:
            pos = match.end()
            params, final = match.group(1) or "", match.group(2)
            count = int(params) if params.isdigit() else 1
            if final == "A":
                row = max(0, row - count)
            elif final == "B":
                row += count
            elif final == "K":
                if params in ("", "0"):
                    del lines[row][col:]
                elif params == "2":
                    lines[row] = []
            elif final == "G":
                col = count - 1
            while len(lines) <= row:
                lines.append([])
            continue
        char = raw[pos]
        pos += 1
        if char == "\r":
            col = 0
        elif char == "\n":  # as a pty's output sees it (onlcr): a new line, at its start
            row, col = row + 1, 0
            while len(lines) <= row:
                lines.append([])
        elif char == "\x1b" or char < " ":
            continue
        else:
            line = lines[row]
            line.extend(" " * (col - len(line)))
            if col < len(line):
                line[col] = char
            else:
                line.append(char)
            col += 1
    return ["".join(line).rstrip() for line in lines]


def plain(raw: str) -> str:
    """The screen as one text."""
    return "\n".join(screen(raw))
