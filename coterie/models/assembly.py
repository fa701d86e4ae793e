"""A streamed reply put back together, sans-io: Messages API events in, the message out.

The thin client (:mod:`coterie.models.messagesapi`) and the SDK's stream
(:mod:`coterie.models.sdktransport`) both hand their raw events to a
:class:`MessageAssembly`, so the message a reply becomes is built one way.
It follows the API's streaming contract: ``message_start`` carries the
message with empty content; each block opens with ``content_block_start``,
grows by ``content_block_delta`` (``text_delta``, ``input_json_delta``,
``thinking_delta``, ``signature_delta``, ``citations_delta``) and closes with
``content_block_stop``, where a tool's accumulated JSON input is parsed (a
server tool's ``server_tool_use`` too; its result, ``web_search_tool_result``,
comes whole in its ``content_block_start``, and the text citing it gathers
its ``citations`` from ``citations_delta``);
``message_delta`` brings the stop reason and the final usage; ``message_stop``
ends it. An event out of that order (a delta for a block never opened, a
second ``message_start``, an input that is not JSON) is a
:class:`StreamProtocolError`: nothing of such a reply may be used.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from coterie.models._base import Usage

__all__ = ["MessageAssembly", "StreamProtocolError"]

_USAGE_FIELDS = (
    "input_tokens",
    "output_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
)
#: Blocks whose input arrives as ``input_json_delta`` pieces.
_INPUT_BLOCKS = frozenset({"tool_use", "server_tool_use", "mcp_tool_use"})


class StreamProtocolError(ValueError):
    """The events do not make one well-formed message."""


class MessageAssembly:
    """Feed it each event as it comes; :attr:`stopped` once ``message_stop`` came,
    then :meth:`message` is the whole reply (a plain JSON-able dict)."""

    def __init__(self) -> None:
        self._message: dict[str, Any] | None = None
        self._blocks: dict[int, dict[str, Any]] = {}
        self._inputs: dict[int, list[str]] = {}
        self._open: set[int] = set()
        self.stopped = False

    def feed(self, event: dict[str, Any]) -> str | None:
        """Take one event; returns the text it adds to a text block, if any (for
        the caller to stream on)."""
        try:
            return self._feed(event)
        except (TypeError, AttributeError) as exc:  # a field of the wrong shape
            raise StreamProtocolError(f"a malformed {event.get('type')} event: {exc}") from None

    def _feed(self, event: dict[str, Any]) -> str | None:
        kind = event.get("type")
        if self.stopped and kind != "ping":
            raise StreamProtocolError(f"{kind} after message_stop")
        if kind == "message_start":
            if self._message is not None:
                raise StreamProtocolError("a second message_start")
            message = event.get("message")
            if not isinstance(message, dict):
                raise StreamProtocolError("message_start without a message")
            if not isinstance(message.get("usage") or {}, dict):
                raise StreamProtocolError("message_start with a usage that is not an object")
            self._message = {**copy.deepcopy(message), "content": []}
            return None
        if kind == "ping":
            return None
        message = self._started(kind)
        if kind == "content_block_start":
            index, block = self._index(event), event.get("content_block")
            if not isinstance(block, dict) or index in self._blocks:
                raise StreamProtocolError(f"content_block_start {index} malformed or repeated")
            self._blocks[index] = copy.deepcopy(block)
            self._open.add(index)
            if block.get("type") in _INPUT_BLOCKS:
                self._inputs[index] = []
            return None
        if kind == "content_block_delta":
            return self._delta(self._index(event), event.get("delta"))
        if kind == "content_block_stop":
            self._stop(self._index(event))
            return None
        if kind == "message_delta":
            delta = event.get("delta") or {}
            if not isinstance(delta, dict):
                raise StreamProtocolError("message_delta with a delta that is not an object")
            for field in ("stop_reason", "stop_sequence", "container"):
                if field in delta:
                    message[field] = delta[field]
            if isinstance(usage := event.get("usage"), dict):
                merged = dict(message.get("usage") or {})
                merged.update({k: v for k, v in usage.items() if v is not None})
                message["usage"] = merged
            return None
        if kind == "message_stop":
            if self._open:
                raise StreamProtocolError(f"message_stop with block {min(self._open)} open")
            self.stopped = True
            return None
        return None  # an event type this client does not know: ignored, as the API asks

    def message(self) -> dict[str, Any]:
        """The assembled message (``content`` in index order)."""
        if self._message is None or not self.stopped:
            raise StreamProtocolError("the message is not complete")
        done = dict(self._message)
        done["content"] = [self._blocks[i] for i in sorted(self._blocks)]
        return done

    def usage(self) -> dict[str, int]:
        """The token counts so far (all four fields, 0 where the API said nothing; the
        searches of a server tool are :meth:`Usage.from_api`'s to read)."""
        counted = Usage.from_api((self._message or {}).get("usage"))
        return {field: getattr(counted, field) for field in _USAGE_FIELDS}

    def _started(self, kind: object) -> dict[str, Any]:
        if self._message is None:
            raise StreamProtocolError(f"{kind} before message_start")
        return self._message

    @staticmethod
    def _index(event: dict[str, Any]) -> int:
        index = event.get("index")
        if not isinstance(index, int) or isinstance(index, bool) or index < 0:
            raise StreamProtocolError(f"{event.get('type')} without a block index")
        return index

    def _delta(self, index: int, delta: object) -> str | None:
        if index not in self._open or not isinstance(delta, dict):
            raise StreamProtocolError(f"a delta for block {index}, which is not open")
        block, kind = self._blocks[index], delta.get("type")
        if kind == "text_delta":
            text = str(delta.get("text", ""))
            block["text"] = block.get("text", "") + text
            return text if block.get("type") == "text" else None
        if kind == "input_json_delta":
            if index not in self._inputs:
                raise StreamProtocolError(f"input_json_delta for block {index}, not a tool use")
            self._inputs[index].append(str(delta.get("partial_json", "")))
        elif kind == "thinking_delta":
            block["thinking"] = block.get("thinking", "") + str(delta.get("thinking", ""))
        elif kind == "signature_delta":
            block["signature"] = str(delta.get("signature", ""))
        elif kind == "citations_delta":
            block["citations"] = [*(block.get("citations") or []), delta.get("citation")]
        return None

    def _stop(self, index: int) -> None:
        if index not in self._open:
            raise StreamProtocolError(f"content_block_stop for block {index}, which is not open")
        self._open.discard(index)
        pieces = self._inputs.pop(index, None)
        if pieces is None:
            return
        if not pieces:
            return  # the input came whole in content_block_start (or is empty)
        text = "".join(pieces)
        try:
            value = json.loads(text) if text.strip() else {}
        except ValueError as exc:
            raise StreamProtocolError(f"block {index}'s input is not JSON: {exc}") from None
        if not isinstance(value, dict):
            raise StreamProtocolError(f"block {index}'s input is not a JSON object")
        self._blocks[index]["input"] = value
