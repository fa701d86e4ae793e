"""Permission rules for MCP tools: mcp__server, mcp__server__*, mcp__server__tool."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from coterie.mcpclient import StdioServer, tool_name
from coterie.mcpclient.connection import Connection, McpTool
from coterie.tools.permissions.rules import RuleError, parse_rule
from tests.strategies import mcp_server_names

tool_names = st.from_regex(r"\A[a-z][a-z0-9_]{0,12}\Z")


def _tool(server: str, name: str) -> McpTool:
    return McpTool(Connection(StdioServer(server, "x")), name, "", {"type": "object"})


@given(mcp_server_names, tool_names, st.sampled_from(["", "__*"]))
def test_a_server_rule_covers_each_of_its_tools(server: str, tool: str, suffix: str) -> None:
    assert parse_rule(f"mcp__{server}{suffix}").applies_to(_tool(server, tool))


@given(mcp_server_names, mcp_server_names, tool_names)
def test_a_server_rule_covers_no_other_servers_tools(a: str, b: str, tool: str) -> None:
    rule = parse_rule(f"mcp__{a}")
    assert rule.applies_to(_tool(b, tool)) == (a == b)


@given(mcp_server_names, tool_names, tool_names)
def test_a_tool_rule_covers_that_tool_only(server: str, tool: str, other: str) -> None:
    rule = parse_rule(f"mcp__{server}__{tool}")
    assert rule.applies_to(_tool(server, other)) == (tool == other)


def test_a_tool_is_named_as_in_claude_code() -> None:
    assert tool_name("github", "create issue.v2") == "mcp__github__create_issue_v2"


def test_mcp_rules_take_no_specifier() -> None:
    with pytest.raises(RuleError, match="no specifier"):
        parse_rule("mcp__github(create_issue)")


def test_an_mcp_tool_is_never_read_only_whatever_it_claims() -> None:
    """Its effect is execution: the gate asks (or follows a rule) for every MCP tool."""
    assert not _tool("s", "t").capabilities.read_only
    assert not _tool("s", "t").capabilities.confined
