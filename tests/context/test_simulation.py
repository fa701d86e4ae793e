"""A long run: several hundred turns with large tool outputs, driven like the turn loop.

Every request the (strict) scripted model receives passes the mock server's
request validation and stays under the budget by the model's own count; one
``prompt is too long`` error turn is answered by compacting and retrying; the
user's instructions survive every compaction verbatim; the transcript replays
to the very history the loop ended with.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any

from coterie.context import (
    Budget,
    Funnel,
    FunnelConfig,
    TokenCounter,
    TranscriptLog,
    check_history,
    user_texts,
)
from coterie.events import EventLog
from coterie.models import ModelReply, ModelRequest
from tests.context.helpers import big, user
from tests.context.models import scripted

if TYPE_CHECKING:
    from pathlib import Path

TURNS = 400
SYSTEM = "You are a coding agent working in a test workspace."
TOOLS = [
    {
        "name": "Bash",
        "description": "Run a shell command.",
        "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}},
    }
]
TOO_LONG = {
    "status": 400,
    "type": "invalid_request_error",
    "message": "prompt is too long: 30512 tokens > 30000 maximum",
}
FIRST = "Refactor the parser. Don't push to main. Keep the public API stable."


def lead_track() -> list[dict[str, Any]]:
    track: list[dict[str, Any]] = []
    for i in range(TURNS):
        if i == TURNS // 2:
            # The API disagrees with the estimate once: compact and retry.
            track.append({"error": TOO_LONG})
        calls = [{"name": "Bash", "input": {"command": f"run step {i}"}}]
        if i % 5 == 0:
            calls.append({"name": "Bash", "input": {"command": f"inspect {i}"}})
        track.append({"text": f"Step {i}: running the next command.", "tool_uses": calls})
    track.append({"text": "All done."})
    return track


async def test_several_hundred_turns_stay_under_budget_and_valid(tmp_path: Path) -> None:
    rng = random.Random(4)
    model = scripted(
        {"lead": lead_track(), "summarizer": [{"text": "Refactoring in progress."}] * 20}
    )
    budget = Budget(window=30_000, threshold=0.8, target=0.5)
    events = EventLog()
    log = TranscriptLog.open(tmp_path / "lead.log", "batch")
    funnel = Funnel(
        tmp_path / "context",
        budget=budget,
        config=FunnelConfig(spill_chars=8_000, preview_chars=1_000, max_messages=200),
        counter=TokenCounter.for_request(SYSTEM, TOOLS),
        model=model,
        events=events,
        transcript=log,
        fsync=False,
    )
    todos = [{"content": "Refactor the parser", "status": "in_progress"}]
    messages = [user(FIRST)]
    await log.append_message(messages[0])
    instructions = [FIRST]
    sent: list[int] = []
    replies = 0

    async def call() -> ModelReply:
        request = ModelRequest(system=SYSTEM, messages=messages, tools=TOOLS, actor="lead")
        return await model.complete(request)

    while True:
        await funnel.check(messages, todos=todos, goal="the parser is refactored")
        reply = await funnel.complete(messages, call, todos=todos)
        replies += 1
        sent.append(reply.usage.input_tokens)
        funnel.record_usage(messages, reply.usage)
        messages.append({"role": "assistant", "content": reply.content})
        await log.append_message(messages[-1])
        if not reply.tool_uses:
            break
        answers: list[dict[str, Any]] = []
        for use in reply.tool_uses:
            await log.tool_started(use["id"], use["name"], use["input"])
            size = rng.choice([200, 2_000, 6_000, 20_000, 60_000])
            answers.append({"type": "tool_result", "tool_use_id": use["id"], "content": big(size)})
        if replies % 60 == 0:
            instructions.append(f"Also: never touch file{replies}.py.")
            answers.append({"type": "text", "text": instructions[-1]})
        messages.append({"role": "user", "content": answers})
        await log.append_message(messages[-1])

    assert replies == TURNS + 1
    # By the model's own count; the estimate is calibrated, not exact (within 1%).
    assert max(sent) <= budget.limit * 1.01, max(sent)
    check_history(messages)
    assert set(instructions) <= set(user_texts(messages))
    kinds = {e.type for e in events.history}
    assert {"context.spilled", "context.cleared", "context.archived", "context.reactive"} <= kinds
    log.close()
    with TranscriptLog.open(tmp_path / "lead.log") as reopened:
        assert reopened.load() == messages
