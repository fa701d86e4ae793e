"""bench/sdk_e2e.py, the runner of the SDK's own e2e tests, without the SDK's repository:
its scenarios parse, and its mock server tells which scripted turns were never served."""

from __future__ import annotations

import json
import urllib.request
from typing import TYPE_CHECKING

import pytest

from bench.sdk_e2e import EXCLUDED, SCENARIOS, _MockServer, main
from coterie.models.scenario import parse_scenario

if TYPE_CHECKING:
    from pathlib import Path

FILES = sorted(SCENARIOS.glob("*/*.json"))


def test_every_test_of_the_suite_has_a_scenario_the_excluded_too() -> None:
    names = {f"{path.parent.name}.py::{path.stem}" for path in FILES}
    assert len(names) == 42  # the suite at the SDK's v0.2.143
    assert set(EXCLUDED) <= names


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_every_scenario_parses(path: Path) -> None:
    text = path.read_text().replace("${home}", "/home/someone").replace("${tmp}", "/tmp/some")
    scenario = parse_scenario(json.loads(text), source=path.name)
    assert scenario.tracks["lead"]
    assert "${" not in text


def test_the_mock_server_reports_the_turns_never_served() -> None:
    turns = [{"expect": "ping", "text": "pong"}, {"text": "spare"}]
    server = _MockServer(parse_scenario({"tracks": {"lead": turns, "subagent": turns}}))
    try:
        body = {
            "model": "claude-sonnet-4-5",
            "max_tokens": 64,
            "messages": [{"role": "user", "content": "ping"}],
        }
        request = urllib.request.Request(
            f"{server.url}/v1/messages",
            data=json.dumps(body).encode(),
            headers={"content-type": "application/json", "x-api-key": "dummy"},
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            reply = json.load(response)
    finally:
        server.stop()
    assert reply["content"] == [{"type": "text", "text": "pong"}]
    assert server.unused() == {"lead": 1, "subagent": 2}


def test_the_runner_refuses_a_directory_without_e2e_tests(tmp_path: Path) -> None:
    assert main([str(tmp_path)]) == 2
    assert main([]) == 2
