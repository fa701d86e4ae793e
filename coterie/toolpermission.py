"""``can_use_tool`` for programs embedding coterie: the gate's "ask a person" step
as a typed Python callback, the Agent SDK's at the library's level.

``open_agent(..., can_use_tool=decide)`` with ``async def decide(tool_name,
input, context) -> Allow | Deny``: the callback is asked what a person would
be asked (after the deny rules, the sandbox and the protected paths have had
their say), for every agent of the run, with the agent, the ``tool_use`` id,
the reason it asks and the rule "don't ask again" would add in *context*.
``Allow(updated_input=...)`` runs that input instead, judged again by the
deny rules and the tool's schema; ``Allow(grant=rule)`` allows such calls
for the rest of the run; ``Deny(message)`` is what the model reads.
Fail-closed: a callback that raises or returns anything else denies.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs

from coterie.tools.permissions import Answer
from coterie.tools.permissions.answering import approval, mode_after, person_tools

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from coterie.tools.permissions import Suggestion

__all__ = ["Allow", "CallbackAsker", "Deny", "PermissionContext"]


@attrs.frozen
class PermissionContext:
    """What the gate knows of the question."""

    #: The agent whose call it is (``lead``, a teammate's name, a subagent's).
    agent_id: str
    #: Why the policy asks, in words.
    reason: str
    #: The ``tool_use`` block's id (None where the call has none).
    tool_use_id: str | None = None
    #: The allow rule a "don't ask again" would add (``Bash(npm test:*)``), if any.
    suggestion: str | None = None


@attrs.frozen
class Allow:
    """Run the call (with *updated_input* instead of the model's, when given)."""

    updated_input: dict[str, Any] | None = None
    #: An allow rule in force for the rest of the run (``context.suggestion``).
    grant: str | None = None


@attrs.frozen
class Deny:
    """Do not run the call; the model reads *message*."""

    message: str = "Denied."


@attrs.frozen
class CallbackAsker:
    """An asker (:class:`~coterie.tools.permissions.Asker`) that asks *decide*."""

    decide: Callable[[str, dict[str, Any], PermissionContext], Awaitable[Allow | Deny]]

    async def ask(
        self,
        tool_name: str,
        input: dict[str, Any],
        reason: str,
        *,
        agent: str = "",
        suggestion: Suggestion | None = None,
        tool_use_id: str | None = None,
    ) -> Answer:
        context = PermissionContext(
            agent_id=agent or "lead",
            reason=reason,
            tool_use_id=tool_use_id,
            suggestion=None if suggestion is None else suggestion.rule,
        )
        verdict = await self.decide(tool_name, input, context)
        if isinstance(verdict, Allow) and tool_name in person_tools():
            # A question only a person answers: its answers are the updated input,
            # and a yes to a plan tool sets the mode (ExitPlanMode: default).
            return approval("Answered by can_use_tool.", mode=mode_after(tool_name, None),
                            updated_input=verdict.updated_input)  # fmt: skip
        if isinstance(verdict, Allow):
            return Answer(True, rule="can_use_tool", grant=verdict.grant,
                          updated_input=verdict.updated_input)  # fmt: skip
        if isinstance(verdict, Deny):
            return Answer(False, reason=f"Denied when asked: {verdict.message}",
                          rule="can_use_tool")  # fmt: skip
        raise TypeError(f"can_use_tool answered {verdict!r}, not Allow or Deny")
