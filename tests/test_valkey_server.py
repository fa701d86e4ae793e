"""The test Valkey server is Valkey, answers coredis under Trio and keeps its AOF
across a restart; and the test Redis server beside it is Redis, not Valkey, so
that a suite run on both really runs on two servers."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import pytest
import trio

from coterie.backends.redis.client import connect, parse_backend
from tests.redis_server import redis_server

if TYPE_CHECKING:
    from pathlib import Path

    from coredis.typing import ResponseType

    from tests.redis_server import RedisServer


async def server_info(url: str) -> dict[str, ResponseType]:
    async with connect(parse_backend(url)) as client:
        return await client.info("server")


async def test_the_valkey_fixture_is_a_valkey_server(valkey_url: str) -> None:
    info = await server_info(valkey_url)
    assert info["server_name"] == "valkey"
    assert "valkey_version" in info


def test_the_redis_fixture_is_not_valkey(redis_session_server: RedisServer) -> None:
    info = redis_session_server.command("INFO", "server")
    if b"valkey_version:" in info:  # redis-server is valkey-server's stand-in here
        reason = "redis-server here is Valkey: Redis itself is not tested"
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    assert b"redis_version:" in info


async def test_a_coredis_client_talks_to_the_valkey_server_under_trio(valkey_url: str) -> None:
    async with connect(parse_backend(valkey_url)) as client:
        await client.xadd("s", {"a": "1"})
        entries = await client.xrange("s")
    assert [e.field_values for e in entries] == [{b"a": b"1"}]


async def test_the_flush_between_tests_leaves_nothing_on_valkey(valkey_url: str) -> None:
    async with connect(parse_backend(valkey_url)) as client:
        assert await client.dbsize() == 0
        await trio.lowlevel.checkpoint()


def test_an_aof_valkey_server_keeps_its_data_across_a_kill_and_restart(tmp_path: Path) -> None:
    with redis_server(tmp_path, appendonly=True, program="valkey-server") as server:
        assert b"valkey_version:" in server.command("INFO", "server")
        assert server.command("SET", "k", "v").startswith(b"+OK")
        server.restart()
        assert server.command("GET", "k") == b"$1\r\nv\r\n"
    assert (tmp_path / "valkey.log").exists()
