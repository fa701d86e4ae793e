"""The ``coterie`` console script's first module: what runs before anything else.

Importing the command line takes a while (the parser names every command and
option); a Ctrl-C in that time must end the process as Ctrl-C ends a command
(exit 130), not print a traceback from the middle of an import. So the entry
point installs that handler first, answers ``--version`` and ``-v`` (which the
Agent SDKs run to check the CLI) from the version strings alone, and only
then imports :mod:`coterie.cli`, handing Ctrl-C back to Python's own handler
for the command to take over. Once the command is over, the process leaves
without the interpreter's teardown (see :func:`main`).
"""

from __future__ import annotations

import os
import signal
import sys

from coterie.version import claude_version_text, version_text

__all__ = ["main"]


def _leave_at_once(signum: int, _frame: object) -> None:
    # Nothing has started yet: there is nothing to stop or record.
    os._exit(128 + signum)


def main(argv: list[str] | None = None) -> int:
    """The ``coterie`` command: returns the exit code of ``--version``; for any
    other command, leaves the process with it once the command is over."""
    words = sys.argv[1:] if argv is None else argv
    if words in (["--version"], ["-v"]):
        print(version_text() if words == ["--version"] else claude_version_text())
        return 0
    previous = signal.signal(signal.SIGINT, _leave_at_once)
    from coterie.cli import main as command

    signal.signal(signal.SIGINT, previous)
    code = command(argv)
    # The command is over: its runs are stopped, their files synced and closed, their
    # processes reaped. What is left is the interpreter's teardown (collecting the
    # SDK's thousands of objects: seconds under load, bench/startup.py), which
    # nothing needs: the output is flushed and the process leaves at once.
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (BrokenPipeError, ValueError):  # nobody reads any more, or closed
        pass
    os._exit(code)
