"""The MCP servers of a run are found when it is prepared, and again when it resumes."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from coterie.mcpclient import McpConfigError
from coterie.runtime import RunOptions
from coterie.runtime.prepare import prepare
from tests.mcpclient.conftest import SCENARIOS, stdio_config

if TYPE_CHECKING:
    from pathlib import Path


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


def test_a_resumed_run_loads_the_mcp_config_it_was_started_with(workdir: Path) -> None:
    config = stdio_config(workdir / "servers.json", "recorded")
    options = RunOptions(
        workdir=workdir, scenario=SCENARIOS / "stdio_call.json", mcp_configs=[config]
    )
    first = prepare(options)
    assert [s.name for s in first.mcp_servers] == ["recorded"]
    assert first.options.mcp_configs == (str(config.resolve()),)
    again = prepare(RunOptions(workdir=workdir), resume=first.run_id)
    assert [s.name for s in again.mcp_servers] == ["recorded"]


def test_a_bad_config_fails_before_a_run_is_created(workdir: Path) -> None:
    (workdir / "bad.json").write_text("[]")
    options = RunOptions(workdir=workdir, mcp_configs=[workdir / "bad.json"])
    with pytest.raises(McpConfigError, match=r"bad\.json"):
        prepare(options)
