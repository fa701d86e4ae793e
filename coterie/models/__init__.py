"""Model clients (docs/engine.md): the real Anthropic client, the scripted model, and
the mock Messages-API server.

This package owns talking to models and replaying scenarios. It knows nothing
of actors, tools or permissions; it must not import from ``coterie.agent``,
``coterie.tools`` or ``coterie.actors``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from coterie.models._base import (
    DEFAULT_MODEL,
    ROLES,
    Model,
    ModelAPIError,
    ModelError,
    ModelReply,
    ModelRequest,
    PromptTooLong,
    Retrying,
    RetrySink,
    ScenarioError,
    ScriptedCrash,
    StreamSink,
    TextSink,
    Usage,
)
from coterie.models._factory import model_from_env
from coterie.models._validate import RequestInvalid, validate_request
from coterie.models.aliases import MODEL_ALIASES, resolve_model
from coterie.models.fallback import FallbackModel, is_overloaded
from coterie.models.latency import Latency
from coterie.models.metered import MeteredModel
from coterie.models.mock_server import MockServer, RecordedRequest, serve_scenario
from coterie.models.pricing import (
    DEFAULT_MODEL_PRICE,
    ModelPrice,
    UsageLedger,
    cost_usd,
    is_known_model,
    price_for,
)
from coterie.models.scenario import (
    Scenario,
    ToolUse,
    Turn,
    TurnError,
    load_scenario,
    parse_scenario,
)
from coterie.models.scripted import ScriptedModel

if TYPE_CHECKING:
    from coterie.models.anthropic_model import AnthropicModel


def __getattr__(name: str) -> object:
    # The anthropic SDK takes about a second to import; only a real API run
    # (or a test of one) should pay for it.
    if name == "AnthropicModel":
        from coterie.models.anthropic_model import AnthropicModel

        return AnthropicModel
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "DEFAULT_MODEL",
    "DEFAULT_MODEL_PRICE",
    "MODEL_ALIASES",
    "ROLES",
    "AnthropicModel",
    "FallbackModel",
    "MeteredModel",
    "is_overloaded",
    "MockServer",
    "Model",
    "ModelAPIError",
    "ModelError",
    "ModelPrice",
    "ModelReply",
    "ModelRequest",
    "Latency",
    "PromptTooLong",
    "RecordedRequest",
    "RequestInvalid",
    "RetrySink",
    "Retrying",
    "Scenario",
    "ScenarioError",
    "ScriptedCrash",
    "ScriptedModel",
    "StreamSink",
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
    "resolve_model",
    "price_for",
    "validate_request",
    "serve_scenario",
]
