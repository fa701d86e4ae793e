"""ScriptedModel: tracks, cursors, expect, errors, crashes, exhaustion, persistence."""

from __future__ import annotations

import itertools
import json
from typing import TYPE_CHECKING, Any

import pytest
import trio

from coterie.models import (
    ModelAPIError,
    ModelError,
    ModelRequest,
    PromptTooLong,
    ScenarioError,
    ScriptedCrash,
    ScriptedModel,
    Usage,
    UsageLedger,
    cost_usd,
    load_scenario,
)
from tests.models.conftest import SCENARIOS, scenario

if TYPE_CHECKING:
    from pathlib import Path


_requests = itertools.count()


def ask(text: str = "go", actor: str = "lead", role: str = "lead", **kw: Any) -> ModelRequest:
    """A request unlike any before it (the player answers a repeated request alike)."""
    kw.setdefault("system", f"sys {next(_requests)}")
    return ModelRequest(messages=[{"role": "user", "content": text}], actor=actor, role=role, **kw)


async def test_replies_come_in_track_order() -> None:
    model = ScriptedModel(scenario({"lead": [{"text": "one"}, {"text": "two"}]}))
    assert (await model.complete(ask())).text == "one"
    assert (await model.complete(ask())).text == "two"


async def test_actor_track_wins_over_role_track() -> None:
    model = ScriptedModel(scenario({"alice": [{"text": "A"}], "teammate": [{"text": "T"}]}))
    assert (await model.complete(ask(actor="alice", role="teammate"))).text == "A"
    assert (await model.complete(ask(actor="bob", role="teammate"))).text == "T"


async def test_actors_of_a_role_share_its_track() -> None:
    model = ScriptedModel(scenario({"teammate": [{"text": "first"}, {"text": "second"}]}))
    assert (await model.complete(ask(actor="bob", role="teammate"))).text == "first"
    assert (await model.complete(ask(actor="carol", role="teammate"))).text == "second"


async def test_each_track_has_its_own_cursor() -> None:
    model = ScriptedModel(scenario({"lead": [{"text": "L0"}], "evaluator": [{"text": "E0"}]}))
    assert (await model.complete(ask(actor="evaluator", role="evaluator"))).text == "E0"
    assert (await model.complete(ask())).text == "L0"
    assert model.cursors == {"evaluator": 1, "lead": 1}


async def test_concurrent_callers_on_a_shared_track_get_distinct_turns() -> None:
    turns = [{"text": f"t{i}"} for i in range(6)]
    model = ScriptedModel(scenario({"teammate": turns}))
    seen: list[str] = []

    async def call(actor: str) -> None:
        seen.append((await model.complete(ask(actor=actor, role="teammate"))).text)

    async with trio.open_nursery() as nursery:
        for i in range(6):
            nursery.start_soon(call, f"mate-{i}")
    assert sorted(seen) == [f"t{i}" for i in range(6)]


async def test_expect_is_checked_against_the_last_user_message() -> None:
    model = ScriptedModel(scenario({"lead": [{"expect": "needle", "text": "found"}]}))
    reply = await model.complete(ask("hay needle hay"))
    assert reply.text == "found"


async def test_expect_sees_tool_result_contents() -> None:
    model = ScriptedModel(scenario({"lead": [{"expect": "exit code 0", "text": "ok"}]}))
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "run it"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {}}],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "t1",
                    "content": [{"type": "text", "text": "exit code 0"}],
                }
            ],
        },
    ]
    reply = await model.complete(ModelRequest(system="", messages=messages))
    assert reply.text == "ok"


async def test_expect_mismatch_names_track_and_turn_and_consumes_nothing() -> None:
    model = ScriptedModel(scenario({"lead": [{"text": "a"}, {"expect": "needle", "text": "b"}]}))
    await model.complete(ask())
    with pytest.raises(ScenarioError, match=r"test\.json: tracks\.lead\[1\]: expected .*'needle'"):
        await model.complete(ask("only hay"))
    assert (await model.complete(ask("a needle"))).text == "b"


async def test_error_turn_raises_the_api_error_and_is_used_up() -> None:
    model = ScriptedModel(
        scenario(
            {
                "lead": [
                    {"error": {"status": 529, "type": "overloaded_error", "message": "busy"}},
                    {"text": "after"},
                ]
            }
        )
    )
    with pytest.raises(ModelAPIError) as info:
        await model.complete(ask())
    assert (info.value.status, info.value.type, info.value.message) == (
        529,
        "overloaded_error",
        "busy",
    )
    assert not isinstance(info.value, PromptTooLong)
    assert (await model.complete(ask())).text == "after"


