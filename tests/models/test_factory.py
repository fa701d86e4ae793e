"""model_from_env: scripted with a scenario, Anthropic with credentials, else a clear error."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from coterie.models import DEFAULT_MODEL, ModelError, ScriptedModel, model_from_env
from tests.models.conftest import SCENARIOS

if TYPE_CHECKING:
    from pathlib import Path


def test_a_scenario_gives_the_scripted_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    model = model_from_env(None, SCENARIOS / "pursue-goal.json", tmp_path / "state.json")
    assert isinstance(model, ScriptedModel)
    assert model.name == "scripted"


def test_a_scenario_with_a_model_name_reports_that_name() -> None:
    model = model_from_env("claude-opus-5", SCENARIOS / "pursue-goal.json", None)
    assert model.name == "claude-opus-5"


@pytest.mark.parametrize("var", ["ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"])
async def test_credentials_or_an_endpoint_give_the_anthropic_model(
    monkeypatch: pytest.MonkeyPatch, var: str
) -> None:
    from coterie.models.anthropic_model import AnthropicModel

    monkeypatch.setenv(var, "http://127.0.0.1:9" if var.endswith("URL") else "sk-test")
    model = model_from_env(None, None, None)
    assert isinstance(model, AnthropicModel)
    assert model.name == DEFAULT_MODEL
    await model.aclose()


async def test_model_name_then_env_then_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    monkeypatch.setenv("ANTHROPIC_MODEL", "claude-haiku-4-5")
    from coterie.models.anthropic_model import AnthropicModel

    from_env = model_from_env(None, None, None)
    explicit = model_from_env("claude-opus-5", None, None)
    assert (from_env.name, explicit.name) == ("claude-haiku-4-5", "claude-opus-5")
    for model in (from_env, explicit):
        assert isinstance(model, AnthropicModel)
        await model.aclose()


def test_nothing_configured_says_what_to_do() -> None:
    with pytest.raises(ModelError) as info:
        model_from_env(None, None, None)
    message = str(info.value)
    for hint in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "--scenario", "coterie demo"):
        assert hint in message
