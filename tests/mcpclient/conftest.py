"""Fixtures for the MCP tests: a config naming the test server, an HTTP server."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.agent.conftest import clean_env, home, mock_server, workspace

if TYPE_CHECKING:
    from collections.abc import Iterator

__all__ = ["home", "mock_server", "workspace"]

SERVER = Path(__file__).parent / "mcp_server.py"
SCENARIOS = Path(__file__).parent / "scenarios"


def stdio_config(path: Path, name: str = "tst") -> Path:
    """Write a config running the test server over stdio as *name*; returns *path*."""
    server = {"command": sys.executable, "args": [str(SERVER)], "env": {"HOME": "${HOME}"}}
    path.write_text(json.dumps({"mcpServers": {name: server}}))
    return path


@pytest.fixture
def http_server(workspace: Path) -> Iterator[str]:
    """The test server over streamable HTTP on 127.0.0.1; yields its URL."""
    proc = subprocess.Popen(
        [sys.executable, str(SERVER), "http"],
        cwd=workspace,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        env=clean_env(),
    )
    assert proc.stdout is not None
    url = proc.stdout.readline().strip()
    assert url.startswith("http://127.0.0.1:"), proc.communicate()
    yield url
    proc.terminate()
    proc.communicate(timeout=10)
