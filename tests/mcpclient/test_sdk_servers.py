"""``"type": "sdk"`` servers: where they may be configured, how a run without a host
skips them, and the host's orders (reconnect, turn off, turn on) to a server's actor."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest
import trio
import trio.testing

from coterie.mcpclient import Connection, McpServers, ServerConfig, StdioServer, load_servers
from coterie.mcpclient.config import SdkServer
from coterie.mcpclient.servers import UnknownServer
from tests.mcpclient.host import FakeHost

if TYPE_CHECKING:
    from pathlib import Path

SDK_TEXT = json.dumps({"mcpServers": {"calc": {"type": "sdk", "name": "calc"}}})


def test_the_hosts_mcp_config_text_names_an_sdk_server(tmp_path: Path) -> None:
    servers, notices = load_servers(
        tmp_path, trusted=False, home=tmp_path, files=[SDK_TEXT], env={}
    )
    assert servers == (SdkServer("calc", "--mcp-config"),)
    assert notices == ()


def test_an_sdk_server_in_a_file_is_skipped_with_one_notice(tmp_path: Path) -> None:
    config = tmp_path / "mcp.json"
    config.write_text(SDK_TEXT)
    (tmp_path / ".claude.json").write_text(
        json.dumps({"mcpServers": {"mine": {"type": "sdk", "name": "mine"}}})
    )
    servers, notices = load_servers(
        tmp_path, trusted=False, home=tmp_path, files=[str(config)], env={}
    )
    assert servers == ()
    assert len(notices) == 1
    assert "mine, calc of type 'sdk' skipped" in notices[0]


def test_without_a_host_an_sdk_server_is_skipped_with_one_notice() -> None:
    configs: list[ServerConfig] = [StdioServer("files", "x"), SdkServer("calc", "--mcp-config")]
    servers = McpServers.of(configs, {})
    assert [c.name for c in servers.connections] == ["files"]
    assert len(servers.notices) == 1
    assert "calc of type 'sdk' skipped" in servers.notices[0]
    hosted = McpServers.of(configs, {}, host=FakeHost())
    assert [c.name for c in hosted.connections] == ["files", "calc"]
    assert hosted.notices == ()


def test_an_unknown_server_is_named_in_the_error() -> None:
    with pytest.raises(UnknownServer, match=r"'nope'.*servers: calc"):
        McpServers.of([SdkServer("calc")], {}, host=FakeHost()).find("nope")


async def start(servers: McpServers, nursery: trio.Nursery, tmp_path: Path) -> None:
    for spec in servers.specs(workdir=tmp_path, logs=tmp_path / "logs", events=None):
        await nursery.start(spec.start)


async def test_a_hosted_server_is_described_as_claude_code_describes_it(tmp_path: Path) -> None:
    servers = McpServers.of([SdkServer("calc", "--mcp-config")], {}, host=FakeHost())
    assert servers.status() == [
        {"name": "calc", "status": "pending", "transport": "sdk", "scope": "dynamic",
         "source": "sdk"}
    ]  # fmt: skip
    async with trio.open_nursery() as nursery:
        await start(servers, nursery, tmp_path)
        assert servers.status() == [
            {"name": "calc", "status": "connected", "serverInfo": {"name": "calc",
             "version": "1.0.0"}, "transport": "sdk", "scope": "dynamic", "source": "sdk",
             "tools": [{"name": "add"}]}
        ]  # fmt: skip
        assert [t.name for t in servers.tools()] == ["mcp__calc__add"]
        nursery.cancel_scope.cancel()


async def test_turning_a_server_off_hides_its_tools_and_on_starts_it_anew(
    tmp_path: Path,
) -> None:
    host = FakeHost()
    servers = McpServers.of([SdkServer("calc", "--mcp-config")], {}, host=host)
    connection = servers.find("calc")
    async with trio.open_nursery() as nursery:
        await start(servers, nursery, tmp_path)
        await connection.disable()
        assert (connection.status, servers.tools()) == ("disabled", [])
        assert servers.status()[0]["status"] == "disabled"
        host.seen.clear()
        assert await connection.restart() == "connected"
        assert host.methods() == ["initialize", "notifications/initialized", "tools/list"]
        assert [t.name for t in servers.tools()] == ["mcp__calc__add"]
        nursery.cancel_scope.cancel()


async def test_a_reconnection_brings_back_a_server_whose_supervisor_gave_up(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    host = FakeHost(gone=True)
    servers = McpServers.of([SdkServer("calc", "--mcp-config")], {}, host=host)
    connection: Connection = servers.find("calc")
    async with trio.open_nursery() as nursery:
        await start(servers, nursery, tmp_path)
        await trio.sleep(600)  # every restart fails: its supervisor gives up
        assert connection.status == "failed"
        assert servers.status()[0]["error"]
        host.gone = False
        assert await connection.restart() == "connected"
        result = await connection.call("add", {"a": 1, "b": 2})
        assert (result.content, result.is_error) == ("3", False)
        nursery.cancel_scope.cancel()


async def test_a_call_in_flight_when_the_server_is_turned_off_ends_and_it_stays_off(
    tmp_path: Path,
) -> None:
    host = FakeHost(hold_calls=trio.Event())
    servers = McpServers.of([SdkServer("calc", "--mcp-config")], {}, host=host)
    connection = servers.find("calc")
    results = []
    async with trio.open_nursery() as nursery:
        await start(servers, nursery, tmp_path)

        async def call() -> None:
            results.append(await connection.call("add", {"a": 1, "b": 2}))

        nursery.start_soon(call)
        await trio.testing.wait_all_tasks_blocked()  # the call is at the host, held
        await connection.disable()
        await trio.testing.wait_all_tasks_blocked()
        [result] = results
        assert result.is_error
        assert connection.status == "disabled"
        nursery.cancel_scope.cancel()
