"""The ``coterie`` console script's first module: what runs before anything else.

Importing the command line takes a while (the parser names every command and
option); a Ctrl-C in that time must end the process as Ctrl-C ends a command
(exit 130), not print a traceback from the middle of an import. So the entry
point installs that handler first, answers ``--version`` and ``-v`` (which the
Agent SDKs run to check the CLI) from the version strings alone, and only
then imports :mod:`coterie.cli`, handing Ctrl-C back to Python's own handler
for the command to take over.
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
    """The ``coterie`` command; returns its exit code."""
    words = sys.argv[1:] if argv is None else argv
    if words in (["--version"], ["-v"]):
        print(version_text() if words == ["--version"] else claude_version_text())
        return 0
    previous = signal.signal(signal.SIGINT, _leave_at_once)
    from coterie.cli import main as command

    signal.signal(signal.SIGINT, previous)
    return command(argv)
