"""A fake host program for the tests of SDK (in-process) MCP servers: it answers the
``mcp_message`` requests of a hosted transport as an Agent SDK host would, from a
tiny calculator server written by hand (JSON-RPC, no ``mcp`` server)."""

from __future__ import annotations

from typing import Any

import attrs
import trio

from coterie.hostlink import Response, error_response, success_response

CALC_TOOLS = [
    {
        "name": "add",
        "description": "Add two numbers",
        "inputSchema": {"type": "object", "properties": {"a": {}, "b": {}}},
    }
]


@attrs.define
class FakeHost:
    """Serves server *server* until :attr:`gone`; records every message it is sent."""

    server: str = "calc"
    #: ``(server_name, message)`` of every ``mcp_message``, in the order they were asked.
    seen: list[tuple[str, dict[str, Any]]] = attrs.field(factory=list)
    #: When set, a ``tools/call`` waits for it (to show requests do not queue).
    hold_calls: trio.Event | None = None
    #: Answer every request with this instead (an error or an unreadable answer).
    override: Response | None = None
    gone: bool = False
    #: Seconds a notification takes to be acked (it is recorded as seen once acked).
    notify_delay: float = 0.0

    async def ask(
        self, subtype: str, body: dict[str, Any], *, answer_within: float
    ) -> Response | None:
        assert subtype == "mcp_message"
        if self.gone:
            return None
        message = body["message"]
        if "id" not in message:  # a notification: acked as the SDK acks one
            await trio.sleep(self.notify_delay)
            self.seen.append((body["server_name"], message))
            return success_response("r", {"mcp_response": {"jsonrpc": "2.0", "result": {}}})
        self.seen.append((body["server_name"], message))
        await trio.lowlevel.checkpoint()
        if self.override is not None:
            return self.override
        if body["server_name"] != self.server:
            return error_response("r", f"no server {body['server_name']}")
        result = await self._result(message)
        return success_response(
            "r", {"mcp_response": {"jsonrpc": "2.0", "id": message["id"], "result": result}}
        )

    async def _result(self, message: dict[str, Any]) -> dict[str, Any]:
        method = message["method"]
        if method == "initialize":
            return {
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": self.server, "version": "1.0.0"},
            }
        if method == "tools/list":
            return {"tools": CALC_TOOLS}
        if method == "tools/call":
            if self.hold_calls is not None:
                await self.hold_calls.wait()
            args = message["params"]["arguments"]
            return {"content": [{"type": "text", "text": str(args["a"] + args["b"])}]}
        return {}  # ping

    def methods(self) -> list[str]:
        return [m.get("method", "?") for _, m in self.seen]
