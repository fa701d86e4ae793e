"""Deferred tools and ToolSearch: which tools are deferred, how the request carries
them (as Claude Code 2.1.332 sends them), and what ToolSearch finds."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from coterie.tools import ToolContext, default_registry
from coterie.tools._registry import ToolRegistry
from coterie.tools.capabilities import Capabilities, Effect
from coterie.tools.catalogue import builtin_registry
from coterie.tools.task import custom_registry, subagent_registry
from coterie.tools.toolsearch import (
    PLACEHOLDER,
    TOOL_SEARCH,
    ToolSearchMode,
    ToolSearchTool,
    announced_tools,
    announcement,
    loaded_tools,
    search_tools,
)

#: What Claude Code 2.1.332 defers among the tools coterie has (the capture's facts).
CAPTURED = json.loads((Path(__file__).parent / "claude_code_tools.json").read_text())


@attrs.define
class Fake:
    """A tool of a given name, description and capabilities (an MCP server's, say)."""

    name: str
    description: str = "does things"
    input_schema: dict[str, Any] = attrs.field(factory=lambda: {"type": "object"})
    capabilities: Capabilities = attrs.field(factory=lambda: Capabilities(Effect.EXECUTION))

    async def run(self, input: dict[str, Any], ctx: ToolContext) -> Any:
        raise AssertionError("not run")


def names(schemas: list[dict[str, Any]]) -> list[str]:
    return [s["name"] for s in schemas]


# -- ENABLE_TOOL_SEARCH ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "mode"),
    [
        (None, ToolSearchMode("always")),
        ("true", ToolSearchMode("always")),
        ("false", ToolSearchMode("never")),
        ("auto", ToolSearchMode("auto", 10)),
        ("auto:5", ToolSearchMode("auto", 5)),
        ("auto:0", ToolSearchMode("auto", 0)),
        ("auto:101", ToolSearchMode("always")),
        ("nonsense", ToolSearchMode("always")),
    ],
)
def test_the_mode_is_read_as_claude_code_reads_it(value: str | None, mode: ToolSearchMode) -> None:
    env = {} if value is None else {"ENABLE_TOOL_SEARCH": value}
    assert ToolSearchMode.from_env(env) == mode


@given(st.text(max_size=20))
def test_any_value_gives_a_mode(value: str) -> None:
    mode = ToolSearchMode.from_env({"ENABLE_TOOL_SEARCH": value})
    assert mode.when in ("always", "never", "auto")
    assert 0 <= mode.percent <= 100


def test_the_tools_claude_code_defers_are_deferred() -> None:
    registry = builtin_registry()
    theirs = {n for n, t in CAPTURED["tools"].items() if t["deferred"]}
    ours = {t.name for t in registry.deferred()}
    for name in ("WebFetch", "NotebookEdit", "TaskStop", "Monitor"):
        assert name in theirs
        assert name in ours
    # Nothing is deferred that Claude Code sends whole.
    assert ours & set(CAPTURED["tools"]) <= theirs


def test_never_defers_nothing_and_offers_no_toolsearch() -> None:
    registry = ToolRegistry.of(builtin_registry(), search=ToolSearchMode("never"))
    assert registry.deferred() == []
    assert TOOL_SEARCH not in registry
    schemas = registry.schemas()
    assert "WebFetch" in names(schemas)
    assert not any(s.get("defer_loading") for s in schemas)


def test_every_mcp_tool_is_deferrable_and_auto_defers_them_when_they_are_many() -> None:
    small = [Fake("Bash"), Fake("mcp__srv__one"), Fake("mcp__srv__two")]
    big = [*small, *(Fake(f"mcp__srv__t{i}", "x" * 4000) for i in range(20))]
    auto = ToolSearchMode("auto", 10)
    assert auto.deferred(small, window=200_000) == []
    deferred = [t.name for t in auto.deferred(big, window=200_000)]
    assert "Bash" not in deferred
    assert len(deferred) == 22  # every MCP tool, not only the big ones
    assert [t.name for t in ToolSearchMode().deferred(small)] == ["mcp__srv__one", "mcp__srv__two"]


# -- the request -----------------------------------------------------------------------


def test_deferred_tools_are_left_out_until_loaded() -> None:
    schemas = default_registry().schemas()
    sent = names(schemas)
    assert "WebFetch" not in sent
    assert "NotebookEdit" not in sent
    assert TOOL_SEARCH in sent
    assert PLACEHOLDER["name"] in sent
    placeholder = schemas[sent.index(PLACEHOLDER["name"])]
    assert placeholder["defer_loading"] is True


def test_a_loaded_tool_is_sent_with_defer_loading() -> None:
    schemas = default_registry().schemas(loaded={"WebFetch"})
    fetch = next(s for s in schemas if s["name"] == "WebFetch")
    assert fetch["defer_loading"] is True
    assert fetch["input_schema"]["required"] == ["url", "prompt"]
    assert "NotebookEdit" not in names(schemas)


