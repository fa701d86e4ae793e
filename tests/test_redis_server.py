"""The test Redis server starts, answers and keeps its AOF across a restart."""

from __future__ import annotations

from typing import TYPE_CHECKING

import trio

from coterie.backends.redis.client import connect, parse_backend
from tests.redis_server import redis_server

if TYPE_CHECKING:
    from pathlib import Path


async def test_a_coredis_client_talks_to_the_session_server_under_trio(redis_url: str) -> None:
    async with connect(parse_backend(redis_url)) as client:
        await client.xadd("s", {"a": "1"})
        entries = await client.xrange("s")
    assert [e.field_values for e in entries] == [{b"a": b"1"}]


def test_an_aof_server_keeps_its_data_across_a_kill_and_restart(tmp_path: Path) -> None:
    with redis_server(tmp_path, appendonly=True) as server:
        assert server.command("SET", "k", "v").startswith(b"+OK")
        server.restart()
        assert server.command("GET", "k") == b"$1\r\nv\r\n"


async def test_the_flush_between_tests_leaves_nothing(redis_url: str) -> None:
    async with connect(parse_backend(redis_url)) as client:
        assert await client.dbsize() == 0
        await trio.lowlevel.checkpoint()
