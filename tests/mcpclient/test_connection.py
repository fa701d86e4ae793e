"""A connection's answers while its server is not connected, and result rendering."""

from __future__ import annotations

from types import SimpleNamespace

from hypothesis import given
from hypothesis import strategies as st

from coterie.mcpclient import Connection, StdioServer, cap_output, render_content


async def test_a_call_while_starting_answers_at_once() -> None:
    result = await Connection(StdioServer("s", "x")).call("t", {})
    assert result.is_error
    assert "still starting" in result.content


async def test_a_call_while_restarting_says_the_server_is_restarting() -> None:
    connection = Connection(StdioServer("s", "x"))
    connection.lost("it exited")
    result = await connection.call("t", {})
    assert result.is_error
    assert "unavailable (it exited); it is being restarted" in result.content


async def test_a_call_after_giving_up_says_it_will_not_come_back() -> None:
    connection = Connection(StdioServer("s", "x"))
    connection.gave_up("it kept exiting")
    result = await connection.call("t", {})
    assert result.is_error
    assert "will not be restarted" in result.content


def test_tools_stay_listed_while_the_server_restarts() -> None:
    connection = Connection(StdioServer("s", "x"))
    listed = [SimpleNamespace(name="t", description="d", input_schema={"type": "object"})]
    connection.connected(SimpleNamespace(), listed)  # type: ignore[arg-type]
    connection.lost("gone")
    assert [t.name for t in connection.tools()] == ["mcp__s__t"]


@given(st.text(max_size=300), st.integers(min_value=1, max_value=200))
def test_capped_output_keeps_the_head_and_says_what_was_cut(text: str, limit: int) -> None:
    capped = cap_output(text, limit)
    if len(text) <= limit:
        assert capped == text
    else:
        assert capped.startswith(text[:limit])
        assert f"{len(text) - limit} more characters not shown" in capped


def test_content_blocks_render_as_text() -> None:
    blocks = [
        SimpleNamespace(type="text", text="one"),
        SimpleNamespace(type="image", mime_type="image/png"),
        SimpleNamespace(type="resource", resource=SimpleNamespace(text="two", uri="u")),
    ]
    assert render_content(blocks) == "one\n[image content (image/png) not shown]\ntwo"


def test_structured_content_stands_in_for_no_blocks() -> None:
    assert render_content([], {"a": 1}) == '{"a": 1}'
