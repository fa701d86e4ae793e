"""Shared fixtures."""

from __future__ import annotations

import math
import os
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import TYPE_CHECKING

import pytest
import trio.testing

from coterie.backends.redis import open_redis_post_office
from coterie.backends.redis.client import parse_backend
from coterie.checkpoints import SCANS
from coterie.home import HOME_ENV
from coterie.journal import DISK
from coterie.mailbox import Durability, PostOffice
from tests.redis_server import RedisServer, redis_server

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable, Iterator
    from pathlib import Path

#: Every test taking ``mailbox_kind`` (test_semantics.py, the actor tests) runs on
#: each; nothing is excluded on Redis. What only files have (segments, torn
#: tails, cursors, peek) is tested in tests/mailbox/test_file_mailbox.py,
#: test_peek.py and test_unsynced_messages.py, which take no kind.
MAILBOX_KINDS = ["memory", "file-none", "file-batch", "file-always", "redis"]

#: Under ``autojump_clock``, how long (real seconds) every task must have been
#: idle before the clock jumps, when a test talks to Redis: a task waiting for
#: the server's reply looks idle, and a zero threshold would jump past every
#: timeout before the reply arrives (the same reason as ``inline_fsyncs``).
REDIS_AUTOJUMP_THRESHOLD = 0.1


@pytest.fixture(autouse=True, scope="session")
def coterie_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A coterie home of the test session's own (run state, trust, signing key), so
    that no test reads or writes the developer's ``~/.coterie``. Subprocesses
    inherit it through the environment; runs are keyed by their workspace, a
    temporary folder of each test, so tests never share one."""
    home = tmp_path_factory.mktemp("coterie-home")
    saved = os.environ.get(HOME_ENV)
    os.environ[HOME_ENV] = str(home)
    yield home
    if saved is None:
        del os.environ[HOME_ENV]
    else:
        os.environ[HOME_ENV] = saved


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


@pytest.fixture(autouse=True)
def inline_scans() -> Iterator[None]:
    """Take checkpoint snapshots in the Trio thread during tests, for the reason of
    :func:`inline_fsyncs` (a session takes one as each request starts and ends)."""
    saved = SCANS.inline_below
    SCANS.inline_below = math.inf
    yield
    SCANS.inline_below = saved


@pytest.fixture(params=MAILBOX_KINDS)
def mailbox_kind(request: pytest.FixtureRequest) -> str:
    """Run a test under the memory mailbox and every file durability policy."""
    return str(request.param)


@pytest.fixture
def autojump_clock(request: pytest.FixtureRequest) -> trio.testing.MockClock:
    """pytest-trio's autojump clock, with a small real-time threshold when the
    test's mailboxes are on Redis (see ``REDIS_AUTOJUMP_THRESHOLD``)."""
    on_redis = (
        "mailbox_kind" in request.fixturenames
        and request.getfixturevalue("mailbox_kind") == "redis"
    )
    return trio.testing.MockClock(autojump_threshold=REDIS_AUTOJUMP_THRESHOLD if on_redis else 0)


@pytest.fixture
def make_post_office(
    mailbox_kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> Callable[..., AbstractAsyncContextManager[PostOffice]]:
    """Open post offices of the parametrised kind (same root or run each call, to reopen)."""

    @asynccontextmanager
    async def make(**kwargs: object) -> AsyncIterator[PostOffice]:
        if mailbox_kind == "redis":
            target = parse_backend(request.getfixturevalue("redis_url"))
            async with open_redis_post_office(target, "test-run", **kwargs) as po:  # type: ignore[arg-type]
                yield po
            return
        if mailbox_kind == "memory":
            po = PostOffice(None, **kwargs)  # type: ignore[arg-type]
        else:
            durability = Durability(mailbox_kind.removeprefix("file-"))
            po = PostOffice(tmp_path / "mailboxes", durability=durability, **kwargs)  # type: ignore[arg-type]
        try:
            yield po
        finally:
            await po.aclose()

    return make


@pytest.fixture
async def post_office(
    make_post_office: Callable[..., AbstractAsyncContextManager[PostOffice]],
) -> AsyncIterator[PostOffice]:
    """A post office of the parametrised kind, closed after the test."""
    async with make_post_office() as po:
        yield po


@pytest.fixture(scope="session")
def redis_session_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    """One Redis server for the whole test session (see tests/redis_server.py)."""
    with redis_server(tmp_path_factory.mktemp("redis")) as server:
        yield server


@pytest.fixture
def redis_url(redis_session_server: RedisServer) -> str:
    """The URL of the session's Redis server, emptied for this test."""
    redis_session_server.command("FLUSHALL")
    return redis_session_server.url


@pytest.fixture(scope="session")
def valkey_session_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    """One Valkey server for the whole test session, as :func:`redis_session_server`
    (fails under ``CI=true`` without valkey-server, skips elsewhere)."""
    with redis_server(tmp_path_factory.mktemp("valkey"), program="valkey-server") as server:
        yield server


@pytest.fixture
def valkey_url(valkey_session_server: RedisServer) -> str:
    """The URL (``redis://127.0.0.1:PORT/0``) of the session's Valkey server, emptied
    for this test: what :func:`redis_url` is for Redis."""
    valkey_session_server.command("FLUSHALL")
    return valkey_session_server.url
