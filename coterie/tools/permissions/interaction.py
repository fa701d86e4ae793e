"""Tools whose every call is a question to a person: how the policy decides them.

A tool declaring ``asks_person`` (AskUserQuestion, EnterPlanMode,
ExitPlanMode: :attr:`~coterie.tools.capabilities.Capabilities.asks_person`) is asked
about in every mode, ``bypassPermissions`` and ``auto`` included, because
the person's answer is the call's content, not a permission: only a person
(or the run's host) may answer it, never a rule or the Auto Mode classifier.
``dontAsk`` asks nobody, so it denies; headless, the gate has nobody to ask
and denies with a reason the model reads. A tool declaring ``only_in_mode``
(ExitPlanMode: ``plan``) is refused without asking in any other mode (a
teammate planning under plan approval is in plan mode: its gate is capped).
A teammate's call of a tool whose ``teammates_ask_lead`` is set goes to the
team's lead instead (its plan) and is not asked about. Deny rules were
applied before.

Pure: reads the tool's declaration and the caller's team, nothing else.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from coterie.tools.permissions.decision import Decision

if TYPE_CHECKING:
    from coterie.tools._base import Tool, ToolContext
    from coterie.tools.permissions.modes import Mode

__all__ = ["PERSON_RULE", "asks_person", "person_decision"]

#: What decided a question only a person answers (the event log's ``rule``).
PERSON_RULE = "user-interaction"


def asks_person(tool: Tool) -> bool:
    """Whether every call of *tool* is a question to a person (its declaration)."""
    return tool.capabilities.asks_person


def person_decision(tool: Tool, ctx: ToolContext, mode: Mode) -> Decision | None:
    """The decision for a call of a tool that asks a person; None for any other tool."""

    caps = tool.capabilities
    if not asks_person(tool):
        return None
    only = caps.only_in_mode
    if only is not None and mode != only:
        return Decision(
            "deny",
            f"{tool.name} is for permission mode {only}, and the run is in {mode}: there is"
            " nothing to ask. Go on with the task.",
            PERSON_RULE,
        )
    team = ctx.team
    if team is not None and not team.is_lead and caps.teammates_ask_lead:
        return Decision("allow", f"A teammate's {tool.name} goes to the lead ({team.lead}).")
    reason = f"{tool.name} puts a question to the user, and only the user can answer it."
    if mode == "dontAsk":
        return Decision(
            "deny",
            f"{reason} Permission mode dontAsk asks nobody, so it cannot run: decide"
            " yourself and say what you assumed.",
            PERSON_RULE,
        )
    return Decision("ask", reason, PERSON_RULE, person_only=True)
