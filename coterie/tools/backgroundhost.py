"""What the tools need of the run's owner of background commands (the protocol), and
what it answers: declared apart from the tools (:mod:`coterie.tools.background`)
so that the tools' context (:class:`coterie.tools.ToolContext`) can name it
without importing the tools. The owner is :mod:`coterie.runtime.background`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

import attrs

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from pathlib import Path

__all__ = ["BackgroundHost", "Started", "Stopped"]


@attrs.frozen
class Started:
    """A background command the run started: its id and the file its output goes to."""

    task_id: str
    output: Path


@attrs.frozen
class Stopped:
    """A background command :meth:`BackgroundHost.stop` ended."""

    task_id: str
    command: str
    kind: str


class BackgroundHost(Protocol):
    """The run's owner of background commands, as the tools see it."""

    async def start(
        self,
        *,
        agent: str,
        command: str,
        argv: Sequence[str],
        cwd: Path,
        env: Mapping[str, str],
        description: str,
        monitor_ms: int | None = None,
    ) -> Started:
        """Start *argv* (the shell running *command*) for *agent*, recorded before it
        runs; returns once it runs. With *monitor_ms*, each line it prints is a
        notice to *agent*, and it is ended after that many milliseconds."""
        ...

    async def stop(self, task_id: str) -> Stopped | None:
        """End task *task_id*'s whole process group; None if no such task runs."""
        ...

    def read_new(self, task_id: str) -> str | None:
        """What task *task_id* printed since the last call (None: no such task)."""
        ...

    def take_notices(self, agent: str) -> list[str]:
        """The notices waiting for *agent*, each once (taken: they are delivered)."""
        ...
