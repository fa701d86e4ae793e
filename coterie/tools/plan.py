"""EnterPlanMode and ExitPlanMode: the model asks to plan first, then to carry a plan out.

Both are questions to the person (:attr:`~coterie.tools.capabilities.Capabilities.asks_person`),
asked by the permission gate as Claude Code asks them. EnterPlanMode: the
person agrees to plan mode (read-only until a plan is approved) or not.
ExitPlanMode presents the plan (``plan``, markdown; Claude Code 2.1.332's
schema declares only ``allowedPrompts`` and takes other keys, and the plan
is what models trained on it send): the person approves it and picks the
mode the run goes on in (``acceptEdits`` or ``default``), or keeps planning
and says what to change, which the model reads as the refusal. The answer
sets the mode (:attr:`coterie.tools.permissions.Answer.mode`); these tools
only tell the model what was decided.

A teammate planning under plan approval does not ask the person: its plan
goes to the team's lead, through the team's plan approval (the teammate's
turn ends with the plan, the lead answers with ApprovePlan; docs/teams.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from coterie.tools._base import ToolResult
from coterie.tools.capabilities import Capabilities, Effect

if TYPE_CHECKING:
    from coterie.tools._base import ToolContext

__all__ = ["EnterPlanModeTool", "ExitPlanModeTool", "plan_of"]

_ENTER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {},
    "additionalProperties": False,
}

_EXIT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "allowedPrompts": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "tool": {"type": "string", "description": "The tool, e.g. Bash"},
                    "prompt": {"type": "string", "description": "What it would do"},
                },
                "required": ["tool", "prompt"],
                "additionalProperties": False,
            },
            "description": "Actions the plan needs, shown to the user with it",
        },
    },
    # ``plan`` (the plan's markdown) and keys of later versions are taken as well.
    "additionalProperties": True,
}


def plan_of(input: dict[str, Any]) -> str:
    """The plan an ExitPlanMode call presents (empty if it gives none)."""
    plan = input.get("plan")
    return plan.strip() if isinstance(plan, str) else ""


class EnterPlanModeTool:
    """Asks the person to switch the run to plan mode."""

    name = "EnterPlanMode"
    description = (
        "Ask the user to switch to plan mode before a non-trivial change: several files, an"
        " unclear approach, or a choice between designs. In plan mode only read-only tools"
        " run; you explore, then present a plan with ExitPlanMode, and the user approves it"
        " before anything changes. Not for simple, clear tasks or pure research."
    )
    input_schema = _ENTER_SCHEMA
    # Run state: it changes only the run's mode, and only if the person agrees.
    capabilities = Capabilities(Effect.RUN_STATE, deferred=True, asks_person=True)

    async def run(self, input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Tell the model plan mode is on (the person's yes switched it)."""
        return ToolResult(
            "Plan mode is on: the user agreed. Explore with read-only tools (Read, Glob, Grep,"
            " read-only commands) and work out how to make the change; ask with"
            " AskUserQuestion what only the user can settle. Change nothing yet. When the"
            " plan is ready, present it with ExitPlanMode (the plan in markdown in `plan`)."
        )


class ExitPlanModeTool:
    """Presents the plan: the person approves it (leaving plan mode) or keeps planning."""

    name = "ExitPlanMode"
    description = (
        "In plan mode, when your plan is ready: present it to the user for approval, as"
        " markdown in `plan` (what you will change, where, and how you will check it). The"
        " user approves it, and the run leaves plan mode so you can carry it out, or answers"
        " with what to change and you keep planning. Use it only to get a plan approved,"
        " not to ask questions (AskUserQuestion does that)."
    )
    input_schema = _EXIT_SCHEMA
    # Run state; a teammate's plan goes to its lead, anyone else's to the person.
    capabilities = Capabilities(
        Effect.RUN_STATE,
        deferred=True,
        asks_person=True,
        teammates_ask_lead=True,
        only_in_mode="plan",
    )

    async def run(self, input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """What the model does next: carry the approved plan out, or (a teammate)
        end its turn with the plan, which goes to the lead."""
        plan = plan_of(input)
        team = ctx.team
        if team is not None and not team.is_lead:
            return ToolResult(
                f"Your plan goes to the lead ({team.lead}) for approval. End your turn now"
                " with the plan itself as your final answer (it is what the lead reads);"
                " carry it out only once the lead approves it."
            )
        shown = f"\n\nThe approved plan:\n{plan}" if plan else ""
        return ToolResult(
            "The user approved your plan and the run has left plan mode. Carry the plan out"
            f" now, keeping your todo list up to date.{shown}"
        )
