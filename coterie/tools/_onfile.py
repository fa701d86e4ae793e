"""The walk every file tool makes: resolve a path in the sandbox, work on it in a thread.

:func:`on_file` resolves the path a call names inside the sandbox through
directory descriptors (:mod:`coterie.tools._dirfd`), runs the tool's
blocking work on the resolved :class:`~coterie.tools._dirfd.Target` in a
worker thread, turns the file system's refusals into error results the model
reads, and records what the work read or wrote in ``ctx.read_files`` (so
that Write, Edit and NotebookEdit change only what the agent has seen).
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING

import trio

from coterie.tools._base import FileStamp, ToolResult
from coterie.tools._dirfd import Target, resolve
from coterie.tools._fileio import NotRegular
from coterie.tools.sandbox import SandboxViolation, absolute_path, allowed_roots

if TYPE_CHECKING:
    from collections.abc import Callable

    from coterie.tools._base import ToolContext

__all__ = ["Outcome", "on_file"]

#: What a file tool's worker returns: the result, and what to record in ``read_files``.
Outcome = tuple[ToolResult, "tuple[Path, FileStamp] | None"]


async def on_file(
    verb: str,
    raw: str,
    ctx: ToolContext,
    work: Callable[[Target, threading.Event], Outcome],
    *,
    create_dirs: bool = False,
    abandon: bool = False,
) -> ToolResult:
    """Resolve *raw* inside the sandbox and run ``work(target, stop)`` in a worker thread.

    *verb* ``"read"`` admits the read-only directories too and skips the
    protected paths; any other verb may write. The stamp the work returns is
    recorded here, after the thread, so an abandoned Read records nothing.
    Permission problems and full disks come back as error results: they are
    the model's to know about, not bugs.
    """
    roots = allowed_roots(ctx, reading=verb == "read")
    try:
        absolute = absolute_path(raw, roots[0])
    except SandboxViolation as exc:
        return ToolResult(str(exc), is_error=True)
    # The policy refuses writes there first; this holds even where it is not asked.
    stop = threading.Event()

    def job() -> Outcome:
        protected = (
            [] if verb == "read" else [Path(os.path.realpath(p)) for p in ctx.protected_paths]
        )
        try:
            with resolve(
                absolute, roots, raw=raw, create_dirs=create_dirs, protected=protected
            ) as target:
                return work(target, stop)
        except SandboxViolation as exc:
            return ToolResult(str(exc), is_error=True), None
        except NotRegular as exc:
            return ToolResult(exc.strerror or str(exc), is_error=True), None
        except FileNotFoundError:
            return ToolResult(f"File does not exist: {absolute}", is_error=True), None
        except OSError as exc:
            return ToolResult(
                f"Cannot {verb} {absolute}: {exc.strerror or exc}", is_error=True
            ), None

    try:
        result, record = await trio.to_thread.run_sync(job, abandon_on_cancel=abandon)
    finally:
        stop.set()  # an abandoned read stops at its next chunk instead of running on
    if record is not None:
        ctx.read_files[record[0]] = record[1]
    return result
