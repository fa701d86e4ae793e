"""Messages-API response bodies, JSON and server-sent events, without any I/O.

The event sequence and shapes are the real API's, because the real SDK parses
them: ``message_start``, then per content block ``content_block_start``, one
or more ``content_block_delta`` (``text_delta``, ``input_json_delta``, or
``thinking_delta`` then one ``signature_delta``) and
``content_block_stop``, then ``message_delta`` (stop reason and cumulative
usage) and ``message_stop``. A server tool's call (``server_tool_use``) streams
its input like a tool's; its result (``web_search_tool_result``) comes whole
in its ``content_block_start``; a text block's ``citations`` come as one
``citations_delta`` each, before its text. Usage is the API's form, the
searches under ``server_tool_use``. A ``ping`` follows the first block's start, as the
API sends one.
"""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from coterie.models._base import Usage

#: Error types by which the mock server tells coterie's client that a scenario
#: turn crashed (HTTP 418) or the scenario itself failed (expect, exhausted).
CRASH_ERROR_TYPE = "coterie_scripted_crash"
SCENARIO_ERROR_TYPE = "coterie_scenario_error"
#: Deltas per text block or tool input, so clients see real streaming.
DELTAS_PER_BLOCK = 3


def message_json(
    message_id: str,
    model: str,
    content: list[dict[str, Any]],
    stop_reason: str | None,
    usage: Usage,
) -> dict[str, Any]:
    """The non-streaming response body (``stop_reason`` is ``None`` only in ``message_start``)."""
    return {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": usage.to_api(),
    }


def error_json(error_type: str, message: str) -> dict[str, Any]:
    """An API error body: ``{"type": "error", "error": {"type", "message"}}``."""
    return {"type": "error", "error": {"type": error_type, "message": message}}


def stream_events(
    message_id: str,
    model: str,
    content: list[dict[str, Any]],
    stop_reason: str,
    usage: Usage,
) -> list[dict[str, Any]]:
    """The streaming events of a reply, in order, each as its ``data`` object."""
    start = message_json(message_id, model, [], None, usage)
    # Output tokens grow while streaming; message_start reports what is known.
    start["usage"] = usage.to_api() | {"output_tokens": min(1, usage.output_tokens)}
    events: list[dict[str, Any]] = [{"type": "message_start", "message": start}]
    for index, block in enumerate(content):
        opening, deltas = _opening(block)
        events.append({"type": "content_block_start", "index": index, "content_block": opening})
        if index == 0:
            events.append({"type": "ping"})
        events += [{"type": "content_block_delta", "index": index, "delta": d} for d in deltas]
        events.append({"type": "content_block_stop", "index": index})
    events.append(
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": None},
            "usage": usage.to_api(),
        }
    )
    events.append({"type": "message_stop"})
    return events


def _opening(block: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A block's ``content_block_start`` and the deltas that complete it."""
    kind = block["type"]
    if kind == "text":
        cites = [{"type": "citations_delta", "citation": c} for c in block.get("citations") or ()]
        texts = [{"type": "text_delta", "text": part} for part in _split(block["text"])]
        return {"type": "text", "text": ""}, [*cites, *texts]
    if kind == "thinking":
        deltas = [
            {"type": "thinking_delta", "thinking": part} for part in _split(block["thinking"])
        ]
        deltas.append({"type": "signature_delta", "signature": block["signature"]})
        return {"type": "thinking", "thinking": "", "signature": ""}, deltas
    if kind in ("tool_use", "server_tool_use"):
        raw = json.dumps(block["input"], ensure_ascii=False)
        deltas = [{"type": "input_json_delta", "partial_json": part} for part in _split(raw)]
        return {"type": kind, "id": block["id"], "name": block["name"], "input": {}}, deltas
    return dict(block), []  # a server tool's result: whole at its start


def sse_events(
    message_id: str,
    model: str,
    content: list[dict[str, Any]],
    stop_reason: str,
    usage: Usage,
) -> list[bytes]:
    """The streaming response body, one encoded event per item."""
    events = stream_events(message_id, model, content, stop_reason, usage)
    return [_event(event["type"], event) for event in events]


def _split(text: str) -> list[str]:
    if not text:
        return []
    size = max(1, math.ceil(len(text) / DELTAS_PER_BLOCK))
    return [text[i : i + size] for i in range(0, len(text), size)]


def _event(name: str, data: dict[str, Any]) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode()
