"""A Messages API address that refuses the connection, and never answered, fails
fast with one line naming it (the backoff would be minutes of silence); one that
answered before is retried as a server restarting."""

from __future__ import annotations

import socket
from typing import TYPE_CHECKING

import pytest
import trio

from coterie.models import ModelError, ModelRequest
from coterie.models.anthropic_model import REFUSED_ATTEMPTS, AnthropicModel
from tests.agent.conftest import coterie, home, workspace

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["home", "workspace"]  # the fixtures

ASK = ModelRequest(system="", messages=[{"role": "user", "content": "go"}])


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_a_refused_address_fails_after_a_second_attempt(autojump_clock: object) -> None:
    url = f"http://127.0.0.1:{closed_port()}"
    retries: list[object] = []
    model = AnthropicModel("claude-sonnet-4-5", api_key="k", base_url=url, max_retries=8)
    with pytest.raises(ModelError, match="refused") as raised:
        await model.complete(ASK, on_retry=retries.append)
    await model.aclose()
    assert url in str(raised.value)
    assert len(retries) == REFUSED_ATTEMPTS - 1


async def answer_once_then_leave(listener: trio.SocketListener) -> None:
    """A server that answers one request (a 400, which is not retried) and is gone."""
    body = b'{"type":"error","error":{"type":"invalid_request_error","message":"no"}}'
    async with listener, await listener.accept() as stream:
        request = b""
        while b"\r\n\r\n" not in request:
            request += await stream.receive_some()
        head = (
            "HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\n"
            f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
        )
        await stream.send_all(head.encode() + body)


async def test_once_it_answered_a_refusal_is_retried() -> None:
    """A server that answered once and then refuses is one restarting: the usual
    retries, not the fast failure."""
    (listener,) = await trio.open_tcp_listeners(0, host="127.0.0.1")
    port = listener.socket.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    model = AnthropicModel(
        "claude-sonnet-4-5", api_key="k", base_url=url, max_retries=3, backoff_base=0.001
    )
    async with trio.open_nursery() as nursery:
        nursery.start_soon(answer_once_then_leave, listener)
        with pytest.raises(ModelError):  # the 400: answered, not retried
            await model.complete(ASK)
    retries: list[object] = []
    with pytest.raises(ModelError, match="4 attempts"):
        await model.complete(ASK, on_retry=retries.append)
    await model.aclose()
    assert len(retries) == 3


def test_the_cli_says_so_on_stderr_and_leaves_stdout_empty(workspace: Path, home: Path) -> None:
    url = f"http://127.0.0.1:{closed_port()}"
    done = coterie(
        "-p", "hi", cwd=workspace, home=home,
        env={"ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "k"},
    )  # fmt: skip
    assert (done.returncode, done.stdout) == (1, "")
    assert f"cannot reach the Messages API at {url}" in done.stderr
