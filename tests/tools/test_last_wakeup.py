"""Which ScheduleWakeup of a request a dynamic loop follows: the last that succeeded."""

from __future__ import annotations

from typing import Any

from coterie.tools import last_wakeup


def call(id: str, delay: int, prompt: str) -> dict[str, Any]:
    data = {"delaySeconds": delay, "reason": "r", "prompt": prompt}
    return {
        "role": "assistant",
        "content": [{"type": "tool_use", "id": id, "name": "ScheduleWakeup", "input": data}],
    }


def result(id: str, *, error: bool = False) -> dict[str, Any]:
    block = {"type": "tool_result", "tool_use_id": id, "content": "ok", "is_error": error}
    return {"role": "user", "content": [block]}


PROMPT = {"role": "user", "content": [{"type": "text", "text": "watch the CI"}]}
DONE = {"role": "assistant", "content": [{"type": "text", "text": "done"}]}


def test_the_last_successful_call_counts() -> None:
    messages = [PROMPT, call("a", 90, "first"), result("a"), call("b", 120, "second"), result("b")]
    wakeup = last_wakeup([*messages, DONE])
    assert wakeup is not None
    assert (wakeup["delaySeconds"], wakeup["prompt"]) == (120, "second")


def test_a_failed_or_unanswered_call_schedules_nothing() -> None:
    failed = [PROMPT, call("a", 90, "x"), result("a", error=True), DONE]
    assert last_wakeup(failed) is None
    assert last_wakeup([PROMPT, call("a", 90, "x")]) is None
    earlier = [
        PROMPT,
        call("a", 90, "first"),
        result("a"),
        call("b", 90, "no"),
        result("b", error=True),
    ]
    wakeup = last_wakeup([*earlier, DONE])
    assert wakeup is not None
    assert wakeup["prompt"] == "first"


def test_a_call_of_an_earlier_request_does_not_count() -> None:
    older = [PROMPT, call("a", 90, "x"), result("a"), DONE]
    assert last_wakeup([*older, PROMPT, DONE]) is None


def test_a_last_call_with_stop_ends_the_loop() -> None:
    stop = call("b", 90, "x")
    stop["content"][0]["input"] = {"stop": True, "reason": "converged"}
    assert (
        last_wakeup([PROMPT, call("a", 90, "first"), result("a"), stop, result("b"), DONE]) is None
    )
    # An earlier stop changed its mind: the later call schedules.
    assert last_wakeup([PROMPT, stop, result("b"), call("a", 90, "go"), result("a"), DONE])


async def test_the_tool_takes_claude_codes_inputs(tmp_path: Any) -> None:
    from coterie.tools import ScheduleWakeupTool, ToolContext

    ctx = ToolContext(workspace=tmp_path)
    tool = ScheduleWakeupTool()
    assert (await tool.run({}, ctx)).content == "Wake-up scheduled in 60 s:"
    said = await tool.run({"stop": True, "reason": "done", "noop": True}, ctx)
    assert said.content == "The loop ends after this pass: done"
