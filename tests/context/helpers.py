"""Builders for Messages-format histories used across the context tests."""

from __future__ import annotations

from typing import Any

from coterie.context.history import message_chars

Message = dict[str, Any]


class CountingChars:
    """A message-size function that counts how often it is called."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, message: dict[str, Any]) -> int:
        self.calls += 1
        return message_chars(message)


def user(*texts: str) -> Message:
    """A user message of text blocks."""
    return {"role": "user", "content": [{"type": "text", "text": t} for t in texts]}


def assistant(text: str | None = None, *calls: tuple[str, str, dict[str, Any]]) -> Message:
    """An assistant message: optional text, then ``(id, name, input)`` tool calls."""
    content: list[dict[str, Any]] = []
    if text:
        content.append({"type": "text", "text": text})
    content += [{"type": "tool_use", "id": i, "name": n, "input": inp} for i, n, inp in calls]
    return {"role": "assistant", "content": content}


def results(*answers: tuple[str, str], extra: tuple[str, ...] = (), error: bool = False) -> Message:
    """A user message answering tool calls, ``(id, output)`` each, then *extra* text."""
    content: list[dict[str, Any]] = [
        {"type": "tool_result", "tool_use_id": i, "content": out, "is_error": error}
        for i, out in answers
    ]
    content += [{"type": "text", "text": t} for t in extra]
    return {"role": "user", "content": content}


def exchange(i: int, output: str, *, extra: tuple[str, ...] = ()) -> list[Message]:
    """One tool round: the assistant calls Bash as ``t<i>``, the user returns *output*."""
    call = (f"t{i}", "Bash", {"command": f"step {i}"})
    return [assistant(f"Running step {i}.", call), results((f"t{i}", output), extra=extra)]


def history(rounds: int, output: str = "ok", *, first: str = "Fix the bug.") -> list[Message]:
    """A first prompt and *rounds* tool rounds."""
    messages = [user(first)]
    for i in range(rounds):
        messages += exchange(i, output)
    return messages


def big(n: int, seed: str = "x") -> str:
    """*n* characters of distinguishable filler."""
    line = f"{seed} line of tool output with some detail 0123456789\n"
    return (line * (n // len(line) + 1))[:n]
