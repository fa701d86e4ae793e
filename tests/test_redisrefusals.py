"""Which errors of a Redis server are waited out, and the one report of an episode."""

from __future__ import annotations

from coredis.exceptions import ResponseError, StreamConsumerGroupError
from hypothesis import given
from hypothesis import strategies as st

from coterie.backends.redis.refusals import WAITED_OUT, RefusalEpisode, WaitOutRefusals, refusal

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
