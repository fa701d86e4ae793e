"""The mock server's model timing: holds before the first byte and a streaming rate."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import time
from typing import TYPE_CHECKING

import anthropic
import pytest
import trio
from hypothesis import given
from hypothesis import strategies as st

from coterie.models import Latency, Usage, serve_scenario
from coterie.models._wire import message_json, sse_events
from coterie.models.latency import Pacer, chunk_tokens, parse_hold
from tests.agent.conftest import clean_env
from tests.models.conftest import scenario

if TYPE_CHECKING:
    from pathlib import Path

    from coterie.models import MockServer

HELLO = {"model": "claude-test", "max_tokens": 50, "messages": [{"role": "user", "content": "hi"}]}
OVERLOADED = {"status": 529, "type": "overloaded_error"}
seconds = st.floats(min_value=0, max_value=1e6, allow_nan=False)


@given(seconds, seconds)
def test_a_hold_is_a_time_or_a_range(a: float, b: float) -> None:
    low, high = sorted((a, b))
    assert parse_hold(repr(low)) == (low, low)
    assert parse_hold(f"{low!r}-{high!r}") == (low, high)


@pytest.mark.parametrize("text", ["", "x", "-1", "2-1", "1-", "inf", "nan", "1-2-3"])
def test_a_bad_hold_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="SECONDS or LOW-HIGH"):
        parse_hold(text)


@given(st.integers(), seconds, seconds)
def test_seeded_holds_repeat_and_stay_in_range(seed: int, a: float, b: float) -> None:
    low, high = sorted((a, b))
    draws = [[Pacer(Latency(low, high, seed=seed)).first_byte() for _ in range(5)] for _ in "ab"]
    assert draws[0] == draws[1]
    assert all(low <= d <= high for d in draws[0])


@given(st.text(max_size=300), st.integers(min_value=0, max_value=5000))
def test_the_streamed_tokens_are_the_text_in_quarters(text: str, output: int) -> None:
    usage = Usage(input_tokens=1, output_tokens=output)
    content = [{"type": "text", "text": text}] if text else []
    events = sse_events("m", "claude-test", content, "end_turn", usage)
    deltas = [chunk_tokens(e) for e in events]
    assert sum(deltas) >= math.ceil(len(text) / 4)
    assert sum(deltas) <= len(text)
    body = json.dumps(message_json("m", "claude-test", content, "end_turn", usage)).encode()
    assert chunk_tokens(body) == output


def test_without_a_rate_nothing_waits_between_chunks() -> None:
    assert Pacer(Latency(1, 1)).chunk(b'event: x\ndata: {"type": "content_block_delta"}\n\n') == 0


async def test_a_reply_is_held_and_paced(nursery: trio.Nursery, autojump_clock: object) -> None:
    text = "x" * 400  # 100 tokens, streamed at 50 per second: 2 s after a 1.5 s hold
    latency = Latency(1.5, 1.5, tokens_per_second=50)
    server: MockServer = await nursery.start(
        lambda task_status: serve_scenario(
            scenario({"lead": [{"text": text}, {"error": OVERLOADED}]}),
            latency=latency,
            task_status=task_status,
        )
    )
    async with anthropic.AsyncAnthropic(api_key="k", base_url=server.url, max_retries=0) as client:
        start = trio.current_time()
        async with client.messages.stream(**HELLO) as stream:  # type: ignore[arg-type]
            first = None
            async for event in stream:
                if event.type == "content_block_delta" and first is None:
                    first = trio.current_time() - start
            message = await stream.get_final_message()
        total = trio.current_time() - start
        assert message.content[0].text == text  # type: ignore[union-attr]
        # The first delta comes after the hold and its own share of the 2 s.
        assert first is not None
        assert 1.5 < first < 3.5
        assert 3.5 <= total < 3.6
        start = trio.current_time()
        again = {**HELLO, "messages": [{"role": "user", "content": "again"}]}
        with pytest.raises(anthropic.APIStatusError):
            await client.messages.create(**again)  # type: ignore[call-overload]
        assert trio.current_time() - start < 0.1  # an error is not held


SLOW = ["--latency", "0.4-0.6", "--seed", "7"]


def test_the_cli_holds_replies(tmp_path: Path) -> None:
    scen = tmp_path / "s.json"
    scen.write_text(json.dumps({"tracks": {"lead": [{"text": "a"}, {"text": "b"}]}}))
    proc = subprocess.Popen(
        [sys.executable, "-m", "coterie", "mock-server", "--scenario", str(scen), *SLOW],
        stdout=subprocess.PIPE,
        text=True,
        env=clean_env(),
    )
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        client = anthropic.Anthropic(api_key="k", base_url=url, max_retries=0)
        for _ in range(2):
            start = time.monotonic()
            client.messages.create(**HELLO)  # type: ignore[call-overload]
            assert time.monotonic() - start >= 0.4
        client.close()
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        assert proc.stdout is not None
        proc.stdout.close()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--latency", "2-1"], "SECONDS or LOW-HIGH"),
        (["--tokens-per-second", "0"], "positive"),
    ],
)
def test_bad_timing_is_a_usage_error(tmp_path: Path, args: list[str], message: str) -> None:
    scen = tmp_path / "s.json"
    scen.write_text(json.dumps({"tracks": {"lead": [{"text": "a"}]}}))
    result = subprocess.run(
        [sys.executable, "-m", "coterie", "mock-server", "--scenario", str(scen), *args],
        capture_output=True,
        text=True,
        env=clean_env(),
        timeout=30,
    )
    assert result.returncode == 2
    assert message in result.stderr
