"""Server-sent events, decoded sans-io: bytes in, ``(event, data)`` pairs out.

The Messages API streams its reply as ``text/event-stream``; this is the
decoder the thin client (:mod:`coterie.models.messagesapi`) feeds with
whatever chunks the connection delivers. It follows the WHATWG rules a
client must: lines end in CRLF, LF or a lone CR; a line starting with ``:``
is a comment; ``data`` lines of one event are joined with newlines; an
event is dispatched at a blank line, and only if it has data; one space
after the colon is dropped; a leading byte-order mark is ignored. ``id``
and ``retry`` are accepted and ignored (nothing here reconnects).
"""

from __future__ import annotations

import attrs

__all__ = ["SSEDecoder", "ServerSentEvent"]


@attrs.frozen
class ServerSentEvent:
    """One dispatched event: its ``event`` field (``message`` when absent) and
    its data lines joined by newlines."""

    event: str
    data: str


class SSEDecoder:
    """Feed it the body's bytes in any chunking; it returns the events completed."""

    def __init__(self) -> None:
        self._pending = b""
        self._started = False
        self._event = ""
        self._data: list[str] = []
        self._cr_last = False  # the last chunk ended in CR: a LF opening the next is its pair

    def feed(self, chunk: bytes) -> list[ServerSentEvent]:
        """The events *chunk* completes (a line cut across chunks waits for its end)."""
        if not chunk:
            return []
        if self._cr_last and chunk.startswith(b"\n"):
            chunk = chunk[1:]
        self._cr_last = chunk.endswith(b"\r")
        buffer = self._pending + chunk
        if not self._started and buffer:
            if len(buffer) < 3 and b"\xef\xbb\xbf".startswith(buffer):
                self._pending = buffer
                return []
            self._started = True
            buffer = buffer.removeprefix(b"\xef\xbb\xbf")
        lines = buffer.replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n")
        self._pending = lines.pop()
        done: list[ServerSentEvent] = []
        for raw in lines:
            if (event := self._line(raw.decode("utf-8", "replace"))) is not None:
                done.append(event)
        return done

    def close(self) -> list[ServerSentEvent]:
        """The end of the body: a last line without its end is taken as ended; an
        event without its blank line is dropped, as the rules say."""
        if not self._pending:
            return []
        last, self._pending = self._pending, b""
        self._line(last.decode("utf-8", "replace"))
        return []

    def _line(self, line: str) -> ServerSentEvent | None:
        if not line:
            return self._dispatch()
        if line.startswith(":"):
            return None
        name, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if name == "event":
            self._event = value
        elif name == "data":
            self._data.append(value)
        return None  # id, retry and unknown fields: nothing to do

    def _dispatch(self) -> ServerSentEvent | None:
        event, data = self._event or "message", self._data
        self._event, self._data = "", []
        if not data:
            return None
        return ServerSentEvent(event, "\n".join(data))
