"""The funnel: which stages run when, what they record, and reactive compaction."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from coterie.context import (
    Budget,
    ContextOverflow,
    Funnel,
    FunnelConfig,
    TokenCounter,
    TranscriptLog,
    check_history,
    user_texts,
)
from coterie.events import EventLog
from coterie.models import ModelError, ModelRequest, PromptTooLong
from tests.context.helpers import (
    CountingChars,
    assistant,
    big,
    exchange,
    history,
    results,
    user,
)
from tests.context.models import scripted

if TYPE_CHECKING:
    from pathlib import Path

TOO_LONG = {
    "status": 400,
    "type": "invalid_request_error",
    "message": "prompt is too long: 250000 tokens > 200000 maximum",
}


def funnel_for(tmp_path: Path, **kwargs: object) -> Funnel:
    kwargs.setdefault("events", EventLog())
    return Funnel(tmp_path / "context", fsync=False, **kwargs)  # type: ignore[arg-type]


def types(funnel: Funnel) -> list[str]:
    assert funnel.events is not None
    return [e.type for e in funnel.events.history]


async def test_a_small_history_is_left_alone(tmp_path: Path) -> None:
    funnel = funnel_for(tmp_path)
    messages = history(5)
    snapshot = list(messages)
    report = await funnel.check(messages)
    assert not report.changed
    assert not report.over_budget
    assert all(a is b for a, b in zip(messages, snapshot, strict=True))
    assert types(funnel) == []


async def test_large_results_are_spilled_on_every_check(tmp_path: Path) -> None:
    funnel = funnel_for(tmp_path, config=FunnelConfig(result_limits={"Bash": 30_000}))
    messages = history(2)
    messages += exchange(5, big(60_000))
    report = await funnel.check(messages)
    assert report.stages == (1,)
    assert len(str(messages[-1])) < 5_000
    assert types(funnel) == ["context.spilled"]


async def test_each_tool_has_its_own_limit(tmp_path: Path) -> None:
    """Bash declares 30,000 characters; a tool declaring more keeps 60,000 whole, and
    a tool the funnel was not told about gets the default (about 25k tokens)."""
    limits = {"Bash": 30_000, "Read": 110_000}
    funnel = funnel_for(tmp_path, config=FunnelConfig(result_limits=limits))
    messages = history(1)
    for i, tool in enumerate(["Read", "mcp__x__y", "Bash"], start=5):
        call = (f"t{i}", tool, {})
        messages += [assistant("go", call), results((f"t{i}", big(60_000)))]
    await funnel.check(messages)
    kept = [len(str(m)) > 60_000 for m in messages[-5::2]]
    assert kept == [True, True, False]


async def test_the_check_is_o_new_messages(tmp_path: Path) -> None:
    """Counting serialiser calls: each check measures only the two new messages."""
    chars = CountingChars()
    funnel = funnel_for(
        tmp_path, counter=TokenCounter(chars=chars), config=FunnelConfig(max_messages=100_000)
    )
    messages = history(1000)
    await funnel.check(messages)
    for i in range(100):
        funnel.record_usage(messages, 10_000 + i)
        messages += exchange(5000 + i, "ok")
        before = chars.calls
        report = await funnel.check(messages)
        assert not report.changed
        assert chars.calls - before == 2


async def test_a_long_history_has_its_middle_archived(tmp_path: Path) -> None:
    funnel = funnel_for(tmp_path, config=FunnelConfig(max_messages=50, keep_messages=10))
    messages = history(40)
    report = await funnel.check(messages)
    assert report.stages == (2,)
    assert 10 <= len(messages) <= 12
    check_history(messages)
    (event,) = funnel.events.of_type("context.archived")  # type: ignore[union-attr]
    assert event.data["reason"] == "length"


async def test_over_budget_old_results_are_cleared_first(tmp_path: Path) -> None:
    funnel = funnel_for(tmp_path, budget=Budget(window=20_000), config=FunnelConfig(keep_results=2))
    messages = history(30, big(2_500))
    assert funnel.tokens(messages) > funnel.budget.limit
    report = await funnel.check(messages)
    assert report.stages == (3,)
    assert report.tokens_after <= funnel.budget.goal
    assert types(funnel) == ["context.cleared"]
    check_history(messages)


async def test_when_clearing_is_not_enough_the_middle_goes(tmp_path: Path) -> None:
    funnel = funnel_for(tmp_path, budget=Budget(window=20_000))
    messages = [user("Go.")]
    for i in range(30):  # the bulk is the assistant's own text: nothing to clear
        messages += [assistant(big(3_000), (f"t{i}", "Bash", {})), results((f"t{i}", "ok"))]
    report = await funnel.check(messages)
    assert report.stages == (2,)
    assert report.tokens_after <= funnel.budget.goal
    (event,) = funnel.events.of_type("context.archived")  # type: ignore[union-attr]
    assert event.data["reason"] == "budget"
    check_history(messages)


async def test_stage_4_runs_only_when_the_cheap_stages_fall_short(tmp_path: Path) -> None:
    """A huge tool input (a Write of a large file) in the latest exchange: only a summary helps."""
    model = scripted({"summarizer": [{"text": "Wrote the file."}]})
    funnel = funnel_for(tmp_path, budget=Budget(window=20_000), model=model)
    messages = [user("Write the data file. Keep it ASCII."), *exchange(1, "ok")]
    messages += [assistant(None, ("w", "Write", {"content": big(200_000)})), results(("w", "ok"))]
    report = await funnel.check(messages, goal="data file written")
    assert report.stages[-1] == 4
    assert not report.over_budget
    assert user_texts(messages) == ["Write the data file. Keep it ASCII."]
    assert types(funnel)[-1] == "context.summarized"
    check_history(messages)


async def test_compactions_are_recorded_in_the_transcript(tmp_path: Path) -> None:
    log = TranscriptLog.open(tmp_path / "t.log", "none")
    funnel = funnel_for(
        tmp_path,
        budget=Budget(window=20_000),
        transcript=log,
        model=scripted({"summarizer": []}),
        config=FunnelConfig(spill_chars=20_000),
    )
    messages: list[dict[str, object]] = []
    for message in [user("Go. Don't push to main."), *exchange(0, "ok")]:
        messages.append(message)
        await log.append_message(message)
    for i in range(1, 60):
        for message in exchange(i, big(4_000 * (i % 7) + 100)):
            messages.append(message)
            await log.append_message(message)
        await funnel.check(messages)
    assert set(types(funnel)) >= {"context.spilled", "context.cleared", "context.archived"}
    log.close()
    with TranscriptLog.open(tmp_path / "t.log") as reopened:
        assert reopened.load() == messages


async def test_a_prompt_too_long_compacts_and_retries_once(tmp_path: Path) -> None:
    model = scripted({"lead": [{"error": TOO_LONG}, {"text": "Done."}]})
    funnel = funnel_for(tmp_path)
    messages = history(40, big(4_000))

    async def call() -> str:
        request = ModelRequest(system="s", messages=messages)
        return (await model.complete(request)).text

    assert await funnel.complete(messages, call) == "Done."
    assert model.cursors == {"lead": 2}
    (event,) = funnel.events.of_type("context.reactive")  # type: ignore[union-attr]
    assert event.data["reported"] == 250_000
    assert funnel.tokens(messages) <= funnel.budget.goal
    check_history(messages)


async def test_a_second_prompt_too_long_is_a_clear_error(tmp_path: Path) -> None:
    model = scripted({"lead": [{"error": TOO_LONG}, {"error": TOO_LONG}, {"text": "never"}]})
    funnel = funnel_for(tmp_path)
    messages = history(40, big(4_000))

    async def call() -> str:
        return (await model.complete(ModelRequest(system="s", messages=messages))).text

    with pytest.raises(ContextOverflow, match="even after compacting") as info:
        await funnel.complete(messages, call)
    assert isinstance(info.value, ModelError)
    assert isinstance(info.value.__cause__, PromptTooLong)
    assert model.cursors == {"lead": 2}


async def test_nothing_left_to_compact_fails_without_a_retry(tmp_path: Path) -> None:
    model = scripted({"lead": [{"error": TOO_LONG}, {"text": "never"}]})
    funnel = funnel_for(tmp_path)
    messages = [user("A single enormous prompt.")]

    async def call() -> str:
        return (await model.complete(ModelRequest(system="s", messages=messages))).text

    with pytest.raises(ContextOverflow, match="nothing was left"):
        await funnel.complete(messages, call)
    assert model.cursors == {"lead": 1}


async def test_other_model_errors_pass_through(tmp_path: Path) -> None:
    model = scripted({"lead": [{"error": {"status": 529, "type": "overloaded_error"}}]})
    funnel = funnel_for(tmp_path)
    messages = history(3)

    async def call() -> str:
        return (await model.complete(ModelRequest(system="s", messages=messages))).text

    with pytest.raises(ModelError, match="overloaded") as info:
        await funnel.complete(messages, call)
    assert not isinstance(info.value, PromptTooLong)
