"""Side calls: a tool's question to the run's model, outside the agent's conversation.

:class:`SideCalls` is what the runtime gives a tool context as
``ToolContext.ask_model``: it turns a :class:`~coterie.tools.SideQuestion`
into one model call with no tools, made as actor ``<agent>-<purpose>`` in
role ``<purpose>`` (a scenario's ``webfetch`` track serves WebFetch's), and
returns the reply's text. Its spend goes to the run's one ledger (the model
given is the run's metered one), so budgets count it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

import attrs

from coterie.models import ModelRequest

if TYPE_CHECKING:
    from coterie.models import Model

__all__ = ["SideCalls"]


class SideQuestion(Protocol):
    """What :class:`~coterie.tools.SideQuestion` holds (read here, not imported)."""

    @property
    def purpose(self) -> str: ...
    @property
    def system(self) -> str: ...
    @property
    def prompt(self) -> str: ...
    @property
    def max_tokens(self) -> int: ...


@attrs.frozen
class SideCalls:
    """Asks *model* the side questions of the agent named *agent*."""

    model: Model
    agent: str

    async def __call__(self, question: SideQuestion) -> str:
        """The model's answer to *question* (a ``ModelError`` if the call fails)."""
        request = ModelRequest(
            system=question.system,
            messages=[{"role": "user", "content": [{"type": "text", "text": question.prompt}]}],
            max_tokens=question.max_tokens,
            actor=f"{self.agent}-{question.purpose}",
            role=question.purpose,
        )
        reply = await self.model.complete(request)
        return reply.text
