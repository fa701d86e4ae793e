"""`coterie mock-server` run as the real CLI, in a subprocess."""

from __future__ import annotations

import json
import select
import signal
import socket
import subprocess
import sys
import urllib.request
from typing import TYPE_CHECKING

import pytest

from tests.models.conftest import SCENARIOS

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

HELLO = {"model": "m", "max_tokens": 20, "messages": [{"role": "user", "content": "hi"}]}


def mock_server(scenario: Path, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "coterie", "mock-server", "--scenario", str(scenario), *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.fixture
def running() -> Iterator[tuple[subprocess.Popen[str], str]]:
    """A mock server on a system-chosen port, and the URL it printed first."""
    proc = mock_server(SCENARIOS / "pursue-goal.json", "--port", "0")
    try:
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], 20)
        assert ready, "the server printed nothing"
        yield proc, proc.stdout.readline().strip()
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=10)


def post(url: str, body: object, **headers: str) -> dict[str, object]:
    request = urllib.request.Request(
        f"{url}/v1/messages",
        data=json.dumps(body).encode(),
        headers={"content-type": "application/json", **headers},
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())  # type: ignore[no-any-return]


def test_prints_its_url_first_and_answers(running: tuple[subprocess.Popen[str], str]) -> None:
    _, url = running
    assert url.startswith("http://127.0.0.1:")
    assert int(url.rsplit(":", 1)[1]) > 0
    assert post(url, HELLO)["content"] == [{"type": "text", "text": "Working on it."}]
    alice = post(url, HELLO, **{"x-coterie-actor": "alice", "x-coterie-role": "teammate"})
    assert alice["content"] == [{"type": "text", "text": "Alice here."}]


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 0)])
def test_stops_cleanly_on_signals(
    running: tuple[subprocess.Popen[str], str], signum: int, code: int
) -> None:
    proc, url = running
    post(url, HELLO)
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=10)
    assert proc.returncode == code
    assert "Traceback" not in err


def test_a_missing_scenario_exits_2(tmp_path: Path) -> None:
    proc = mock_server(tmp_path / "nope.json")
    out, err = proc.communicate(timeout=20)
    assert proc.returncode == 2
    assert out == ""
    assert "nope.json: cannot read scenario" in err


def test_a_malformed_scenario_exits_2_naming_the_place() -> None:
    proc = mock_server(SCENARIOS / "malformed.json")
    _, err = proc.communicate(timeout=20)
    assert proc.returncode == 2
    assert "malformed.json: tracks.lead[2].tool_uses[0]: 'name' must be a string" in err


def test_a_port_in_use_exits_1() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = mock_server(SCENARIOS / "pursue-goal.json", "--port", str(port))
        out, err = proc.communicate(timeout=20)
    assert proc.returncode == 1
    assert out == ""
    assert f"cannot listen on 127.0.0.1:{port}" in err
