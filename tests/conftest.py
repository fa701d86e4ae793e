"""Shared fixtures."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import pytest

from coterie.journal import DISK
from coterie.mailbox import Durability, PostOffice

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable, Iterator
    from pathlib import Path

MAILBOX_KINDS = ["memory", "file-none", "file-batch", "file-always"]


@pytest.fixture(autouse=True)
def inline_fsyncs() -> Iterator[None]:
    """Keep fsyncs in the Trio thread during tests.

    On a loaded disk the shared runner moves fsyncs to a worker thread, and a
    task waiting on a thread looks blocked to ``autojump_clock``, which then
    jumps straight past every timeout. tests/journal/test_sync.py covers the
    threaded path on its own.
    """
    saved = DISK.inline_below
    DISK.inline_below = math.inf
    yield
    DISK.inline_below = saved


@pytest.fixture(params=MAILBOX_KINDS)
def mailbox_kind(request: pytest.FixtureRequest) -> str:
    """Run a test under the memory mailbox and every file durability policy."""
    return str(request.param)


@pytest.fixture
def make_post_office(mailbox_kind: str, tmp_path: Path) -> Callable[..., PostOffice]:
    """Build post offices of the parametrised kind (same root each call, to reopen)."""

    def make(**kwargs: object) -> PostOffice:
        if mailbox_kind == "memory":
            return PostOffice(None, **kwargs)  # type: ignore[arg-type]
        durability = Durability(mailbox_kind.removeprefix("file-"))
        return PostOffice(tmp_path / "mailboxes", durability=durability, **kwargs)  # type: ignore[arg-type]

    return make


@pytest.fixture
async def post_office(make_post_office: Callable[..., PostOffice]) -> AsyncIterator[PostOffice]:
    """A post office of the parametrised kind, closed after the test."""
    po = make_post_office()
    yield po
    await po.aclose()
