"""The request checks the mock server makes, as the real Messages API would."""

from __future__ import annotations

from typing import Any

import pytest

from coterie.models._validate import RequestInvalid, validate_request


def body(*messages: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"model": "m", "max_tokens": 10, "messages": list(messages), **extra}


def user(*content: Any) -> dict[str, Any]:
    if len(content) == 1 and isinstance(content[0], str):
        return {"role": "user", "content": content[0]}
    return {"role": "user", "content": list(content)}


def assistant(*content: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": list(content)}


def use(tool_id: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_id, "name": "Bash", "input": {"command": "ls"}}


def result(tool_id: str) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": tool_id, "content": "ok"}


def text(value: str = "hi") -> dict[str, Any]:
    return {"type": "text", "text": value}


@pytest.mark.parametrize(
    "request_body",
    [
        body(user("hi")),
        body(user("hi"), assistant(text("prefill"))),
        body(user("hi"), assistant(use("a"), use("b")), user(result("a"), result("b"), text())),
        body(
            user("hi"),
            assistant(text("let me look"), use("a")),
            user(result("a")),
            assistant(text("done")),
            user("thanks"),
        ),
        body(
            user("hi"),
            system=[{"type": "text", "text": "sys", "cache_control": {"type": "ephemeral"}}],
            tools=[{"name": "Bash", "input_schema": {"type": "object"}}],
            stream=True,
        ),
    ],
)
def test_valid_requests_pass(request_body: dict[str, Any]) -> None:
    validate_request(request_body)


@pytest.mark.parametrize(
    ("request_body", "expected"),
    [
        ([], "must be a JSON object"),
        ({"max_tokens": 1, "messages": [user("x")]}, "model: Field required"),
        ({"model": "m", "messages": [user("x")]}, "max_tokens: Field required"),
        (body(user("x"), max_tokens=0), "greater than or equal to 1"),
        (body(), "at least one message"),
        (body(assistant(text())), 'first message must use the "user" role'),
        (body(user("x"), user("y")), 'found multiple "user" roles in a row'),
        (body({"role": "system", "content": "x"}), "Input should be 'user' or 'assistant'"),
        (
            body(user("x"), assistant(use("a")), user("no result")),
            "messages.1: `tool_use` ids were found without `tool_result` blocks "
            "immediately after: a",
        ),
        (body(user("x"), assistant(use("a"), use("b")), user(result("a"))), "immediately after: b"),
        (body(user("x"), assistant(use("a"))), "without `tool_result` blocks"),
        (body(user(result("a"))), "unexpected `tool_use_id` found in `tool_result` blocks: a"),
        (
            body(user("x"), assistant(use("a")), user(result("a"), result("z"))),
            "unexpected `tool_use_id`",
        ),
        (body(user("x"), assistant(text()), user(result("a"))), "unexpected `tool_use_id`"),
        (body(user("x"), assistant(use("a")), user(text(), result("a"))), "must come FIRST"),
        (body(user(use("a"))), "tool_use blocks must be in assistant messages"),
        (body(user("x"), assistant(result("a"))), "tool_result blocks must be in user messages"),
        (
            body(
                user("x"),
                assistant(use("a")),
                user(result("a")),
                assistant(use("a")),
                user(result("a")),
            ),
            "`tool_use` ids must be unique: a",
        ),
        (body(user({"type": "banana"})), "Input tag 'banana'"),
        (body(user({"text": "no type"})), "content block with a 'type'"),
        (body(user(text(""))), "text content blocks must be non-empty"),
        (body(user("")), "all messages must have non-empty content"),
        (
            body(user("x"), assistant({"type": "tool_use", "id": "a", "name": "X"})),
            "input: Input should be a valid dictionary",
        ),
        (
            body(
                user("x"),
                tools=[{"name": "A", "input_schema": {}}, {"name": "A", "input_schema": {}}],
            ),
            "Duplicate name: A",
        ),
        (body(user("x"), tools=[{"name": "A"}]), "input_schema: Field required"),
        (
            body(user("x"), system=[{"type": "text", "text": ""}]),
            "system.0: text content blocks must be non-empty",
        ),
        (body(user("x"), stream="yes"), "stream: Input should be a valid boolean"),
    ],
)
def test_invalid_requests_are_refused_like_the_api_does(request_body: Any, expected: str) -> None:
    with pytest.raises(RequestInvalid) as info:
        validate_request(request_body)
    assert expected in str(info.value)
