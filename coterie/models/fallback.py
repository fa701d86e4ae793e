"""``--fallback-model``: a model that goes on with another when it is overloaded.

Claude Code's ``--fallback-model MODEL``: when a call fails because the
model is overloaded (HTTP 529 or an ``overloaded_error``, after the client's
own retries), the call is made again with *MODEL*, and so is every later
call of the run (a model that has just failed all its retries is not tried
again on each turn). What happened is told to the caller's ``on_retry``
sink as a :class:`~coterie.models.Retrying` whose ``fallback`` names the
model now used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

from coterie.models._base import ModelAPIError, Retrying
from coterie.models.aliases import resolve_model

if TYPE_CHECKING:
    from coterie.models._base import Model, ModelReply, ModelRequest, RetrySink, TextSink

__all__ = ["FallbackModel", "is_overloaded"]


def is_overloaded(error: ModelAPIError) -> bool:
    """Whether *error* says the model is overloaded (529 ``overloaded_error``)."""
    return error.status == 529 or error.type == "overloaded_error"


@attrs.define
class FallbackModel:
    """*inner*, whose overloaded calls go on with the model *fallback* (an alias
    or a name); only calls for *inner*'s own model (not a custom subagent's)."""

    inner: Model
    fallback: str = attrs.field(converter=resolve_model)
    #: Whether the run has switched to the fallback (it stays so).
    switched: bool = False

    @property
    def name(self) -> str:
        return self.inner.name

    async def complete(
        self,
        request: ModelRequest,
        *,
        on_text: TextSink | None = None,
        on_retry: RetrySink | None = None,
    ) -> ModelReply:
        mine = request.model is None or resolve_model(request.model) == self.inner.name
        if not mine:
            return await self.inner.complete(request, on_text=on_text, on_retry=on_retry)
        if not self.switched:
            try:
                return await self.inner.complete(request, on_text=on_text, on_retry=on_retry)
            except ModelAPIError as exc:
                if not is_overloaded(exc) or self.fallback == self.inner.name:
                    raise
                self.switched = True
                if on_retry is not None:
                    on_retry(Retrying(1, 1, 0.0, str(exc), fallback=self.fallback))
        request = attrs.evolve(request, model=self.fallback)
        return await self.inner.complete(request, on_text=on_text, on_retry=on_retry)
