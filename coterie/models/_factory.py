"""Choosing a model client from the command line and the environment."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from coterie.models._base import DEFAULT_MODEL, ModelError
from coterie.models.aliases import resolve_model
from coterie.models.thinking import Reasoning

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

    from coterie.models._base import Model

NO_MODEL_MESSAGE = (
    "no model to talk to: set ANTHROPIC_API_KEY, point ANTHROPIC_BASE_URL at a "
    "compatible server, or use --scenario / coterie demo"
)


#: Seconds a reply stream may stay silent before it is cut and retried.
IDLE_ENV = "COTERIE_STREAM_IDLE_TIMEOUT"
#: How many times a failed call is tried again (default 8).
RETRIES_ENV = "COTERIE_MAX_RETRIES"


def model_from_env(
    model_name: str | None = None,
    scenario_path: str | Path | None = None,
    state_path: Path | None = None,
    env: Mapping[str, str] | None = None,
    *,
    thinking: Mapping[str, Any] | None = None,
    effort: str | None = None,
    betas: tuple[str, ...] = (),
) -> Model:
    """The model a run should use.

    With a scenario: a :class:`~coterie.models.ScriptedModel` replaying it
    (reporting *model_name*, default ``scripted``, so costs follow that
    model's prices), its cursors kept in *state_path*. Otherwise, when
    ``ANTHROPIC_API_KEY``, ``ANTHROPIC_AUTH_TOKEN`` or ``ANTHROPIC_BASE_URL``
    is set: an :class:`~coterie.models.AnthropicModel` for *model_name*, else
    ``ANTHROPIC_MODEL``, else :data:`DEFAULT_MODEL` (a reply stream silent for
    ``COTERIE_STREAM_IDLE_TIMEOUT`` seconds, default 90, is cut and retried; a failed
    call is tried ``COTERIE_MAX_RETRIES`` more times, default 8). Otherwise
    :class:`ModelError` saying what to set. *env* (the settings' ``env``) is
    read over the process environment.

    *thinking* (a run's ``thinking`` option, the Agent SDK's ``ThinkingConfig``
    shape), ``MAX_THINKING_TOKENS`` and *effort* make the agents' calls think
    (:mod:`coterie.models.thinking`); a ``MAX_THINKING_TOKENS`` that is no whole
    number is a :class:`ModelError`. *betas* go with every call as ``anthropic-beta``.
    """
    environ = {**os.environ, **(env or {})}
    try:
        reasoning = Reasoning.from_run(thinking, effort, environ)
    except ValueError as exc:
        raise ModelError(str(exc)) from None
    if scenario_path is not None:
        from coterie.models.scenario import load_scenario
        from coterie.models.scripted import ScriptedModel

        return ScriptedModel(
            load_scenario(scenario_path),
            state_path=state_path,
            model_name=resolve_model(model_name) if model_name else "scripted",
            reasoning=reasoning,
        )
    if any(
        environ.get(var)
        for var in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL")
    ):
        # Imported here: only a run that calls the API needs the client.
        from coterie.models.anthropic_model import (
            CLIENT_ENV,
            STREAM_IDLE_TIMEOUT,
            AnthropicModel,
        )

        idle = environ.get(IDLE_ENV) or str(STREAM_IDLE_TIMEOUT)
        try:
            seconds = float(idle)
        except ValueError:
            seconds = -1.0
        if not seconds > 0:
            raise ModelError(f"{IDLE_ENV} must be a positive number of seconds, got {idle!r}")
        retries = environ.get(RETRIES_ENV) or "8"
        if not retries.isdigit():
            raise ModelError(f"{RETRIES_ENV} must be a whole number, got {retries!r}")
        return AnthropicModel(
            resolve_model(model_name or environ.get("ANTHROPIC_MODEL") or DEFAULT_MODEL),
            api_key=environ.get("ANTHROPIC_API_KEY") or None,
            auth_token=environ.get("ANTHROPIC_AUTH_TOKEN") or None,
            base_url=environ.get("ANTHROPIC_BASE_URL") or None,
            client_kind=environ.get(CLIENT_ENV) or None,
            betas=betas,
            stream_idle_timeout=seconds,
            max_retries=int(retries),
            reasoning=reasoning,
        )
    raise ModelError(NO_MODEL_MESSAGE)
