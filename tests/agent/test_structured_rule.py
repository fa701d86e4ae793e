"""The rule of a prompt whose answer must come through StructuredOutput: ask once
more, give up after five refused attempts (Claude Code 2.1.332's numbers)."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

from coterie.agent._structured import MAX_ATTEMPTS, OutputRule, answer_in

TOOL = "StructuredOutput"


def call(id: str, name: str = TOOL, **input: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": id, "name": name, "input": input}


def result(id: str, *, error: bool) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": id, "content": f"r-{id}", "is_error": error}


def test_a_stop_without_the_tool_is_reminded_once_per_prompt() -> None:
    rule = OutputRule(TOOL)
    reminder = rule.stopped()
    assert reminder is not None
    assert TOOL in reminder
    assert rule.stopped() is None
    assert OutputRule(TOOL).stopped() is not None  # the next prompt's rule asks again


def test_claude_codes_limit_is_five_attempts() -> None:
    assert MAX_ATTEMPTS == 5


def test_the_fifth_refused_reply_gives_up_naming_the_last_refusal() -> None:
    rule = OutputRule(TOOL)
    for i in range(MAX_ATTEMPTS - 1):
        assert rule.answered([call(f"c{i}")], [result(f"c{i}", error=True)]) is None
    gave_up = rule.answered([call("c4")], [result("c4", error=True)])
    assert gave_up is not None
    assert f"{MAX_ATTEMPTS} attempts" in gave_up
    assert "r-c4" in gave_up


def test_replies_without_a_refused_call_of_the_tool_do_not_count() -> None:
    """Another tool's error, or a reply with no call of the tool, is no attempt; the
    attempts need not be consecutive."""
    rule = OutputRule(TOOL, max_attempts=2)
    assert rule.answered([call("b", "Bash")], [result("b", error=True)]) is None
    assert rule.answered([call("a")], [result("a", error=True)]) is None
    assert rule.answered([call("b2", "Bash")], [result("b2", error=False)]) is None
    assert rule.answered([call("a2")], [result("a2", error=True)]) is not None


def test_several_refused_calls_in_one_reply_are_one_attempt() -> None:
    rule = OutputRule(TOOL, max_attempts=2)
    calls = [call("a"), call("b")]
    assert rule.answered(calls, [result("a", error=True), result("b", error=True)]) is None


def test_an_answer_recorded_in_the_history_is_found() -> None:
    messages = [
        {"role": "user", "content": [{"type": "text", "text": "go"}]},
        {"role": "assistant", "content": [call("x", "Bash"), call("y", answer=4)]},
        {"role": "user", "content": [result("x", error=True), result("y", error=False)]},
    ]
    assert answer_in(messages, TOOL) == {"answer": 4}


def test_a_refused_or_unanswered_call_is_no_answer() -> None:
    asked = {"role": "assistant", "content": [call("y", answer="four")]}
    refused = {"role": "user", "content": [result("y", error=True)]}
    assert answer_in([asked, refused], TOOL) is None
    assert answer_in([{"role": "user", "content": "go"}, asked], TOOL) is None
    assert answer_in([], TOOL) is None


def test_the_rule_imports_no_trio() -> None:
    source = Path(__file__).parents[2] / "coterie" / "agent" / "_structured.py"
    tree = ast.parse(source.read_text())
    names = {
        alias.name.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in (
            node.names if isinstance(node, ast.Import) else [ast.alias(node.module or "")]
        )
    }
    assert "trio" not in names
