"""Scripted models for the context tests."""

from __future__ import annotations

from typing import Any

from coterie.models import (
    ModelReply,
    ModelRequest,
    RetrySink,
    ScriptedModel,
    TextSink,
    parse_scenario,
)


def scripted(tracks: dict[str, list[dict[str, Any]]], **kwargs: Any) -> ScriptedModel:
    """A strict scripted model (requests validated as the API would) over *tracks*."""
    scenario = parse_scenario({"tracks": tracks}, source="test.json")
    return ScriptedModel(scenario, strict=True, fsync=False, **kwargs)


class Recording:
    """Wraps a model and keeps every request it was sent."""

    def __init__(self, model: ScriptedModel) -> None:
        self.model = model
        self.name = model.name
        self.requests: list[ModelRequest] = []

    async def complete(
        self,
        request: ModelRequest,
        *,
        on_text: TextSink | None = None,
        on_retry: RetrySink | None = None,
    ) -> ModelReply:
        self.requests.append(request)
        return await self.model.complete(request, on_text=on_text, on_retry=on_retry)
