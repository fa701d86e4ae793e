"""The models a host may choose from, as the control protocol's ``initialize`` lists them.

Claude Code answers a host's ``initialize`` with ``models``: one entry per name
``--model`` (and ``set_model``) takes, with what the model can do, so that a
host (Zed's ACP adapter, an IDE) can offer a model picker with the right
effort levels. coterie's entries come from its one alias table
(:data:`coterie.models.aliases.MODEL_ALIASES`) and its one table of model
families (:mod:`coterie.models.thinking`); the descriptions are its own.
"""

from __future__ import annotations

from typing import Any

from coterie.models.aliases import MODEL_ALIASES
from coterie.models.thinking import EFFORT_LEVELS, takes_effort, thinks_adaptively

__all__ = ["model_offers"]


def model_offers() -> list[dict[str, Any]]:
    """Each alias as Claude Code's ``initialize`` lists a model (``value``,
    ``resolvedModel``, ``displayName``, ``description``, what it supports)."""
    offers = []
    for alias, model in MODEL_ALIASES.items():
        effort = takes_effort(model)
        offers.append(
            {
                "value": alias,
                "resolvedModel": model,
                "displayName": "Default" if alias == "default" else alias,
                "description": f"{model} (coterie's {alias!r})",
                "supportsEffort": effort,
                "supportedEffortLevels": list(EFFORT_LEVELS) if effort else [],
                "supportsAdaptiveThinking": thinks_adaptively(model),
                "supportsFastMode": False,
                "supportsAutoMode": True,
            }
        )
    return offers
