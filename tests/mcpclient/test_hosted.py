"""The transport to a server that lives in the host: ``mcp_message`` requests over
the control channel, read and answered as a ``ClientSession``'s streams."""

from __future__ import annotations

import pytest
import trio
import trio.testing
from mcp.client.session import ClientSession
from mcp.shared.exceptions import MCPError
from mcp.types import CONNECTION_CLOSED, INTERNAL_ERROR, JSONRPCError, JSONRPCResponse

from coterie.hostlink import error_response, success_response
from coterie.mcpclient.hosted import answer_of, hosted_client
from tests.mcpclient.host import FakeHost


async def test_a_session_initializes_lists_and_calls_through_the_host(
    autojump_clock: trio.testing.MockClock,
) -> None:
    host = FakeHost(notify_delay=1.0)
    async with hosted_client(host, "calc") as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        listed = await session.list_tools()
        result = await session.call_tool("add", {"a": 2, "b": 3})
    assert [t.name for t in listed.tools] == ["add"]
    assert result.content[0].text == "5"  # type: ignore[union-attr]
    assert {name for name, _ in host.seen} == {"calc"}
    # notifications/initialized is acked before the requests after it are sent
    assert host.methods() == ["initialize", "notifications/initialized", "tools/list", "tools/call"]


async def test_requests_go_out_together_a_long_call_holds_up_nothing(
    autojump_clock: trio.testing.MockClock,
) -> None:
    host = FakeHost(hold_calls=trio.Event())
    answers: list[str] = []
    with trio.fail_after(60):  # a request that waited for the held call would never end
        await _list_while_a_call_is_held(host, answers)
    assert answers == ["listed", "2"]


async def _list_while_a_call_is_held(host: FakeHost, answers: list[str]) -> None:
    async with hosted_client(host, "calc") as (read, write), ClientSession(read, write) as session:
        await session.initialize()

        async def call() -> None:
            result = await session.call_tool("add", {"a": 1, "b": 1})
            answers.append(result.content[0].text)  # type: ignore[union-attr]

        async with trio.open_nursery() as nursery:
            nursery.start_soon(call)
            await trio.testing.wait_all_tasks_blocked()  # the call is at the host, held
            await session.list_tools()  # answered while the call is held
            answers.append("listed")
            assert host.hold_calls is not None
            host.hold_calls.set()


async def test_an_error_answer_of_the_host_fails_that_request_alone() -> None:
    host = FakeHost()
    async with hosted_client(host, "calc") as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        host.override = error_response("r", "the server raised")
        with pytest.raises(MCPError, match="the server raised") as caught:
            await session.list_tools()
        assert caught.value.error.code == INTERNAL_ERROR
        host.override = None
        assert (await session.list_tools()).tools  # the connection goes on


async def test_a_host_that_is_gone_ends_the_connection(
    autojump_clock: trio.testing.MockClock,
) -> None:
    host = FakeHost()
    with trio.fail_after(60):  # not a request waiting for ever
        async with (
            hosted_client(host, "calc") as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            host.gone = True
            with pytest.raises(MCPError) as caught:
                await session.list_tools()
    assert caught.value.error.code == CONNECTION_CLOSED


def test_the_hosts_answer_is_the_json_rpc_response_it_carries() -> None:
    body = {"mcp_response": {"jsonrpc": "2.0", "id": 7, "result": {"tools": []}}}
    message = answer_of(success_response("r", body), 7, "calc").message
    assert isinstance(message, JSONRPCResponse)
    assert (message.id, message.result) == (7, {"tools": []})


@pytest.mark.parametrize(
    "body",
    [
        {},  # no mcp_response
        {"mcp_response": "5"},
        {"mcp_response": {"jsonrpc": "2.0", "id": 8, "result": {}}},  # another request's
        {"mcp_response": {"jsonrpc": "2.0", "result": {}}},  # a notification's ack
    ],
)
def test_an_answer_in_another_shape_is_an_error_for_that_request(body: dict[str, object]) -> None:
    message = answer_of(success_response("r", body), 7, "calc").message
    assert isinstance(message, JSONRPCError)
    assert message.id == 7
    assert "cannot read" in message.error.message
