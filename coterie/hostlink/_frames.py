"""The lines of Claude Code's stream-json control protocol, read and written.

A host (the Claude Agent SDK, or anything that spawns ``claude`` with
``--input-format stream-json``) and the CLI exchange one JSON object per
line. Besides the conversation's own lines (``user`` messages in, ``system``,
``assistant``, ``user`` and ``result`` out), three kinds carry the control
protocol, in both directions:

- ``{"type": "control_request", "request_id": ID, "request": {"subtype": S, ...}}``;
- ``{"type": "control_response", "response": {"subtype": "success", "request_id":
  ID, "response": {...}}}`` or ``{"subtype": "error", "request_id": ID, "error":
  TEXT}``;
- ``{"type": "control_cancel_request", "request_id": ID}``: the sender gave up
  on request ID; its handler is cancelled and answers nothing.

:func:`parse_line` turns one input line into a :class:`Frame` (a pure
function); a line that is none of them raises :class:`FrameError`, which
keeps the request id when the line had one, so the error can be answered.
:func:`encode` writes a frame back as one line.
"""

from __future__ import annotations

import json
from typing import Any, Literal

import attrs

from coterie.errors import CoterieError

__all__ = [
    "Cancel",
    "Frame",
    "FrameError",
    "Request",
    "Response",
    "UserLine",
    "encode",
    "error_response",
    "parse_line",
    "success_response",
]


class FrameError(CoterieError, ValueError):
    """An input line that is not a frame of the protocol (bad JSON, a missing field).

    ``request_id`` is the id the line carried, if any: a request that cannot be
    read is still answered with an error response, so its sender does not wait.
    """

    def __init__(self, message: str, request_id: str | None = None) -> None:
        super().__init__(message)
        self.request_id = request_id


@attrs.frozen
class Request:
    """A control request: *subtype* and its fields (``body``, subtype included)."""

    request_id: str
    subtype: str
    body: dict[str, Any]


@attrs.frozen
class Response:
    """The answer to a request: a success with its *body*, or an error with its text."""

    request_id: str
    outcome: Literal["success", "error"]
    body: dict[str, Any] = attrs.field(factory=dict)
    error: str = ""
    #: A machine-readable reason beside an error's text (Claude Code's ``error_code``,
    #: such as ``bypass_not_launched``); None: none.
    code: str | None = None


class RequestRefused(Exception):
    """What a handler raises to refuse a request with an ``error_code`` as well as
    its text (any other exception is an error answer with the text alone)."""

    def __init__(self, message: str, code: str) -> None:
        super().__init__(message)
        self.code = code


@attrs.frozen
class Cancel:
    """The sender of request *request_id* no longer wants its answer."""

    request_id: str


@attrs.frozen
class UserLine:
    """A conversation line (``type`` ``user``): the next prompt, read by the caller."""

    raw: dict[str, Any]


Frame = Request | Response | Cancel | UserLine


def parse_line(line: str, number: int) -> Frame | None:
    """The frame on input line *number* (1-based); None for a blank line."""
    if not line.strip():
        return None
    where = f"standard input, line {number}"
    try:
        raw: Any = json.loads(line)
    except json.JSONDecodeError as exc:
        raise FrameError(f"{where}: not JSON ({exc.msg} at column {exc.colno})") from None
    if not isinstance(raw, dict):
        raise FrameError(f"{where}: expected a JSON object")
    kind = raw.get("type")
    if kind == "user":
        return UserLine(raw)
    if kind == "control_request":
        request_id = _id(raw.get("request_id"), where)
        body = raw.get("request")
        if not isinstance(body, dict) or not isinstance(body.get("subtype"), str):
            raise FrameError(f"{where}: 'request' must be an object with a 'subtype'", request_id)
        return Request(request_id, body["subtype"], body)
    if kind == "control_response":
        body = raw.get("response")
        if not isinstance(body, dict):
            raise FrameError(f"{where}: 'response' must be an object")
        request_id = _id(body.get("request_id"), where)
        if body.get("subtype") == "error":
            return Response(request_id, "error", error=str(body.get("error") or "unknown error"))
        if body.get("subtype") != "success":
            raise FrameError(f"{where}: a response's subtype is 'success' or 'error'")
        answer = body.get("response")
        return Response(request_id, "success", answer if isinstance(answer, dict) else {})
    if kind == "control_cancel_request":
        return Cancel(_id(raw.get("request_id"), where))
    raise FrameError(f"{where}: unknown line type {kind!r}")


def _id(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value:
        raise FrameError(f"{where}: 'request_id' must be a non-empty string")
    return value


def success_response(request_id: str, body: dict[str, Any]) -> Response:
    """The success answer to *request_id*."""
    return Response(request_id, "success", body)


def error_response(request_id: str, error: str, code: str | None = None) -> Response:
    """The error answer to *request_id* (with Claude Code's ``error_code`` *code*)."""
    return Response(request_id, "error", error=error, code=code)


def encode(frame: Request | Response | Cancel) -> str:
    """*frame* as one line of output (no newline)."""
    data: dict[str, Any]
    if isinstance(frame, Request):
        data = {
            "type": "control_request",
            "request_id": frame.request_id,
            "request": {**frame.body, "subtype": frame.subtype},
        }
    elif isinstance(frame, Response):
        inner: dict[str, Any] = {"subtype": frame.outcome, "request_id": frame.request_id}
        if frame.outcome == "success":
            inner["response"] = frame.body
        else:
            inner["error"] = frame.error
            if frame.code is not None:
                inner["error_code"] = frame.code
        data = {"type": "control_response", "response": inner}
    else:
        data = {"type": "control_cancel_request", "request_id": frame.request_id}
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))
