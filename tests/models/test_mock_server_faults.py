"""One bad request never takes ``coterie mock-server`` down (issue 12, finding 9).

A ``HEAD /`` request (Claude Code's first request, or ``curl -I``) killed
the whole server with a traceback; it had no idle timeout; it refused a
``role: "system"`` message, which current Claude Code sends with a beta header.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import TYPE_CHECKING, Any

import httpx2
import pytest
import trio

from coterie.models import serve_scenario
from tests.agent.conftest import REPO
from tests.models.conftest import scenario

if TYPE_CHECKING:
    from pathlib import Path

    from coterie.models import MockServer

HELLO = {"model": "m", "max_tokens": 50, "messages": [{"role": "user", "content": "hi"}]}
TRACKS = {"lead": [{"text": "one"}, {"text": "two"}, {"text": "three"}]}


async def start(nursery: trio.Nursery, **kw: Any) -> MockServer:
    server: MockServer = await nursery.start(
        lambda task_status: serve_scenario(scenario(TRACKS), task_status=task_status, **kw)
    )
    return server


async def raw(server: MockServer, data: bytes) -> bytes:
    """Send *data* on a fresh connection; what comes back before it closes."""
    host, port = server.url.removeprefix("http://").split(":")
    stream = await trio.open_tcp_stream(host, int(port))
    got = b""
    try:
        await stream.send_all(data)
        with trio.move_on_after(5):
            while chunk := await stream.receive_some(65536):
                got += chunk
    except trio.BrokenResourceError:
        pass  # the server hung up on us, unread bytes and all
    finally:
        await stream.aclose()
    return got


async def test_head_and_unknown_methods_get_errors_and_the_server_lives_on() -> None:
    async with trio.open_nursery() as nursery:
        server = await start(nursery)
        async with httpx2.AsyncClient(timeout=10) as http:
            head = await http.head(f"{server.url}/")
            assert head.status_code == 404
            assert head.content == b""
            head = await http.head(f"{server.url}/v1/messages")
            assert head.status_code == 405
            deleted = await http.delete(f"{server.url}/v1/messages")
            assert deleted.status_code == 405
            assert deleted.json()["type"] == "error"
            ok = await http.post(f"{server.url}/v1/messages", json=HELLO)
            assert ok.status_code == 200
            assert ok.json()["content"][0]["text"] == "one"
        nursery.cancel_scope.cancel()


@pytest.mark.parametrize(
    "garbage",
    [
        b"\x00\x01\x02 not http at all\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: nope\r\n\r\n",
        b"POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\n{bad}",
        b"GET /" + b"a" * 100_000 + b" HTTP/1.1\r\n\r\n",
    ],
)
async def test_malformed_input_costs_one_connection_not_the_server(garbage: bytes) -> None:
    async with trio.open_nursery() as nursery:
        server = await start(nursery)
        answer = await raw(server, garbage)
        assert answer == b"" or answer.startswith(b"HTTP/1.1 4")
        async with httpx2.AsyncClient(timeout=10) as http:
            ok = await http.post(f"{server.url}/v1/messages", json=HELLO)
        assert ok.status_code == 200
        nursery.cancel_scope.cancel()


async def test_an_idle_connection_is_closed(autojump_clock: trio.testing.MockClock) -> None:
    async with trio.open_nursery() as nursery:
        server = await start(nursery, idle_timeout=30.0)
        host, port = server.url.removeprefix("http://").split(":")
        stream = await trio.open_tcp_stream(host, int(port))
        await stream.send_all(b"POST /v1/messages HTTP/1.1\r\nHost: x\r\n")  # and then nothing
        started = trio.current_time()
        assert await stream.receive_some(100) == b""  # the server hung up
        assert 30.0 <= trio.current_time() - started < 31.0
        await stream.aclose()
        nursery.cancel_scope.cancel()


async def test_system_messages_are_accepted_under_a_beta_header() -> None:
    body = {
        **HELLO,
        "messages": [
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": "hi"},
        ],
        "thinking": {"type": "enabled", "budget_tokens": 1024},
        "context_management": {"edits": []},
        "output_config": {},
        "metadata": {"user_id": "u"},
    }
    async with trio.open_nursery() as nursery:
        server = await start(nursery)
        async with httpx2.AsyncClient(timeout=10) as http:
            refused = await http.post(f"{server.url}/v1/messages", json=body)
            assert refused.status_code == 400
            taken = await http.post(
                f"{server.url}/v1/messages", json=body, headers={"anthropic-beta": "some-beta"}
            )
            assert taken.status_code == 200, taken.text
        nursery.cancel_scope.cancel()


def test_the_cli_server_survives_a_head_request(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"name": "s", "tracks": TRACKS}))
    proc = subprocess.Popen(
        [sys.executable, "-m", "coterie", "mock-server", "--scenario", str(path), "--port", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        with httpx2.Client(timeout=10) as http:
            assert http.head(f"{url}/").status_code == 404
            assert http.post(f"{url}/v1/messages", json=HELLO).status_code == 200
        assert proc.poll() is None
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=10)
    assert "Traceback" not in err
