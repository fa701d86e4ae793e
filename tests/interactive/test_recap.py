"""A reopened conversation's recap: the last exchanges, one line each (pure)."""

from __future__ import annotations

from typing import Any

from coterie.interactive.recap import recap

REMINDER = {"type": "text", "text": "<system-reminder>memory</system-reminder>"}


def user(*texts: str, reminder: bool = False) -> dict[str, Any]:
    blocks = [REMINDER] if reminder else []
    return {"role": "user", "content": [*blocks, *({"type": "text", "text": t} for t in texts)]}


def assistant(text: str | None = None, tool: bool = False) -> dict[str, Any]:
    blocks: list[dict[str, Any]] = []
    if text is not None:
        blocks.append({"type": "text", "text": text})
    if tool:
        blocks.append({"type": "tool_use", "id": "t", "name": "Read", "input": {}})
    return {"role": "assistant", "content": blocks}


def test_each_exchange_is_the_prompt_and_the_last_answer() -> None:
    results = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t"}]}
    history = [
        user("fix the bug\nin parser.py", reminder=True),
        assistant("Looking.", tool=True),
        results,
        assistant("Fixed it.\nDetails..."),
        user("now the tests"),
        assistant(tool=True),
    ]
    assert recap(history) == [
        ("fix the bug", "Fixed it."),
        ("now the tests", "(no answer)"),
    ]


def test_only_the_last_few_and_long_lines_are_cut() -> None:
    history = [m for i in range(5) for m in (user(f"q{i}"), assistant("a" * 300))]
    shown = recap(history, last=2, width=20)
    assert [p for p, _ in shown] == ["q3", "q4"]
    assert all(len(a) == 20 and a.endswith("…") for _, a in shown)
    assert recap([]) == []
