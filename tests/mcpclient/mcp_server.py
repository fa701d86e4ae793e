"""A real MCP server for the tests, on the ``mcp`` package's server side.

``python mcp_server.py`` serves over stdio; ``python mcp_server.py http``
serves streamable HTTP on 127.0.0.1 at a port the system picks, printing its
URL as the first line of standard output. Each start leaves a file
``mcp-started.<pid>`` in its working directory, so a test can count starts.
Its tools: ``echo`` (the text back), ``add``, ``shout`` (read-only, says so),
``big`` (a long answer), ``nap`` (a slow one) and ``die`` (the process exits mid-call, as a crash).
"""

from __future__ import annotations

import os
import socket
import sys
from pathlib import Path

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

app = MCPServer("test-server")


@app.tool()
def echo(text: str) -> str:
    """Say the text back."""
    return f"echo: {text}"


@app.tool()
def add(a: int, b: int) -> str:
    """Add two integers."""
    return str(a + b)


@app.tool(annotations=ToolAnnotations(readOnlyHint=True))
def shout(text: str) -> str:
    """Say the text back in capitals (it claims to be read-only)."""
    return text.upper()


@app.tool()
def big(n: int) -> str:
    """An answer of n characters."""
    return "x" * n


@app.tool()
async def nap(seconds: float) -> str:
    """Answer after some seconds."""
    import anyio

    await anyio.sleep(seconds)
    return "rested"


@app.tool()
def die() -> str:
    """Crash the server in the middle of the call."""
    os._exit(3)


def main() -> None:
    Path(f"mcp-started.{os.getpid()}").write_text("")
    if sys.argv[1:2] != ["http"]:
        app.run()
        return
    import anyio
    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    print(f"http://127.0.0.1:{sock.getsockname()[1]}/mcp", flush=True)
    config = uvicorn.Config(app.streamable_http_app(), log_level="warning")
    anyio.run(lambda: uvicorn.Server(config).serve(sockets=[sock]))


if __name__ == "__main__":
    main()
