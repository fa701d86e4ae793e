"""The permission gate: the policy's pure decision, plus someone to ask.

:class:`PermissionGate` resolves the policy's "ask" with an :class:`Asker`:
the interactive human prompt, or the Auto Mode classifier in ``auto``. With
no asker (headless ``-p``) nobody can answer, so "ask" becomes a denial that
tells the model why. An asker that fails is a "no" (fail-closed); a
cancellation passes through.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

import attrs

from coterie.tools.permissions.policy import Decision, PermissionPolicy

if TYPE_CHECKING:
    from coterie.tools._base import Tool, ToolContext

__all__ = ["Asker", "PermissionGate"]


class Asker(Protocol):
    """Answers "may this call run?" for calls the policy could not decide alone."""

    async def ask(self, tool_name: str, input: dict[str, Any], reason: str) -> bool:
        """``True`` to allow the call, ``False`` to deny it."""
        ...


@attrs.define
class PermissionGate:
    """Authorizes tool calls: the policy first, then the asker for "ask"."""

    policy: PermissionPolicy
    asker: Asker | None = None

    async def authorize(self, tool: Tool, input: dict[str, Any], ctx: ToolContext) -> Decision:
        """An "allow" or "deny" decision for this call; never "ask"."""
        if ctx.read_denied is None:
            # Glob and Grep must leave out what Read deny rules cover.
            ctx.read_denied = self.policy.read_filter(ctx.workspace)
        decision = self.policy.check(tool, input, ctx)
        if decision.behavior != "ask":
            self._record(ctx, tool.name, decision)
            return decision
        if self.asker is None:
            decision = Decision(
                "deny",
                f"{decision.reason} This run is non-interactive (headless), so nobody can"
                " approve it. Do not retry the same call; find another way that needs no"
                " approval, or finish and report what you could not do and why.",
                decision.rule,
            )
            self._record(ctx, tool.name, decision)
            return decision
        try:
            approved = await self.asker.ask(tool.name, input, decision.reason)
        except Exception as exc:
            # Fail closed: an asker that breaks has not said yes.
            decision = Decision(
                "deny",
                f"{decision.reason} Approval could not be obtained"
                f" ({type(exc).__name__}: {exc}), so the call is denied.",
                decision.rule,
            )
        else:
            if approved:
                decision = Decision("allow", "Approved when asked.", decision.rule)
            else:
                decision = Decision(
                    "deny",
                    "The user declined this call when asked. Do not retry it as it is;"
                    " adjust your approach or ask what they would prefer.",
                    decision.rule,
                )
        self._record(ctx, tool.name, decision, asked=True)
        return decision

    def _record(self, ctx: ToolContext, tool: str, decision: Decision, asked: bool = False) -> None:
        if ctx.events is not None and decision.behavior == "deny":
            ctx.events.emit(
                "permission.denied",
                agent=ctx.agent,
                tool=tool,
                reason=decision.reason,
                rule=decision.rule,
                asked=asked,
            )