async def test_prompt_too_long_error_turn_raises_prompt_too_long() -> None:
    error = {
        "status": 400,
        "type": "invalid_request_error",
        "message": "prompt is too long: 250000 tokens > 200000 maximum",
    }
    model = ScriptedModel(scenario({"lead": [{"error": error}]}))
    with pytest.raises(PromptTooLong):
        await model.complete(ask())


async def test_crash_turn_is_used_up_then_raised(tmp_path: Path) -> None:
    scen = scenario({"lead": [{"crash": "deliberate bug"}, {"text": "recovered"}]})
    state = tmp_path / "state.json"
    model = ScriptedModel(scen, state_path=state)
    with pytest.raises(ScriptedCrash, match="deliberate bug"):
        await model.complete(ask())
    restarted = ScriptedModel(scen, state_path=state)
    assert (await restarted.complete(ask())).text == "recovered"


def test_scripted_crash_is_not_a_coterie_error() -> None:
    """Supervision must see it as an ordinary unexpected exception."""
    assert not issubclass(ScriptedCrash, ModelError)


async def test_persisted_cursors_survive_a_new_instance(tmp_path: Path) -> None:
    scen = load_scenario(SCENARIOS / "pursue-goal.json")
    state = tmp_path / "run" / "scenario-state.json"
    first = ScriptedModel(scen, state_path=state)
    await first.complete(ask())
    await first.complete(ask(actor="evaluator", role="evaluator"))
    assert json.loads(state.read_text())["cursors"] == {"evaluator": 1, "lead": 1}
    resumed = ScriptedModel(scen, state_path=state)
    assert resumed.cursors == {"evaluator": 1, "lead": 1}
    reply = await resumed.complete(ask())
    assert reply.tool_uses[0]["name"] == "Write"


async def test_a_corrupt_state_file_is_refused(tmp_path: Path) -> None:
    state = tmp_path / "state.json"
    state.write_text('{"v": 1, "cursors": {"lead": -1}}')
    with pytest.raises(ModelError, match="not a coterie scenario state file"):
        ScriptedModel(scenario({"lead": []}), state_path=state)


@pytest.mark.parametrize("actor", ["lead", "alice"])
async def test_running_out_is_an_error_for_working_actors(actor: str) -> None:
    model = ScriptedModel(scenario({"lead": [{"text": "only"}], "alice": []}))
    if actor == "lead":
        await model.complete(ask())
    with pytest.raises(ScenarioError, match=rf"tracks\.{actor} has no more turns"):
        await model.complete(ask(actor=actor, role="lead" if actor == "lead" else "teammate"))


async def test_no_track_at_all_is_an_error_naming_both_candidates() -> None:
    model = ScriptedModel(scenario({"lead": []}))
    with pytest.raises(ScenarioError, match=r"add tracks\.bob or tracks\.teammate"):
        await model.complete(ask(actor="bob", role="teammate"))


async def test_an_exhausted_evaluator_says_not_met() -> None:
    model = ScriptedModel(scenario({"evaluator": [{"text": '{"ok": true, "reason": "r"}'}]}))
    await model.complete(ask(actor="evaluator", role="evaluator"))
    reply = await model.complete(ask(actor="evaluator", role="evaluator"))
    assert json.loads(reply.text) == {
        "ok": False,
        "reason": "the scenario has no more evaluator turns",
    }


async def test_a_missing_classifier_track_blocks() -> None:
    model = ScriptedModel(scenario({"lead": []}))
    reply = await model.complete(ask(actor="classifier", role="classifier"))
    assert reply.text.startswith("<block>yes</block>")
    assert "no more classifier turns" in reply.text


async def test_tool_use_ids_are_generated_deterministically_unless_given() -> None:
    uses = [
        {"name": "Read", "input": {"file_path": "a"}},
        {"name": "Read", "input": {"file_path": "b"}, "id": "toolu_mine"},
    ]
    model = ScriptedModel(scenario({"lead": [{"text": "x"}, {"text": "look", "tool_uses": uses}]}))
    await model.complete(ask())
    reply = await model.complete(ask())
    assert [u["id"] for u in reply.tool_uses] == ["toolu_lead_1_0", "toolu_mine"]
    assert reply.content[0] == {"type": "text", "text": "look"}
    assert reply.stop_reason == "tool_use"


