"""Helpers for the service-actor tests: a recording scripted model and a running tree."""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any

import attrs
import trio

from coterie.actors import ActorContext
from coterie.models import ModelReply, ModelRequest, ScriptedModel, parse_scenario
from coterie.supervisors import Supervisor

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from coterie.events import EventLog
    from coterie.mailbox import PostOffice
    from coterie.models import RetrySink, TextSink
    from coterie.supervisors import ChildSpec


@attrs.define
class RecordingModel:
    """A scripted model that keeps every request it was sent."""

    inner: ScriptedModel
    requests: list[ModelRequest] = attrs.field(factory=list)
    name: str = "scripted"

    @classmethod
    def of(cls, **tracks: list[dict[str, Any]]) -> RecordingModel:
        """A recording model over a scenario with these tracks."""
        return cls(ScriptedModel(parse_scenario({"name": "test", "tracks": tracks})))

    @property
    def cursors(self) -> dict[str, int]:
        """Turns consumed per track."""
        return self.inner.cursors

    async def complete(
        self,
        request: ModelRequest,
        *,
        on_text: TextSink | None = None,
        on_retry: RetrySink | None = None,
    ) -> ModelReply:
        self.requests.append(request)
        return await self.inner.complete(request, on_text=on_text, on_retry=on_retry)

    def request_text(self, index: int = -1) -> str:
        """All text of request *index*: its system prompt and every text block."""
        request = self.requests[index]
        parts = [request.system]
        for message in request.messages:
            for block in message["content"]:
                parts.append(block.get("text", ""))
        return "\n".join(parts)


def client(post: PostOffice, name: str = "lead", events: EventLog | None = None) -> ActorContext:
    """A context for a requester that is not itself supervised in the test."""
    return ActorContext(name=name, mailbox=post.open(name), post=post, events=events)


@contextlib.asynccontextmanager
async def services(*specs: ChildSpec, events: EventLog | None = None) -> AsyncIterator[Supervisor]:
    """Run *specs* under a ``services`` supervisor (one_for_one) for the block's duration."""
    sup = Supervisor("services", list(specs), events=events, max_restarts=5)
    async with trio.open_nursery() as nursery:
        await nursery.start(sup.run)
        try:
            yield sup
        finally:
            await sup.stop()
