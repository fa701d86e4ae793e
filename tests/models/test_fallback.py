"""``--fallback-model`` (coterie.models.fallback)."""

from __future__ import annotations

import pytest

from coterie.models import (
    FallbackModel,
    ModelAPIError,
    ModelRequest,
    Retrying,
    ScriptedModel,
    parse_scenario,
    resolve_model,
)

OVERLOADED: dict[str, object] = {
    "error": {"status": 529, "type": "overloaded_error", "message": "busy"}
}


def scripted(turns: list[dict[str, object]]) -> ScriptedModel:
    return ScriptedModel(
        parse_scenario({"tracks": {"lead": turns}}), model_name="claude-sonnet-4-5"
    )


def request(model: str | None = None, text: str = "hi") -> ModelRequest:
    return ModelRequest(system="s", messages=[{"role": "user", "content": text}], model=model)


async def test_an_overloaded_call_goes_on_with_the_fallback_and_stays_there() -> None:
    inner = scripted([OVERLOADED, {"text": "one"}, {"text": "two"}])
    model = FallbackModel(inner, "haiku")
    told: list[Retrying] = []
    assert (await model.complete(request(), on_retry=told.append)).text == "one"
    assert [r.fallback for r in told] == [resolve_model("haiku")]
    assert model.switched
    assert (await model.complete(request(text="more"), on_retry=told.append)).text == "two"
    assert len(told) == 1
    assert model.name == inner.name  # priced and reported as the run's model


@pytest.mark.parametrize(
    "error",
    [
        {"error": {"status": 500, "type": "api_error", "message": "x"}},
        {"error": {"status": 429, "type": "rate_limit_error", "message": "x"}},
    ],
)
async def test_other_errors_are_not_a_reason_to_fall_back(error: dict[str, object]) -> None:
    model = FallbackModel(scripted([error, {"text": "never"}]), "haiku")
    with pytest.raises(ModelAPIError):
        await model.complete(request())
    assert not model.switched


async def test_a_custom_subagents_model_is_left_alone() -> None:
    model = FallbackModel(scripted([OVERLOADED]), "haiku")
    with pytest.raises(ModelAPIError, match="529"):
        await model.complete(request("opus"))
