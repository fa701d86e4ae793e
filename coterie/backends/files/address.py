"""A run reached through its run directory: its lock says whether it is live, its
``mailboxes/`` are its post office (a sender appends under a mailbox's lock)."""

from __future__ import annotations

import contextlib
import shutil
from typing import TYPE_CHECKING

import trio

from coterie.mailbox import PostOffice

if TYPE_CHECKING:
    from collections.abc import AsyncIterator
    from pathlib import Path

__all__ = ["RunDirectory"]


class RunDirectory:
    """The run in *run_dir*."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        self.run_id = run_dir.name

    async def live(self) -> bool:
        from coterie.runs import is_live

        await trio.lowlevel.checkpoint()
        return is_live(self.run_dir)

    @contextlib.asynccontextmanager
    async def post_office(self, reply: str) -> AsyncIterator[PostOffice]:
        root = self.run_dir / "mailboxes"
        post = PostOffice(root, poll_interval=0.05)
        try:
            yield post
        finally:
            await post.aclose()
            shutil.rmtree(root / reply, ignore_errors=True)
