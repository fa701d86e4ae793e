"""The public surface of coterie.models, and that importing it stays cheap."""

from __future__ import annotations

import subprocess
import sys

import coterie.models

PUBLIC = {
    "DEFAULT_MODEL",
    "DEFAULT_MODEL_PRICE",
    "ROLES",
    "AnthropicModel",
    "MeteredModel",
    "MockServer",
    "Model",
    "ModelAPIError",
    "ModelError",
    "ModelPrice",
    "ModelReply",
    "ModelRequest",
    "PromptTooLong",
    "RecordedRequest",
    "Scenario",
    "ScenarioError",
    "ScriptedCrash",
    "ScriptedModel",
    "TextSink",
    "ToolUse",
    "Turn",
    "TurnError",
    "Usage",
    "UsageLedger",
    "cost_usd",
    "is_known_model",
    "load_scenario",
    "model_from_env",
    "parse_scenario",
    "price_for",
    "serve_scenario",
}


def test_the_public_surface_is_what_we_promise() -> None:
    assert set(coterie.models.__all__) == PUBLIC


def test_every_exported_name_resolves() -> None:
    for name in coterie.models.__all__:
        assert getattr(coterie.models, name) is not None, name


def test_anthropic_model_is_exported_lazily() -> None:
    from coterie.models.anthropic_model import AnthropicModel

    assert coterie.models.AnthropicModel is AnthropicModel


def test_importing_the_package_does_not_import_the_sdk() -> None:
    """The SDK takes about a second to import; offline runs must not pay for it."""
    code = "import sys, coterie.models; print('anthropic' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
