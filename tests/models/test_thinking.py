"""Extended thinking and effort in the model layer: the request fields per model
family (as Claude Code 2.1.332 sends them), the environment variable, the real
SDK client against the mock server, and the scripted model's ``thinking`` turns."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import given

from coterie.models import ModelError, ModelRequest, ScriptedModel, model_from_env
from coterie.models.anthropic_model import AnthropicModel
from coterie.models.thinking import Reasoning, Thinking, thinking_enabled
from tests.models.conftest import scenario
from tests.strategies import json_values

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from coterie.models import MockServer, Scenario

    Serve = Callable[[Scenario], Awaitable[MockServer]]

BUDGET = Reasoning(Thinking("enabled", budget_tokens=8000))
THOUGHT = {"thinking": "Two and two make four.", "text": "4"}


@pytest.fixture(autouse=True)
def _no_thinking_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MAX_THINKING_TOKENS", raising=False)


def ask(role: str = "lead", **kw: Any) -> ModelRequest:
    return ModelRequest(
        system="Be terse.", messages=[{"role": "user", "content": "2+2?"}], role=role, **kw
    )


# -- the request fields, model by model --------------------------------------------


@pytest.mark.parametrize(
    ("model", "thinking"),
    [
        ("claude-sonnet-4-5", {"type": "enabled", "budget_tokens": 8000}),
        ("claude-sonnet-4-5-20250929", {"type": "enabled", "budget_tokens": 8000}),
        ("us.anthropic.claude-sonnet-4-5-v1", {"type": "enabled", "budget_tokens": 8000}),
        ("claude-haiku-4-5", {"type": "enabled", "budget_tokens": 8000}),
        ("claude-opus-4-1", {"type": "enabled", "budget_tokens": 8000}),
        ("claude-opus-4-6", {"type": "adaptive"}),
        ("claude-sonnet-4-6", {"type": "adaptive"}),
        ("claude-sonnet-5-5", {"type": "adaptive"}),
        ("a-local-model", {"type": "adaptive"}),
    ],
)
def test_a_budget_is_sent_to_the_models_that_take_one(model: str, thinking: Any) -> None:
    fields = BUDGET.fields(model, "lead", 8192)
    assert fields == {"max_tokens": 32000, "thinking": thinking}


def test_claude_3_models_are_sent_no_thinking_and_no_effort() -> None:
    reasoning = Reasoning(Thinking("enabled", budget_tokens=8000), effort="low")
    assert reasoning.fields("claude-3-7-sonnet-20250219", "lead", 8192) == {"max_tokens": 8192}


@pytest.mark.parametrize(("asked", "sent"), [(500, 1024), (8000, 8000), (50000, 31999)])
def test_the_budget_is_kept_between_1024_and_below_max_tokens(asked: int, sent: int) -> None:
    fields = Reasoning(Thinking("enabled", budget_tokens=asked)).fields(
        "claude-sonnet-4-5", "lead", 8192
    )
    assert fields["thinking"] == {"type": "enabled", "budget_tokens": sent}


def test_enabled_or_adaptive_without_a_budget_is_the_largest_budget_on_older_models() -> None:
    for kind in ("enabled", "adaptive"):
        fields = Reasoning(Thinking(kind)).fields("claude-sonnet-4-5", "lead", 8192)
        assert fields["thinking"] == {"type": "enabled", "budget_tokens": 31999}


def test_a_larger_max_tokens_is_kept() -> None:
    assert BUDGET.fields("claude-sonnet-4-5", "lead", 64000)["max_tokens"] == 64000


def test_disabled_is_sent_as_disabled_and_leaves_max_tokens() -> None:
    fields = Reasoning(Thinking("disabled")).fields("claude-opus-4-6", "lead", 8192)
    assert fields == {"max_tokens": 8192, "thinking": {"type": "disabled"}}
    assert Reasoning.betas(fields) == []


def test_the_display_goes_with_the_thinking() -> None:
    reasoning = Reasoning(Thinking("adaptive", display="summarized"))
    assert reasoning.fields("claude-opus-4-6", "lead", 8192)["thinking"] == {
        "type": "adaptive",
        "display": "summarized",
    }


@pytest.mark.parametrize(
    ("model", "sent"),
    [("claude-opus-4-6", True), ("claude-opus-4-5", True), ("claude-sonnet-5-5", True),
     ("claude-sonnet-4-5", False), ("claude-haiku-4-5", False)],
)  # fmt: skip
def test_effort_goes_to_the_models_that_take_it(model: str, sent: bool) -> None:
    fields = Reasoning(effort="low").fields(model, "lead", 8192)
    assert ("output_config" in fields) is sent
    assert "thinking" not in fields
    if sent:
        assert fields["output_config"] == {"effort": "low"}
        assert Reasoning.betas(fields) == ["effort-2025-11-24"]


@pytest.mark.parametrize("role", ["lead", "teammate", "subagent"])
def test_every_agent_thinks(role: str) -> None:
    fields = BUDGET.fields("claude-sonnet-4-5", role, 8192)
    assert thinking_enabled(fields["thinking"])
    assert Reasoning.betas(fields) == ["interleaved-thinking-2025-05-14"]


@pytest.mark.parametrize("role", ["evaluator", "classifier", "summarizer"])
def test_the_services_do_not_think(role: str) -> None:
    reasoning = Reasoning(Thinking("enabled", budget_tokens=8000), effort="high")
    assert reasoning.fields("claude-opus-4-6", role, 1024) == {"max_tokens": 1024}


# -- options and the environment ----------------------------------------------------


@pytest.mark.parametrize(
    ("budget", "mode", "display", "expected"),
    [
        (None, None, None, None),
        (None, None, "summarized", None),
        (8000, None, None, {"type": "enabled", "budget_tokens": 8000}),
        (0, None, None, {"type": "disabled"}),
        (8000, "disabled", None, {"type": "disabled"}),
        (None, "adaptive", "omitted", {"type": "adaptive", "display": "omitted"}),
        (None, "enabled", None, {"type": "enabled"}),
    ],
)
def test_the_flags_make_a_thinking_config(
    budget: int | None, mode: str | None, display: str | None, expected: Any
) -> None:
    thinking = Thinking.from_options(budget, mode, display)
    assert (None if thinking is None else thinking.to_json()) == expected


@pytest.mark.parametrize(
    ("asked", "env", "expected"),
    [
        (None, "8000", {"type": "enabled", "budget_tokens": 8000}),
        ({"type": "enabled", "budget_tokens": 9000}, "5000",
         {"type": "enabled", "budget_tokens": 5000}),
        ({"type": "enabled", "budget_tokens": 9000}, "0", {"type": "disabled"}),
        ({"type": "disabled"}, "8000", {"type": "disabled"}),
        ({"type": "adaptive"}, "", {"type": "adaptive"}),
    ],
)  # fmt: skip
def test_max_thinking_tokens_wins_over_the_flag(asked: Any, env: str, expected: Any) -> None:
    reasoning = Reasoning.from_run(asked, None, {"MAX_THINKING_TOKENS": env})
    assert reasoning is not None
    assert reasoning.thinking is not None
    assert reasoning.thinking.to_json() == expected


def test_nothing_asked_is_no_reasoning() -> None:
    assert Reasoning.from_run(None, None, {}) is None


def test_a_bad_max_thinking_tokens_is_a_model_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MAX_THINKING_TOKENS", "lots")
    with pytest.raises(ModelError, match="MAX_THINKING_TOKENS must be a whole number"):
        model_from_env(env={"ANTHROPIC_API_KEY": "k"})


def test_the_factory_gives_the_model_its_reasoning() -> None:
    model = model_from_env(
        "claude-sonnet-4-5", env={"ANTHROPIC_API_KEY": "k"}, thinking={"type": "adaptive"},
        effort="low",
    )  # fmt: skip
    assert isinstance(model, AnthropicModel)
    assert model.reasoning == Reasoning(Thinking("adaptive"), "low")


@given(json_values)
def test_anything_but_a_thinking_config_is_a_value_error(data: object) -> None:
    try:
        thinking = Thinking.from_json(data)
    except ValueError:
        return
    assert Thinking.from_json(json.loads(json.dumps(thinking.to_json()))) == thinking


# -- the real SDK client against the mock server --------------------------------------


async def test_the_client_sends_thinking_and_keeps_the_block(serve: Serve) -> None:
    server = await serve(scenario({"lead": [THOUGHT]}))
    async with AnthropicModel(
        "claude-sonnet-4-5", api_key="k", base_url=server.url, reasoning=BUDGET
    ) as model:
        reply = await model.complete(ask())
    (request,) = [r for r in server.requests if r.path == "/v1/messages"]
    body = request.json()
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 8000}
    assert body["max_tokens"] == 32000
    assert request.headers["anthropic-beta"] == "interleaved-thinking-2025-05-14"
    thinking, text = reply.content
    assert thinking["type"] == "thinking"
    assert thinking["thinking"] == THOUGHT["thinking"]
    assert thinking["signature"]
    assert text == {"type": "text", "text": "4"}


async def test_without_reasoning_nothing_is_sent_and_no_thinking_comes(serve: Serve) -> None:
    server = await serve(scenario({"lead": [THOUGHT]}))
    async with AnthropicModel("claude-sonnet-4-5", api_key="k", base_url=server.url) as model:
        reply = await model.complete(ask())
    body = server.requests[-1].json()
    assert "thinking" not in body
    assert "anthropic-beta" not in server.requests[-1].headers
    assert reply.content == [{"type": "text", "text": "4"}]


async def test_effort_is_sent_with_its_beta(serve: Serve) -> None:
    server = await serve(scenario({"lead": [{"text": "ok"}]}))
    reasoning = Reasoning(effort="max")
    async with AnthropicModel(
        "claude-opus-4-6", api_key="k", base_url=server.url, reasoning=reasoning
    ) as model:
        await model.complete(ask())
    request = server.requests[-1]
    assert request.json()["output_config"] == {"effort": "max"}
    assert request.headers["anthropic-beta"] == "effort-2025-11-24"


# -- the scripted model ---------------------------------------------------------------


async def test_the_scripted_model_serves_thinking_only_when_asked() -> None:
    plain = ScriptedModel(scenario({"lead": [THOUGHT]}), model_name="claude-sonnet-4-5")
    assert [b["type"] for b in (await plain.complete(ask())).content] == ["text"]
    thinks = ScriptedModel(
        scenario({"lead": [THOUGHT]}), model_name="claude-sonnet-4-5", reasoning=BUDGET
    )
    assert [b["type"] for b in (await thinks.complete(ask())).content] == ["thinking", "text"]
    services = ScriptedModel(
        scenario({"evaluator": [THOUGHT]}), model_name="claude-sonnet-4-5", reasoning=BUDGET
    )
    reply = await services.complete(ask(role="evaluator", actor="evaluator"))
    assert [b["type"] for b in reply.content] == ["text"]


def test_a_thinking_block_sent_back_without_its_signature_is_refused() -> None:
    from coterie.models import RequestInvalid, validate_request

    thought = {"type": "thinking", "thinking": "hmm", "signature": "sig"}
    body: dict[str, Any] = {
        "model": "m",
        "max_tokens": 10,
        "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": [thought, {"type": "text", "text": "yo"}]},
            {"role": "user", "content": "and?"},
        ],
    }
    validate_request(body)
    del thought["signature"]
    with pytest.raises(RequestInvalid, match=r"messages\.1\.content\.0\.thinking\.signature"):
        validate_request(body)
