"""Model clients (DESIGN §4): the real Anthropic client, the scripted model, and
the mock Messages-API server.

This package owns talking to models and replaying scenarios. It knows nothing
of actors, tools or permissions; it must not import from ``coterie.agent``,
``coterie.tools`` or ``coterie.actors``.
"""

from coterie.models._base import (
    ROLES,
    Model,
    ModelAPIError,
    ModelError,
    ModelReply,
    ModelRequest,
    PromptTooLong,
    ScenarioError,
    ScriptedCrash,
    TextSink,
    Usage,
)

__all__ = [
    "ROLES",
    "Model",
    "ModelAPIError",
    "ModelError",
    "ModelReply",
    "ModelRequest",
    "PromptTooLong",
    "ScenarioError",
    "ScriptedCrash",
    "TextSink",
    "Usage",
]
