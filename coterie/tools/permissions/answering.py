"""A person's answer to a question only a person answers (AskUserQuestion, the plan
tools), built once here for every asker (the terminal's, an SDK host's, a
library's ``can_use_tool``): its answers, and the permission mode it sets."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any, cast

from coterie.tools.permissions.gate import Answer
from coterie.tools.permissions.interaction import PERSON_RULE

if TYPE_CHECKING:
    from coterie.tools.permissions.modes import Mode

__all__ = ["approval", "mode_after", "person_tools", "refusal"]


def approval(
    reason: str, *, mode: Mode | None = None, updated_input: dict[str, Any] | None = None
) -> Answer:
    """A person's yes: *updated_input* carries their answers, and *mode* is the
    permission mode the run goes on in (ExitPlanMode, EnterPlanMode), which the
    gate sets."""
    return Answer(True, reason=reason, rule=PERSON_RULE, updated_input=updated_input, mode=mode)


def refusal(reason: str) -> Answer:
    """A person's no, with *reason* (written for the model) as the call's result."""
    return Answer(False, reason=reason, rule=PERSON_RULE)


@functools.cache
def person_tools() -> frozenset[str]:
    """The built-in tools whose every call is a question to a person (as declared)."""
    from coterie.tools.catalogue import builtin_tools  # the catalogue imports the gate
    from coterie.tools.permissions.interaction import asks_person

    return frozenset(t.name for t in builtin_tools(asks_person))


#: The modes a yes to a plan may leave plan mode for (as Claude Code's dialog offers).
_AFTER_PLAN = ("acceptEdits", "default")


def mode_after(tool_name: str, updates: Any) -> Mode | None:
    """The permission mode a yes to a plan tool sets, given the answer's permission
    *updates* (an Agent SDK host's ``updatedPermissions``): plan mode for
    EnterPlanMode; for ExitPlanMode the mode of a ``setMode`` update if a plan may
    leave for it, else ``default`` (as Claude Code); None for other tools."""
    if tool_name == "EnterPlanMode":
        return "plan"
    if tool_name != "ExitPlanMode":
        return None
    for update in updates if isinstance(updates, list) else ():
        if isinstance(update, dict) and update.get("type") == "setMode":
            mode = update.get("mode")
            if mode in _AFTER_PLAN:
                return cast("Mode", mode)
    return "default"
