"""Which errors of a Redis server are waited out, and the one report of an episode;
a server away for a moment waited out by a client it has answered."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
import trio
from coredis.exceptions import ConnectionError as ClientConnectionError
from coredis.exceptions import ResponseError, StreamConsumerGroupError
from coredis.parser import Parser
from hypothesis import given
from hypothesis import strategies as st

from coterie.backends.redis.client import connect, parse_backend
from coterie.backends.redis.refusals import (
    AWAY_FOR,
    LONGEST,
    WAITED_OUT,
    RefusalEpisode,
    WaitOutRefusals,
    not_connected,
    refusal,
    refusal_of,
)
from tests.redis_server import LOSES_SERVER, collect_failed_connections, redis_server

if TYPE_CHECKING:
    from pathlib import Path

OOM = "OOM command not allowed when used memory > 'maxmemory'."


@given(st.sampled_from(sorted(WAITED_OUT)), st.text(max_size=40))
def test_a_refusal_is_known_by_its_first_word(code: str, rest: str) -> None:
    assert refusal(f"{code} {rest}") == code
    assert refusal(f"{code.lower()} {rest}") == code


@given(st.text(max_size=80))
def test_a_pipeline_error_is_read_after_its_last_marker(args: str) -> None:
    # Whatever the command's arguments say, the server's own words decide.
    text = f"Command # 1 (HSET k {args}) of pipeline caused error: "
    assert refusal(text + OOM) == "OOM"
    assert refusal(text + "ERR wrong number of arguments") is None


@given(st.text(max_size=80))
def test_other_errors_are_not_waited_out(text: str) -> None:
    if text.lstrip("-").split(" ", 1)[0].upper() not in WAITED_OUT and "pipeline" not in text:
        assert refusal(text) is None


def test_an_episode_is_said_once_and_its_end_once() -> None:
    said: list[str] = []
    episode = RefusalEpisode(write=said.append)
    assert episode.refused(ResponseError(OOM))
    assert episode.refused(ResponseError(OOM))
    assert not episode.refused(ResponseError("ERR unknown command"))
    assert not episode.refused(StreamConsumerGroupError("NOGROUP No such key"))
    assert not episode.refused(OSError("OOM"))  # not the server's answer
    episode.accepted()
    episode.accepted()
    assert len(said) == 2
    assert "out of memory" in said[0]
    assert "accepts commands again" in said[1]


def test_the_policy_backs_off_up_to_two_seconds_without_a_limit() -> None:
    policy = WaitOutRefusals(RefusalEpisode(write=lambda _: None))
    delays = [policy.delay(n) for n in range(1, 12)]
    assert delays[0] == 0.05
    assert delays == sorted(delays)
    assert delays[-1] == 2.0
    assert policy.will_retry(ResponseError("LOADING Redis is loading the dataset"))
    assert not policy.will_retry(TimeoutError())


def test_a_pipeline_refusal_is_said_without_the_commands_arguments() -> None:
    said: list[str] = []
    episode = RefusalEpisode(write=said.append)
    secret = "Traceback (most recent call last): the run's own data"
    error = f"Command # 1 (HSET k {secret}) of pipeline caused error: {OOM}"
    assert episode.refused(ResponseError(error))
    assert OOM in said[0]
    assert secret not in said[0]


NOT_CONNECTED = ClientConnectionError("Unable to establish a connection to 10.0.0.1:6379")


class Server:
    """Stands for the server behind a client: *away* commands in a row cannot be
    sent, then each is answered; every try counted."""

    def __init__(self, away: int, error: Exception = NOT_CONNECTED) -> None:
        self.away, self.error, self.tries = away, error, 0

    async def command(self) -> str:
        self.tries += 1
        if self.tries <= self.away:
            raise self.error
        return "OK"


async def test_a_server_away_for_a_moment_is_waited_out_and_said_once(
    autojump_clock: trio.abc.Clock,
) -> None:
    said: list[str] = []
    policy = WaitOutRefusals(RefusalEpisode(write=said.append))
    assert await policy.call_with_retries(Server(0).command) == "OK"  # answered once
    started = trio.current_time()
    server = Server(away=12)  # about 13 s of pauses
    assert await policy.call_with_retries(server.command) == "OK"
    assert server.tries == 13
    assert 10 < trio.current_time() - started < AWAY_FOR
    assert len(said) == 2, said
    assert "does not take connections" in said[0]
    assert f"up to {AWAY_FOR:g} s" in said[0]
    assert "accepts commands again" in said[1]


async def test_a_server_never_reached_is_an_error_at_once(autojump_clock: trio.abc.Clock) -> None:
    policy = WaitOutRefusals(RefusalEpisode(write=lambda _: None))
    server = Server(away=1)
    with pytest.raises(ClientConnectionError):
        await policy.call_with_retries(server.command)
    assert server.tries == 1


async def test_a_server_away_longer_is_an_error_after_the_wait(
    autojump_clock: trio.abc.Clock,
) -> None:
    said: list[str] = []
    policy = WaitOutRefusals(RefusalEpisode(write=said.append))
    await policy.call_with_retries(Server(0).command)
    started = trio.current_time()
    with pytest.raises(ClientConnectionError):
        await policy.call_with_retries(Server(away=1000).command)
    assert AWAY_FOR <= trio.current_time() - started < AWAY_FOR + LONGEST + 0.01
    assert len(said) == 1


async def test_a_command_whose_connection_broke_once_sent_is_not_sent_again(
    autojump_clock: trio.abc.Clock,
) -> None:
    """It may have been carried out: its caller decides (the board finds its own
    records by their nonce; a mailbox send is given again under its message id)."""
    policy = WaitOutRefusals(RefusalEpisode(write=lambda _: None))
    await policy.call_with_retries(Server(0).command)
    for error in (
        ClientConnectionError("Connection lost while receiving response"),
        ClientConnectionError("Connection lost while sending request"),
        OSError("Unable to establish a connection"),  # not coredis's: not known to be unsent
    ):
        server = Server(away=1, error=error)
        with pytest.raises(type(error)):
            await policy.call_with_retries(server.command)
        assert server.tries == 1


@given(st.text(max_size=60))
def test_only_coredis_failing_to_connect_is_not_connected(text: str) -> None:
    assert not_connected(ClientConnectionError(f"Unable to establish a connection{text}"))
    assert not not_connected(OSError(f"Unable to establish a connection{text}"))
    if not text.startswith("Unable to establish a connection"):
        assert not not_connected(ClientConnectionError(text))


@LOSES_SERVER
async def test_a_client_rides_out_a_server_restart(tmp_path: Path) -> None:
    """A real server killed and started again: a command sent while it is away
    waits for it and goes through (it raised at once before, and the run's actors
    crashed until their supervisors gave up)."""
    with redis_server(tmp_path, appendonly=True, appendfsync="always") as server:
        async with connect(parse_backend(server.url), connect_timeout=0.5) as client:
            await client.set("k", "before")
            server.kill()

            async def write() -> None:
                await client.set("k", "while away")

            async with trio.open_nursery() as nursery:
                nursery.start_soon(write)
                await trio.sleep(1.0)  # real time: the command is being tried meanwhile
                server.start()
            assert await client.get("k") == b"while away"
    collect_failed_connections()


@given(st.sampled_from(sorted(WAITED_OUT)), st.text(max_size=40), st.booleans())
def test_every_refusal_is_known_as_coredis_raises_it(code: str, rest: str, piped: bool) -> None:
    """coredis cuts the code from LOADING and READONLY and raises errors of its own
    (LOADING even as a connection error): known by their class, alone or in a
    pipeline, where coredis puts the command before the server's words."""
    error = Parser().parse_error(f"{code} {rest}")
    if piped:
        error.args = (f"Command # 2 (SET k {rest}) of pipeline caused error: {error.args[0]}",)
    assert refusal_of(error) == code
    said: list[str] = []
    assert RefusalEpisode(write=said.append).refused(error)
    assert WAITED_OUT[code] in said[0]


async def test_a_server_loading_its_data_is_waited_out(autojump_clock: trio.abc.Clock) -> None:
    policy = WaitOutRefusals(RefusalEpisode(write=lambda _: None))
    loading = Parser().parse_error("LOADING Redis is loading the dataset in memory")
    server = Server(away=5, error=loading)
    assert await policy.call_with_retries(server.command) == "OK"  # before any answer too
    assert server.tries == 6
