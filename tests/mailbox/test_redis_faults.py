"""A Redis server failing under a post office: a refusal waited out, a lost
mailbox one clear error (issue 29; docs/reliability.md, "The backend's failure
states"). Each test has a server of its own, since it starves or empties it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
import trio

from coterie.backends.redis import open_redis_post_office
from coterie.backends.redis.client import connect, parse_backend
from coterie.backends.redis.refusals import transaction
from coterie.errors import BackendLost
from coterie.messages import Message
from tests.redis_server import redis_server

if TYPE_CHECKING:
    from pathlib import Path


def msg(n: int) -> Message:
    return Message.new("tester", "alice", "n", {"n": n})


async def test_a_send_refused_for_lack_of_memory_waits_and_goes_through(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with redis_server(tmp_path / "redis") as server:
        target = parse_backend(server.url)
        async with open_redis_post_office(target, "r1") as post:
            box = post.open("alice")
            await post.send(msg(0))
            server.command("CONFIG", "SET", "maxmemory-policy", "noeviction")
            server.command("CONFIG", "SET", "maxmemory", "1")
            sent = trio.Event()

            async def send() -> None:
                await post.send(msg(1))  # refused by the server: waits, never raises
                sent.set()

            async with trio.open_nursery() as nursery:
                nursery.start_soon(send)
                while b"errorstat_OOM" not in server.command("INFO", "errorstats"):
                    await trio.sleep(0.01)
                assert not sent.is_set()
                server.command("CONFIG", "SET", "maxmemory", "0")
            got = [await box.receive(), await box.receive()]
    assert [d.message.body["n"] for d in got] == [0, 1]
    err = capsys.readouterr().err
    assert err.count("is out of memory and refuses writes") == 1
    assert err.count("accepts commands again") == 1


async def test_a_mailbox_the_server_lost_is_one_clear_error(tmp_path: Path) -> None:
    with redis_server(tmp_path / "redis") as server:
        target = parse_backend(server.url)

        async def use() -> None:
            async with open_redis_post_office(target, "r1") as post:
                box = post.open("alice")
                await post.send(msg(0))
                await box.receive()
                server.command("FLUSHALL")  # the run's streams and groups are gone
                await box.receive()  # never comes: the reader fails first

        with pytest.raises(BaseExceptionGroup) as caught:
            await use()
    leaves = _leaves(caught.value)
    assert leaves
    assert all(isinstance(e, BackendLost) for e in leaves), leaves
    assert "no longer holds run r1's mailbox 'alice'" in str(leaves[0])


def _leaves(exc: BaseException) -> list[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in _leaves(inner)]
    return [exc]


async def test_a_transaction_refused_for_lack_of_memory_waits_and_goes_through(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with redis_server(tmp_path / "redis") as server:
        async with connect(parse_backend(server.url)) as client:
            server.command("CONFIG", "SET", "maxmemory-policy", "noeviction")
            server.command("CONFIG", "SET", "maxmemory", "1")
            async with trio.open_nursery() as nursery:

                def fill(pipe: Any) -> None:
                    pipe.set("k", "v")
                    pipe.rpush("l", ["x"])

                nursery.start_soon(transaction, client, fill)
                while b"errorstat_OOM" not in server.command("INFO", "errorstats"):
                    await trio.sleep(0.01)
                server.command("CONFIG", "SET", "maxmemory", "0")
            assert await client.get("k") == b"v"
            assert await client.lrange("l", 0, -1) == [b"x"]
    err = capsys.readouterr().err
    assert err.count("is out of memory and refuses writes") == 1
    assert err.count("accepts commands again") == 1
