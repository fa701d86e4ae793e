"""A stdio MCP server gets the user's environment, its own ``env`` over it, as Claude
Code passes them (issue 28: the mcp package's client passed a few defaults only)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from coterie.mcpclient.config import StdioServer
from coterie.mcpclient.stdio import stdio_client

if TYPE_CHECKING:
    from pathlib import Path

    import pytest

SERVER = """
import os
from mcp.server.mcpserver import MCPServer

app = MCPServer("env")


@app.tool()
def show(name: str) -> str:
    return os.environ.get(name, "<unset>")


app.run()
"""


async def test_the_server_sees_the_users_variables_and_its_own_over_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mcp.client.session import ClientSession

    monkeypatch.setenv("COTERIE_USERS_OWN", "from the shell")
    monkeypatch.setenv("COTERIE_OVERRIDDEN", "from the shell")
    script = tmp_path / "server.py"
    script.write_text(SERVER)
    config = StdioServer(
        "env", sys.executable, (str(script),), (("COTERIE_OVERRIDDEN", "from the config"),)
    )
    with (tmp_path / "server.log").open("a") as errlog:
        async with (
            stdio_client(config, cwd=tmp_path, errlog=errlog, records=None) as streams,
            ClientSession(streams[0], streams[1]) as session,
        ):
            await session.initialize()
            seen = {}
            for name in ("COTERIE_USERS_OWN", "COTERIE_OVERRIDDEN"):
                result = await session.call_tool("show", {"name": name})
                seen[name] = result.content[0].text  # type: ignore[union-attr]
    assert seen == {"COTERIE_USERS_OWN": "from the shell", "COTERIE_OVERRIDDEN": "from the config"}
