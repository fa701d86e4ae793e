"""HostLink over in-memory lines: handlers, cancels, our requests and their deadlines."""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Any

import trio

from coterie.hostlink import Cancel, HostLink, Request, encode, success_response

if TYPE_CHECKING:
    from collections.abc import AsyncIterator


class Host:
    """The host's side: lines it sends, lines it got."""

    def __init__(self) -> None:
        self.send, self.receive = trio.open_memory_channel[str](math.inf)
        self.got: list[dict[str, Any]] = []
        self.wrote = trio.Event()

    async def write_line(self, line: str) -> None:
        assert "\n" not in line
        self.got.append(json.loads(line))
        self.wrote.set()
        self.wrote = trio.Event()

    async def lines(self) -> AsyncIterator[str]:
        async for line in self.receive:
            yield line

    def say(self, frame: dict[str, Any]) -> None:
        self.send.send_nowait(json.dumps(frame))

    async def next_written(self, count: int | None = None) -> dict[str, Any]:
        """The line written after the first *count* (default: those written so far)."""
        count = len(self.got) if count is None else count
        while len(self.got) <= count:
            await self.wrote.wait()
        return self.got[count]


def ask(request_id: str, subtype: str, **fields: Any) -> dict[str, Any]:
    return {"type": "control_request", "request_id": request_id,
            "request": {"subtype": subtype, **fields}}  # fmt: skip


async def test_a_host_request_is_answered_by_its_handler() -> None:
    host = Host()

    async def mode(request: Request) -> dict[str, Any]:
        return {"mode": request.body["mode"]}

    link = HostLink({"set_permission_mode": mode}, host.write_line)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(link.run, host.lines())
        host.say(ask("r1", "set_permission_mode", mode="plan"))
        answer = await host.next_written()
        host.send.close()
    assert answer["response"] == {"subtype": "success", "request_id": "r1",
                                  "response": {"mode": "plan"}}  # fmt: skip


async def test_a_failing_handler_is_an_error_answer_and_the_link_goes_on() -> None:
    host = Host()

    async def broken(request: Request) -> dict[str, Any]:
        raise ValueError("no such server")

    link = HostLink({"mcp_reconnect": broken}, host.write_line)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(link.run, host.lines())
        host.say(ask("r1", "mcp_reconnect"))
        first = await host.next_written()
        host.say(ask("r2", "mcp_reconnect"))
        second = await host.next_written()
        host.send.close()
    assert first["response"]["error"] == "no such server"
    assert second["response"]["request_id"] == "r2"


async def test_a_cancel_from_the_host_cancels_the_handler_and_answers_nothing(
    autojump_clock: trio.abc.Clock,
) -> None:
    host = Host()
    started, cancelled = trio.Event(), trio.Event()

    async def slow(request: Request) -> dict[str, Any]:
        started.set()
        try:
            await trio.sleep_forever()
        finally:
            cancelled.set()
        return {}  # pragma: no cover

    link = HostLink({"initialize": slow}, host.write_line)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(link.run, host.lines())
        host.say(ask("r1", "initialize"))
        await started.wait()
        host.say({"type": "control_cancel_request", "request_id": "r1"})
        await cancelled.wait()
        await trio.sleep(1)
        host.send.close()
    assert host.got == []


async def test_our_request_gets_the_hosts_answer(autojump_clock: trio.abc.Clock) -> None:
    host = Host()
    link = HostLink({}, host.write_line)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(link.run, host.lines())

        async def answer() -> None:
            request = await host.next_written(0)
            host.say(json.loads(encode(success_response(request["request_id"],
                                                        {"behavior": "allow"}))))  # fmt: skip

        nursery.start_soon(answer)
        response = await link.ask("can_use_tool", {"tool_name": "Bash"}, answer_within=30)
        host.send.close()
    assert response is not None
    assert response.body == {"behavior": "allow"}
    assert host.got[0]["request"] == {"subtype": "can_use_tool", "tool_name": "Bash"}


async def test_a_host_that_does_not_answer_in_time_is_told_to_stop(
    autojump_clock: trio.abc.Clock,
) -> None:
    host = Host()
    link = HostLink({}, host.write_line)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(link.run, host.lines())
        before = trio.current_time()
        response = await link.ask("can_use_tool", {}, answer_within=30)
        waited = trio.current_time() - before
        host.send.close()
    assert response is None
    assert 30 <= waited < 31
    [request, cancel] = host.got
    assert cancel == json.loads(encode(Cancel(request["request_id"])))


async def test_a_host_gone_settles_what_we_asked_and_closes_the_turns() -> None:
    host = Host()
    link = HostLink({}, host.write_line)
    got: list[Any] = []
    async with trio.open_nursery() as nursery:
        nursery.start_soon(link.run, host.lines())

        async def asking() -> None:
            got.append(await link.ask("can_use_tool", {}, answer_within=600))

        nursery.start_soon(asking)
        host.say({"type": "user", "message": {"role": "user", "content": "hi"}})
        await host.next_written()
        host.send.close()
    assert got == [None]
    turns = [turn async for turn in link.turns]
    assert [t["message"]["content"] for t in turns] == ["hi"]
    assert await link.ask("can_use_tool", {}, answer_within=1) is None


async def test_a_bad_line_is_reported_and_the_link_goes_on() -> None:
    host = Host()
    strays: list[str] = []

    async def hello(request: Request) -> dict[str, Any]:
        return {}

    link = HostLink({"initialize": hello}, host.write_line, on_stray=strays.append)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(link.run, host.lines())
        host.send.send_nowait("{oops")
        host.say(ask("r1", "initialize"))
        await host.next_written()
        host.send.close()
    assert strays == ["standard input, line 1: not JSON (Expecting property name enclosed in"
                      " double quotes at column 2)"]  # fmt: skip
