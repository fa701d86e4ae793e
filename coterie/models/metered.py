"""The one place a run's spend is counted: a model wrapped with the run's ledger.

Every model call of a run (its agents' and its services') goes through one
:class:`MeteredModel`, which records the reply's usage and cost under the
calling actor in one :class:`~coterie.models.UsageLedger`. Budgets read that
ledger and nothing else, so no spend is counted twice or reconciled.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

from coterie.models.pricing import UsageLedger

if TYPE_CHECKING:
    from coterie.models._base import Model, ModelReply, ModelRequest, RetrySink, TextSink

__all__ = ["MeteredModel"]


@attrs.define
class MeteredModel:
    """*inner*, with every successful call recorded in *ledger* under ``request.actor``."""

    inner: Model
    ledger: UsageLedger = attrs.field(factory=UsageLedger)

    @classmethod
    def of(cls, model: Model) -> MeteredModel:
        """*model* if it is metered already, else *model* with a ledger of its own."""
        return model if isinstance(model, MeteredModel) else cls(model)

    @property
    def name(self) -> str:
        """The wrapped model's name."""
        return self.inner.name

    async def complete(
        self,
        request: ModelRequest,
        *,
        on_text: TextSink | None = None,
        on_retry: RetrySink | None = None,
    ) -> ModelReply:
        reply = await self.inner.complete(request, on_text=on_text, on_retry=on_retry)
        self.ledger.record(request.actor, reply.model, reply.usage)
        return reply
