"""MCP configuration: Claude Code's format, ${VAR} expansion, where servers come from."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest
from hypothesis import given
from hypothesis import strategies as st

from coterie.mcpclient import (
    HttpServer,
    McpConfigError,
    StdioServer,
    expand,
    load_servers,
    parse_servers,
)
from coterie.projectconfig import project_items
from coterie.trust import set_trust
from tests.strategies import env_names, json_values, mcp_server_names, plain_texts

if TYPE_CHECKING:
    from pathlib import Path


@given(plain_texts)
def test_text_without_references_is_unchanged(text: str) -> None:
    assert expand(text, {}) == text


@given(env_names, st.text(max_size=20), plain_texts, plain_texts)
def test_a_set_variable_is_replaced(name: str, value: str, before: str, after: str) -> None:
    assert expand(f"{before}${{{name}}}{after}", {name: value}) == f"{before}{value}{after}"


@given(env_names, plain_texts.filter(lambda t: "}" not in t), st.sampled_from([None, ""]))
def test_a_default_stands_for_an_unset_or_empty_variable(
    name: str, default: str, value: str | None
) -> None:
    env = {} if value is None else {name: value}
    assert expand(f"${{{name}:-{default}}}", env) == default


@given(env_names)
def test_an_unset_variable_without_default_is_an_error(name: str) -> None:
    with pytest.raises(KeyError, match=name):
        expand(f"x ${{{name}}} y", {})


@given(mcp_server_names, st.lists(st.text(max_size=10), max_size=4))
def test_a_stdio_server_parses(name: str, args: list[str]) -> None:
    data = {"mcpServers": {name: {"command": "srv", "args": args, "env": {"K": "v"}}}}
    [server] = parse_servers(data, "f.json", {})
    assert server == StdioServer(name, "srv", tuple(args), (("K", "v"),), "f.json")


def test_expansion_covers_command_args_env_url_and_headers() -> None:
    env = {"BIN": "/opt/srv", "TOKEN": "t0k"}
    data = {
        "mcpServers": {
            "a": {
                "type": "stdio",
                "command": "${BIN}",
                "args": ["--x=${Y:-1}"],
                "env": {"T": "${TOKEN}"},
            },
            "b": {
                "type": "http",
                "url": "http://${HOST:-127.0.0.1}/mcp",
                "headers": {"A": "Bearer ${TOKEN}"},
            },
        }
    }
    a, b = parse_servers(data, "f", env)
    assert a == StdioServer("a", "/opt/srv", ("--x=1",), (("T", "t0k"),), "f")
    assert b == HttpServer("b", "http://127.0.0.1/mcp", (("A", "Bearer t0k"),), "f")


@given(json_values)
def test_any_json_parses_or_is_one_config_error(data: object) -> None:
    """The parser never raises anything but McpConfigError, whose message names the file."""
    try:
        parse_servers(data, "cfg.json", {})
    except McpConfigError as exc:
        message = str(exc)
    else:
        return
    assert "cfg.json" in message
    assert "\n" not in message


@given(st.dictionaries(st.text(max_size=8), json_values, max_size=3), mcp_server_names)
def test_any_server_entry_parses_or_is_one_config_error(
    entry: dict[str, object], name: str
) -> None:
    try:
        parse_servers({"mcpServers": {name: entry}}, "cfg.json", {})
    except McpConfigError as exc:
        message = str(exc)
    else:
        return
    assert message.startswith("cfg.json: server")


@pytest.mark.parametrize("bad", ["a__b", "_x", "x_", "", "a b", "x" * 65])
def test_bad_server_names_are_refused(bad: str) -> None:
    with pytest.raises(McpConfigError, match="a name is"):
        parse_servers({"mcpServers": {bad: {"command": "x"}}}, "f", {})


def test_an_unset_variable_names_the_file_server_and_variable() -> None:
    with pytest.raises(McpConfigError, match=r"f: server 'a'.*NOPE is not set"):
        parse_servers({"mcpServers": {"a": {"command": "${NOPE}"}}}, "f", {})


def _write(path: Path, servers: dict[str, object]) -> Path:
    path.write_text(json.dumps({"mcpServers": servers}))
    return path


def test_project_servers_are_read_only_in_a_trusted_workspace(tmp_path: Path) -> None:
    home, ws = tmp_path / "home", tmp_path / "ws"
    home.mkdir()
    ws.mkdir()
    _write(ws / ".mcp.json", {"p": {"command": "p"}})
    servers, notices = load_servers(ws, trusted=False, home=home, env={})
    assert servers == ()
    assert len(notices) == 1
    assert ".mcp.json" in notices[0]
    set_trust(ws, trusted=True, items=project_items(ws))
    servers, notices = load_servers(ws, trusted=True, home=home, env={})
    assert [s.name for s in servers] == ["p"]
    assert notices == ()


def test_later_sources_win_by_name(tmp_path: Path) -> None:
    """User, local scope, project, then --mcp-config: the last one naming a server wins."""
    home, ws = tmp_path / "home", tmp_path / "ws"
    home.mkdir()
    ws.mkdir()
    user = {
        "mcpServers": {"u": {"command": "user"}, "shared": {"command": "user"}},
        "projects": {str(ws): {"mcpServers": {"local": {"command": "local"}}}},
    }
    (home / ".claude.json").write_text(json.dumps(user))
    _write(ws / ".mcp.json", {"shared": {"command": "project"}})
    extra = _write(tmp_path / "extra.json", {"shared": {"command": "cli"}})
    servers, _ = load_servers(ws, trusted=True, home=home, files=[extra], env={})
    commands = {s.name: s.command for s in servers if isinstance(s, StdioServer)}
    assert commands == {"u": "user", "shared": "cli", "local": "local"}


def test_a_missing_mcp_config_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(McpConfigError, match="no such MCP config file"):
        load_servers(tmp_path, trusted=True, home=tmp_path, files=[tmp_path / "x.json"], env={})


def test_invalid_json_names_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{nope")
    with pytest.raises(McpConfigError, match=r"bad.json: not valid JSON"):
        load_servers(tmp_path, trusted=True, home=tmp_path, files=[bad], env={})
