"""The host's requests about the run's MCP servers: mcp_status, mcp_reconnect, mcp_toggle."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
import trio

from coterie.commands.hostmcp import mcp_handlers
from coterie.hostlink import Request
from coterie.mcpclient import McpServers
from coterie.mcpclient.config import SdkServer
from coterie.mcpclient.servers import UnknownServer
from tests.mcpclient.host import FakeHost

if TYPE_CHECKING:
    from collections.abc import AsyncIterator
    from pathlib import Path

    from coterie.hostlink import Handler


@pytest.fixture
async def handlers(tmp_path: Path) -> AsyncIterator[dict[str, Handler]]:
    """The handlers over a run's one hosted server ``calc``, its actor running."""
    servers = McpServers.of([SdkServer("calc", "--mcp-config")], {}, host=FakeHost())

    async def given() -> McpServers:
        return servers

    async with trio.open_nursery() as nursery:
        for spec in servers.specs(workdir=tmp_path, logs=tmp_path, events=None):
            await nursery.start(spec.start)
        yield mcp_handlers(given)
        nursery.cancel_scope.cancel()


async def ask(handlers: dict[str, Handler], subtype: str, **body: Any) -> dict[str, Any]:
    return await handlers[subtype](Request("req_1", subtype, {"subtype": subtype, **body}))


async def status(handlers: dict[str, Handler]) -> list[tuple[str, str]]:
    answer = await ask(handlers, "mcp_status")
    return [(s["name"], s["status"]) for s in answer["mcpServers"]]


async def test_the_status_lists_every_server(handlers: dict[str, Handler]) -> None:
    answer = await ask(handlers, "mcp_status")
    assert answer["mcpServers"][0]["name"] == "calc"
    assert answer["mcpServers"][0]["tools"] == [{"name": "add"}]
    assert await status(handlers) == [("calc", "connected")]


async def test_a_toggle_turns_a_server_off_then_on(handlers: dict[str, Handler]) -> None:
    assert await ask(handlers, "mcp_toggle", serverName="calc", enabled=False) == {}
    assert await status(handlers) == [("calc", "disabled")]
    with pytest.raises(ValueError, match="turned off"):
        await ask(handlers, "mcp_reconnect", serverName="calc")
    assert await ask(handlers, "mcp_toggle", serverName="calc", enabled=True) == {}
    assert await status(handlers) == [("calc", "connected")]


async def test_a_reconnection_answers_once_connected(handlers: dict[str, Handler]) -> None:
    assert await ask(handlers, "mcp_reconnect", serverName="calc") == {}
    assert await status(handlers) == [("calc", "connected")]


@pytest.mark.parametrize("subtype", ["mcp_reconnect", "mcp_toggle"])
async def test_an_unknown_server_is_an_error_answer(
    handlers: dict[str, Handler], subtype: str
) -> None:
    with pytest.raises(UnknownServer, match="'nope'"):
        await ask(handlers, subtype, serverName="nope", enabled=True)


async def test_a_request_without_its_fields_is_an_error_answer(
    handlers: dict[str, Handler],
) -> None:
    with pytest.raises(ValueError, match="serverName"):
        await ask(handlers, "mcp_reconnect")
    with pytest.raises(ValueError, match="enabled"):
        await ask(handlers, "mcp_toggle", serverName="calc", enabled="yes")
