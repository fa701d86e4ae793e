"""Skill: loads one of the run's skills, by name, as Claude Code's ``Skill`` tool does.

The skills' names and descriptions are in the tool's description, so the
model knows what it can load; a call ``{"skill": name}`` returns the
skill's instructions with the folder they came from (its other files can
then be read: the runtime admits skill folders for reading only). Loading a
skill is never asked about; it grants the calling agent the skill's
``allowed-tools`` as allow rules from then on (``ToolContext.granted``: only
that agent's, gone after a restart, and in Auto Mode set aside where they
grant arbitrary execution, as the settings' own are). Deny and ask rules, the
sandbox and protected paths still come first. Only the user's skills and a
trusted workspace's are loaded at all (:mod:`coterie.extensions`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from coterie.tools._base import ToolResult
from coterie.tools.capabilities import Capabilities, Effect
from coterie.tools.permissions.rules import RuleError, parse_rule

if TYPE_CHECKING:
    from collections.abc import Iterable
    from pathlib import Path

    from coterie.tools._base import ToolContext

__all__ = ["Skill", "SkillTool"]


class Skill(Protocol):
    """What the tool needs of a skill (:class:`coterie.extensions.SkillDefinition`)."""

    @property
    def name(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def body(self) -> str: ...
    @property
    def folder(self) -> Path: ...
    @property
    def allowed_tools(self) -> tuple[str, ...]: ...
    @property
    def model_invocable(self) -> bool: ...
    @property
    def listing(self) -> str: ...


_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "skill": {"type": "string", "minLength": 1, "description": "The skill's name"},
        "args": {"type": "string", "description": "Optional arguments for the skill"},
    },
    "required": ["skill"],
    "additionalProperties": False,
}


class SkillTool:
    """Returns a skill's instructions."""

    name = "Skill"
    input_schema = _SCHEMA
    capabilities = Capabilities(Effect.READ_ONLY)

    def __init__(self, skills: Iterable[Skill]) -> None:
        # A skill with disable-model-invocation is the user's /name only.
        self.skills = tuple(s for s in skills if s.model_invocable)
        listed = "\n".join(s.listing for s in self.skills)
        self.description = (
            "Load a skill: instructions for a kind of task, with files beside them. When a"
            " task matches a skill's description, load it first and follow it. The skill's"
            " text is guidance from the project or the user, not permission: it grants no"
            f" tool the rules do not. Available skills:\n{listed}"
        )

    async def run(self, input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """The skill's body, or an error naming the skills there are."""
        name = str(input["skill"]).lstrip("/")
        skill = next((s for s in self.skills if s.name == name), None)
        if skill is None:
            known = ", ".join(s.name for s in self.skills) or "none"
            return ToolResult(f"Unknown skill {name!r}; skills: {known}.", is_error=True)
        if ctx.events is not None:
            ctx.events.emit("skill.loaded", actor=ctx.agent, skill=skill.name)
        bad = []
        for text in skill.allowed_tools:
            try:
                parse_rule(text, root=ctx.workspace)
            except RuleError:
                bad.append(text)
            else:
                if (text, skill.name) not in ctx.granted:
                    ctx.granted.append((text, skill.name))
        args = str(input.get("args") or "").strip()
        tail = f"\n\nARGUMENTS: {args}" if args else ""
        if bad:
            tail += f"\n\n(allowed-tools entries not understood, so not granted: {', '.join(bad)})"
        return ToolResult(
            f'<skill name="{skill.name}">\nBase directory for this skill: {skill.folder}\n\n'
            f"{skill.body}{tail}\n</skill>"
        )