def test_loading_a_tool_leaves_the_rendered_prefix_byte_for_byte() -> None:
    """What the API renders before the conversation (the tools without
    defer_loading) is the same bytes whatever is loaded; the last tool, where
    the cache breakpoint goes, is one of them."""
    registry = default_registry()

    def rendered(loaded: set[str]) -> bytes:
        schemas = registry.schemas(loaded)
        assert not schemas[-1].get("defer_loading")
        eager = [s for s in schemas if not s.get("defer_loading")]
        return json.dumps(eager).encode()

    before = rendered(set())
    assert rendered({"WebFetch"}) == before
    assert rendered({"WebFetch", "NotebookEdit", "Monitor"}) == before


def test_a_subagent_registry_defers_as_its_parent_and_has_its_own_toolsearch() -> None:
    parent = ToolRegistry.of(default_registry(), search=ToolSearchMode("never"))
    assert "WebFetch" in names(subagent_registry(parent, "general-purpose").schemas())
    deferring = default_registry()
    child = subagent_registry(deferring, "general-purpose")
    assert "WebFetch" in [t.name for t in child.deferred()]
    assert child.get(TOOL_SEARCH) is not deferring.get(TOOL_SEARCH)
    reader = custom_registry(deferring, ("Read", "Grep"))  # nothing deferred among them
    assert reader.deferred() == []
    assert TOOL_SEARCH not in reader


def test_toolsearch_is_listed_with_the_tools_the_model_is_told_of() -> None:
    registry = default_registry()
    assert TOOL_SEARCH in registry.offered()
    assert "WebFetch" in registry.offered()
    assert TOOL_SEARCH not in registry.names()  # the registry's own, not a registered tool


# -- ToolSearch -----------------------------------------------------------------------


TOOLS = [
    Fake("NotebookEdit", "Replace, insert or delete a cell of a Jupyter notebook"),
    Fake("WebFetch", "Fetch a URL and answer a prompt about the page"),
    Fake("mcp__slack__send_message", "Send a message to a channel"),
    Fake("mcp__mail__send", "Send an email"),
]


def test_select_names_tools_exactly() -> None:
    found = search_tools("select:WebFetch,notebookedit,Nope", TOOLS)
    assert [t.name for t in found] == ["WebFetch", "NotebookEdit"]


def test_keywords_find_by_name_and_description() -> None:
    assert [t.name for t in search_tools("notebook jupyter", TOOLS)] == ["NotebookEdit"]
    assert [t.name for t in search_tools("+slack send", TOOLS)] == ["mcp__slack__send_message"]
    assert len(search_tools("send", TOOLS, limit=1)) == 1
    assert search_tools("kubernetes", TOOLS) == []


@given(st.text(max_size=40), st.integers(min_value=1, max_value=10))
def test_a_search_finds_only_deferred_tools_within_the_limit(query: str, limit: int) -> None:
    found = search_tools(query, TOOLS, limit)
    assert all(t in TOOLS for t in found)
    assert len({t.name for t in found}) == len(found)
    if not query.strip().lower().startswith("select:"):
        assert len(found) <= limit


async def test_toolsearch_answers_with_tool_references(tmp_path: Path) -> None:
    tool = ToolSearchTool(lambda: TOOLS)
    result = await tool.run({"query": "select:WebFetch"}, ToolContext(workspace=tmp_path))
    assert result.for_model == [{"type": "tool_reference", "tool_name": "WebFetch"}]
    missing = await tool.run({"query": "select:Nope"}, ToolContext(workspace=tmp_path))
    assert not missing.is_error
    assert "No deferred tool matches" in missing.content


# -- the history ----------------------------------------------------------------------


def test_the_history_says_what_was_loaded_and_announced() -> None:
    messages = [
        {"role": "user", "content": [{"type": "text", "text": announcement(["A", "B"])}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "ToolSearch"}]},
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "t",
                    "content": [{"type": "tool_reference", "tool_name": "A"}],
                }
            ],
        },
    ]
    assert announced_tools(messages) == {"A", "B"}
    assert loaded_tools(messages) == {"A"}
    # A user's text quoting a reference is not a result.
    quoted = [{"role": "user", "content": "tool_reference A"}]
    assert loaded_tools(quoted) == set() == announced_tools(quoted)


def test_a_team_member_defers_what_one_agent_alone_does_not() -> None:
    """AskUserQuestion, Workflow, TodoWrite, Agent and ListAgents go with every call
    of one agent, as in Claude Code; a team's members (whose plan is the board and
    whose members their role names) load them with ToolSearch when they need them."""
    from coterie.tools.catalogue import builtin_tools

    tools = builtin_tools()
    alone = {t.name for t in ToolSearchMode("always").deferred(tools)}
    member = {t.name for t in ToolSearchMode("always", team=True).deferred(tools)}
    assert member - alone == {"AskUserQuestion", "Workflow", "TodoWrite", "Agent", "ListAgents"}
    assert not {t.name for t in ToolSearchMode("never", team=True).deferred(tools)}
