"""Claude Code's model aliases (``--model opus``), mapped to current model ids.

The one table of them: ``--model``, ``ANTHROPIC_MODEL``, the settings'
``model`` and a custom subagent's ``model`` all go through
:func:`resolve_model` before a request is sent or a price looked up. A name
that is no alias is sent as it is (a full id, a Bedrock or Vertex id).
"""

from __future__ import annotations

from typing import Final

from coterie.models._base import DEFAULT_MODEL

__all__ = ["MODEL_ALIASES", "resolve_model"]

#: Alias -> model id, as Claude Code's ``--model`` takes them.
MODEL_ALIASES: Final[dict[str, str]] = {
    "default": DEFAULT_MODEL,
    "sonnet": "claude-sonnet-5-5",
    "opus": "claude-opus-5-5",
    "haiku": "claude-haiku-5-5",
    "sonnet[1m]": "claude-sonnet-5-5[1m]",
    "opus[1m]": "claude-opus-5-5[1m]",
}


def resolve_model(name: str) -> str:
    """The model id *name* stands for: an alias's id, any other name unchanged."""
    return MODEL_ALIASES.get(name.strip().lower(), name)