async def test_stop_reason_defaults_and_overrides() -> None:
    model = ScriptedModel(
        scenario({"lead": [{"text": "a"}, {"text": "b", "stop_reason": "max_tokens"}]})
    )
    assert (await model.complete(ask())).stop_reason == "end_turn"
    assert (await model.complete(ask())).stop_reason == "max_tokens"


async def test_text_is_streamed_in_several_chunks() -> None:
    model = ScriptedModel(scenario({"lead": [{"text": "a reply long enough to split"}]}))
    chunks: list[str] = []
    reply = await model.complete(ask(), on_text=chunks.append)
    assert len(chunks) > 1
    assert "".join(chunks) == reply.text


async def test_usage_comes_from_the_turn_else_an_estimate() -> None:
    given = {"input_tokens": 10, "output_tokens": 2, "cache_read_input_tokens": 90}
    model = ScriptedModel(scenario({"lead": [{"text": "x", "usage": given}, {"text": "y" * 400}]}))
    assert (await model.complete(ask())).usage == Usage(**given)
    estimated = (await model.complete(ask("z" * 4000))).usage
    assert 1000 <= estimated.input_tokens <= 1100
    assert 100 <= estimated.output_tokens <= 110


async def test_usage_and_cost_are_recorded_per_actor() -> None:
    usage = {"input_tokens": 1000, "output_tokens": 100}
    model = ScriptedModel(
        scenario(
            {"lead": [{"text": "x", "usage": usage}], "alice": [{"text": "y", "usage": usage}]}
        ),
        model_name="claude-opus-5",
        ledger=UsageLedger(),
    )
    await model.complete(ask())
    await model.complete(ask(actor="alice", role="teammate"))
    assert model.ledger.usage("alice") == Usage(**usage)
    assert model.ledger.usage() == Usage(2000, 200)
    assert model.ledger.cost_usd("lead") == pytest.approx(cost_usd("claude-opus-5", Usage(**usage)))
    assert model.ledger.calls() == 2


async def test_replies_do_not_share_state_with_the_scenario() -> None:
    model = ScriptedModel(
        scenario({"lead": [{"tool_uses": [{"name": "X", "input": {"k": [1]}}]}] * 2})
    )
    first = await model.complete(ask())
    first.tool_uses[0]["input"]["k"].append(2)
    assert (await model.complete(ask())).tool_uses[0]["input"] == {"k": [1]}


async def test_strict_mode_refuses_what_the_api_would() -> None:
    model = ScriptedModel(scenario({"lead": [{"text": "x"}]}), strict=True)
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "go"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t", "name": "X", "input": {}}],
        },
        {"role": "user", "content": "no result"},
    ]
    with pytest.raises(ModelAPIError, match="without `tool_result` blocks") as info:
        await model.complete(ModelRequest(system="", messages=messages))
    assert info.value.status == 400
    assert model.cursors == {}


async def test_a_repeated_request_gets_the_same_turn_again() -> None:
    """A reply lost to a kill is served again on resume, not skipped."""
    model = ScriptedModel(scenario({"lead": [{"text": "one"}, {"text": "two"}]}))
    request = ask()
    assert (await model.complete(request)).text == "one"
    assert (await model.complete(request)).text == "one"
    assert (await model.complete(ask())).text == "two"


async def test_a_repeated_request_is_recognised_by_a_new_instance(tmp_path: Path) -> None:
    state = tmp_path / "state.json"
    track = scenario({"lead": [{"text": "one"}, {"text": "two"}]})
    request = ask()
    assert (await ScriptedModel(track, state_path=state).complete(request)).text == "one"
    assert (await ScriptedModel(track, state_path=state).complete(request)).text == "one"
    assert (await ScriptedModel(track, state_path=state).complete(ask())).text == "two"


async def test_a_retry_after_an_error_turn_gets_the_next_turn() -> None:
    model = ScriptedModel(
        scenario({"lead": [{"error": {"status": 529, "type": "overloaded_error"}}, {"text": "ok"}]})
    )
    request = ask()
    with pytest.raises(ModelAPIError):
        await model.complete(request)
    assert (await model.complete(request)).text == "ok"


async def test_expect_not_fails_a_request_that_contains_the_text() -> None:
    model = ScriptedModel(scenario({"lead": [{"expect_not": "secret", "text": "ok"}]}))
    with pytest.raises(ScenarioError, match="must not"):
        await model.complete(ask("here is the secret"))


async def test_expect_not_passes_a_request_without_the_text() -> None:
    model = ScriptedModel(scenario({"lead": [{"expect_not": "secret", "text": "ok"}]}))
    assert (await model.complete(ask("nothing to see"))).text == "ok"
