"""``CLAUDE_ENV_FILE``: the variables SessionStart hooks set for the session's Bash calls.

As in Claude Code, each SessionStart command hook is given a file of its own
(``CLAUDE_ENV_FILE``, ``<env_dir>/sessionstart-hook-<n>.sh``, emptied before
the hook runs) to write shell lines into, ``export VAR=value`` mostly. Once
the hooks are done, the files are sourced by ``bash`` in hook order, once,
and the variables that came out different from the environment they were
sourced in are what every later Bash call of the session gets on top of its
own (:attr:`coterie.hooks.outcome.Verdict.env`). Sourcing once, not before
every call, gives the same variables for what hooks write (assignments,
``$PATH`` extended) without running the files again and again.

The files are the hooks' own output, and hooks only run where the settings
that name them are trusted, so sourcing them runs nothing a hook could not
have run itself. A file that fails part-way gives what it set before
failing; sourcing that does not finish in :data:`TIMEOUT` seconds gives
nothing, and so does a file that ends the shell (``exit``).
"""

from __future__ import annotations

import subprocess
from typing import TYPE_CHECKING

import trio

from coterie.processes import open_group

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from pathlib import Path

__all__ = ["TIMEOUT", "env_files", "read_env_files"]

#: Seconds the sourcing of the files may take.
TIMEOUT = 10.0
#: Variables the sourcing shell sets itself, never the hook's.
_SHELL_OWN = frozenset({"_", "SHLVL", "PWD", "OLDPWD"})
_SOURCE = (
    'set -a; for _coterie_env_file in "$@"; do . "$_coterie_env_file"; done;'
    " unset _coterie_env_file; env -0"
)


def env_files(env_dir: Path, count: int) -> list[Path]:
    """The env files of *count* SessionStart handlers, created empty."""
    env_dir.mkdir(parents=True, exist_ok=True)
    files = [env_dir / f"sessionstart-hook-{i}.sh" for i in range(count)]
    for path in files:
        path.write_bytes(b"")
    return files


def _parse(output: bytes) -> dict[str, str]:
    found: dict[str, str] = {}
    for item in output.split(b"\0"):
        name, sep, value = item.partition(b"=")
        if sep and name:
            found[name.decode(errors="replace")] = value.decode(errors="replace")
    return found


async def read_env_files(
    files: Sequence[Path], base: Mapping[str, str], *, cwd: Path, records: Path | None = None
) -> dict[str, str]:
    """What sourcing *files* (in order) in the environment *base* set or changed.

    The shell runs in a process group of its own (recorded in *records*, the
    run's ``procgroups/``), ended with all it started once it is done.
    """
    written = [str(p) for p in files if p.is_file() and p.stat().st_size > 0]
    if not written:
        return {}
    out = bytearray()
    try:
        async with open_group(
            ["bash", "-c", _SOURCE, "coterie-env", *written],
            cwd=cwd,
            records=records,
            env=base,
            stderr=subprocess.DEVNULL,
        ) as proc:
            assert proc.stdout is not None
            with trio.move_on_after(TIMEOUT) as scope:
                while chunk := await proc.stdout.receive_some(65536):
                    out.extend(chunk)
                await proc.wait()
    except OSError:  # bash could not start, or its group could not be recorded
        return {}
    if scope.cancelled_caught or proc.returncode != 0:
        return {}
    after = _parse(bytes(out))
    return {k: v for k, v in after.items() if k not in _SHELL_OWN and base.get(k) != v}
