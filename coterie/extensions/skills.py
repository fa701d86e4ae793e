"""Skills: ``.claude/skills/<name>/SKILL.md`` and ``~/.claude/skills/<name>/SKILL.md``.

A skill's frontmatter gives its ``name`` (default: its folder's name) and
``description`` (what the model is told, to decide when to use it), and may
list ``allowed-tools``: tools that run without asking while the skill is in
use (only a user skill's, or a trusted workspace's). The body is what the
``Skill`` tool returns; files beside ``SKILL.md`` may be read.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

from coterie.extensions.agents import NAME, AgentsError, Scope, read_definition
from coterie.extensions.frontmatter import as_list

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["SkillDefinition", "skill_from_folder"]


@attrs.frozen
class SkillDefinition:
    """One skill, as its ``SKILL.md`` declares it."""

    name: str
    description: str
    body: str
    #: The skill's folder (its other files may be read).
    folder: Path
    #: Permission rules (``Bash(git diff:*)``) allowed while the skill is in use.
    allowed_tools: tuple[str, ...] = ()
    scope: Scope = "project"


def skill_from_folder(
    folder: Path, scope: Scope, text: str | None = None, *, name: str | None = None
) -> SkillDefinition:
    """The skill in *folder* (*text*: its ``SKILL.md``, if read already; an
    :class:`~coterie.extensions.AgentsError` naming the file), called *name* if
    given (a plugin's skill is named after its folder, whatever its ``name``)."""
    path = folder / "SKILL.md"
    meta, body = read_definition(path, text)
    if name is None:
        name = _name(meta.get("name", folder.name), path)
    description = meta.get("description")
    if not isinstance(description, str) or not description.strip():
        paragraph = body.strip().split("\n\n", 1)[0].strip()
        if not paragraph:
            raise AgentsError(f"{path}: the skill has no description")
        description = paragraph
    allowed = as_list(meta.get("allowed-tools")) or []
    return SkillDefinition(
        name=name,
        description=" ".join(description.split()),
        body=body.strip(),
        folder=folder,
        allowed_tools=tuple(allowed),
        scope=scope,
    )


def _name(name: object, path: Path) -> str:
    if not isinstance(name, str) or not NAME.match(name):
        raise AgentsError(
            f"{path}: the skill name {name!r} must be lowercase letters, digits and hyphens"
        )
    return name
