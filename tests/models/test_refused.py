"""A Messages API address that refuses the connection, and never answered, fails
fast with one line naming it (the backoff would be minutes of silence); one that
answered before is retried as a server restarting."""

from __future__ import annotations

import socket
from typing import TYPE_CHECKING

import pytest

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


async def test_once_it_answered_a_refusal_is_retried(autojump_clock: object) -> None:
    url = f"http://127.0.0.1:{closed_port()}"
    retries: list[object] = []
    model = AnthropicModel("claude-sonnet-4-5", api_key="k", base_url=url, max_retries=3)
    model._reached = True  # as after a first reply
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
