"""Model clients (docs/engine.md): the real Anthropic client, the scripted model, and
the mock Messages-API server.

This package owns talking to models and replaying scenarios. It knows nothing
of actors, tools or permissions; it must not import from ``coterie.agent``,
``coterie.tools`` or ``coterie.actors``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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
    from coterie.models.anthropic_model import AnthropicModel
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


#: Where each public name is defined. Imported on first use (PEP 562), so that one
#: light module of the package can be imported by its full dotted path (the
#: command line's parser does) without loading the whole package, and only a
#: real API run (or a test of one) pays for the anthropic SDK (about a second).
_HOMES = {
    "AnthropicModel": "coterie.models.anthropic_model",
    "DEFAULT_MODEL": "coterie.models._base",
    "ROLES": "coterie.models._base",
    "Model": "coterie.models._base",
    "ModelAPIError": "coterie.models._base",
    "ModelError": "coterie.models._base",
    "ModelReply": "coterie.models._base",
    "ModelRequest": "coterie.models._base",
    "PromptTooLong": "coterie.models._base",
    "Retrying": "coterie.models._base",
    "RetrySink": "coterie.models._base",
    "ScenarioError": "coterie.models._base",
    "ScriptedCrash": "coterie.models._base",
    "StreamSink": "coterie.models._base",
    "TextSink": "coterie.models._base",
    "Usage": "coterie.models._base",
    "model_from_env": "coterie.models._factory",
    "RequestInvalid": "coterie.models._validate",
    "validate_request": "coterie.models._validate",
    "MODEL_ALIASES": "coterie.models.aliases",
    "resolve_model": "coterie.models.aliases",
    "FallbackModel": "coterie.models.fallback",
    "is_overloaded": "coterie.models.fallback",
    "Latency": "coterie.models.latency",
    "MeteredModel": "coterie.models.metered",
    "MockServer": "coterie.models.mock_server",
    "RecordedRequest": "coterie.models.mock_server",
    "serve_scenario": "coterie.models.mock_server",
    "DEFAULT_MODEL_PRICE": "coterie.models.pricing",
    "ModelPrice": "coterie.models.pricing",
    "UsageLedger": "coterie.models.pricing",
    "cost_usd": "coterie.models.pricing",
    "is_known_model": "coterie.models.pricing",
    "price_for": "coterie.models.pricing",
    "Scenario": "coterie.models.scenario",
    "ToolUse": "coterie.models.scenario",
    "Turn": "coterie.models.scenario",
    "TurnError": "coterie.models.scenario",
    "load_scenario": "coterie.models.scenario",
    "parse_scenario": "coterie.models.scenario",
    "ScriptedModel": "coterie.models.scripted",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, _, attribute = home.partition(":")
    value = getattr(importlib.import_module(module), attribute or name)
    globals()[name] = value  # once is enough
    return value
