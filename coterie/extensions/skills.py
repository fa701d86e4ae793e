"""Skills: ``.claude/skills/<folder>/SKILL.md`` and ``~/.claude/skills/<folder>/SKILL.md``.

Read as leniently as Claude Code 2.1 reads them (measured against it):

- A skill is named after its **folder**, whatever its frontmatter's ``name``
  says (``name: Hook Development`` in ``hook-dev/`` is ``hook-dev``). A
  ``name`` without white space that differs from the folder is shown beside
  it to the model (``folder-a (other-name)``); one with spaces is not.
- ``description`` (a string) is what the model is told, ``when_to_use``
  appended after `` - ``; without a description the body's first non-empty
  line stands in (a heading's ``#`` marks dropped). Only a skill that has a
  description of its own is listed in ``system/init``'s ``skills``.
- ``disable-model-invocation: true`` keeps a skill out of the model's list
  (it is still ``/name``); ``user-invocable: false`` keeps it out of the
  ``/name`` commands (the model may still load it).
- Keys Claude Code does not read, nested maps (``metadata:``) among them,
  are ignored. Frontmatter that is not YAML is ignored whole: the skill
  loads from its body (its ``allowed-tools``, if any, are then not granted).

``allowed-tools`` lists tools that run without asking while the skill is in
use (only a user skill's, or a trusted workspace's). The body is what the
``Skill`` tool returns and what ``/name args`` sends (:mod:`~coterie.extensions.commands`);
files beside ``SKILL.md`` may be read.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import attrs

from coterie.extensions.agents import AgentsError, Scope
from coterie.extensions.frontmatter import FrontmatterError, Value, as_list, parse_frontmatter

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["SkillDefinition", "read_skill", "skill_from_folder"]

#: A folder name that can be a ``/name`` command and a Skill tool argument.
_FOLDER = re.compile(r"^[^\s:/\\]+$")
_TRUE = ("true", "yes", "on")


@attrs.frozen
class SkillDefinition:
    """One skill, as its folder and ``SKILL.md`` declare it."""

    name: str
    #: What the model is told of it (``description``, `` - when_to_use``).
    description: str
    body: str
    #: The skill's folder (its other files may be read).
    folder: Path
    #: Permission rules (``Bash(git diff:*)``) allowed while the skill is in use.
    allowed_tools: tuple[str, ...] = ()
    scope: Scope = "project"
    #: Its frontmatter ``name`` when it differs from :attr:`name` and has no space.
    display_name: str | None = None
    #: Whether the frontmatter gave a description (else the body's first line did).
    described: bool = True
    #: False: ``disable-model-invocation: true`` (the model is not told of it).
    model_invocable: bool = True
    #: False: ``user-invocable: false`` (not a ``/name`` command).
    user_invocable: bool = True
    argument_hint: str | None = None

    @property
    def listing(self) -> str:
        """Its line in the model's list of skills: ``- name (display): description``."""
        shown = f"{self.name} ({self.display_name})" if self.display_name else self.name
        return f"- {shown}: {self.description}"


def read_skill(text: str) -> tuple[dict[str, Value], str]:
    """The frontmatter and body of a ``SKILL.md``, as Claude Code reads them: nested
    maps left out, and frontmatter that cannot be read ignored whole (no entries,
    the body after its closing ``---``)."""
    try:
        return parse_frontmatter(text, maps="skip")
    except FrontmatterError:
        lines = text.splitlines(keepends=True)
        closing = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), None)
        return {}, "".join(lines[closing + 1 :]) if closing is not None else text


def skill_from_folder(
    folder: Path, scope: Scope, text: str | None = None, *, name: str | None = None
) -> SkillDefinition:
    """The skill in *folder* (*text*: its ``SKILL.md``, if read already; an
    :class:`~coterie.extensions.AgentsError` naming the file), called *name* if
    given (a plugin's ``plugin:folder``), else after *folder*."""
    path = folder / "SKILL.md"
    if text is None:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise AgentsError(f"{path}: cannot be read ({exc})") from None
    meta, body = read_skill(text)
    if name is None:
        if not _FOLDER.match(folder.name):
            raise AgentsError(f"{path}: the folder name {folder.name!r} cannot name a skill")
        name = folder.name
    given = meta.get("description")
    described = isinstance(given, str) and bool(given.strip())
    description = given if isinstance(given, str) and described else _first_line(body)
    if not description:
        raise AgentsError(f"{path}: the skill has no description and no text")
    when = meta.get("when_to_use")
    if isinstance(when, str) and when.strip():
        description = f"{description} - {when}"
    shown = meta.get("name")
    base = name.rsplit(":", 1)[-1]
    display = shown if isinstance(shown, str) and _FOLDER.match(shown) and shown != base else None
    hint = meta.get("argument-hint")
    return SkillDefinition(
        name=name,
        description=" ".join(description.split()),
        body=body.strip(),
        folder=folder,
        allowed_tools=tuple(as_list(meta.get("allowed-tools")) or ()),
        scope=scope,
        display_name=display,
        described=described,
        model_invocable=not _flag(meta.get("disable-model-invocation"), default=False),
        user_invocable=_flag(meta.get("user-invocable"), default=True),
        argument_hint=hint if isinstance(hint, str) and hint.strip() else None,
    )


def _first_line(body: str) -> str:
    """The body's first non-empty line, a heading's ``#`` marks dropped."""
    for line in body.splitlines():
        if text := line.strip().lstrip("#").strip():
            return text
    return ""


def _flag(value: Value | None, *, default: bool) -> bool:
    if not isinstance(value, str):
        return default
    word = value.strip().lower()
    if word in _TRUE:
        return True
    return False if word in ("false", "no", "off") else default
