"""Slash commands: ``.claude/commands/**/*.md`` and ``~/.claude/commands/**/*.md``, expanded.

A command is named after its file (``review.md`` is ``/review``); a
subfolder groups commands and shows in the description
(``frontend/component.md`` is ``/component``, "(project:frontend)"), and
``/frontend:component`` names it too. Frontmatter: ``description``,
``allowed-tools`` (permission rules allowed for the run it starts),
``model``, ``argument-hint``. The body is the prompt, with ``$ARGUMENTS``
replaced by everything after the name and ``$1``, ``$2``... by the
arguments one by one (shell-like quoting).

Not supported, and refused rather than passed on as text: ``!`command```
lines (Claude Code runs them before the prompt is sent, outside the
permission gate) and ``@file`` references; a command using them is a
:class:`CommandError`.
"""

from __future__ import annotations

import re
import shlex
from typing import TYPE_CHECKING

import attrs

from coterie.errors import CoterieError
from coterie.extensions.agents import Scope, read_definition
from coterie.extensions.frontmatter import as_list

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

__all__ = [
    "BUILTIN_COMMANDS",
    "CommandDefinition",
    "CommandError",
    "Expansion",
    "command_from_file",
    "expand",
]

#: coterie's own slash commands (the interactive session's); never a file's.
BUILTIN_COMMANDS = frozenset({"help", "clear", "compact", "exit", "quit", "cost", "status"})

_BANG = re.compile(r"!`[^`]*`")
_AT_FILE = re.compile(r"(?:^|\s)@[\w./~-]+")
_POSITIONAL = re.compile(r"\$(\d+)")


class CommandError(CoterieError, ValueError):
    """A ``/name`` prompt names no command, or its command cannot be expanded."""


@attrs.frozen
class CommandDefinition:
    """One slash command."""

    name: str
    body: str
    description: str = ""
    #: Permission rules allowed while the command's run works on it.
    allowed_tools: tuple[str, ...] = ()
    model: str | None = None
    argument_hint: str | None = None
    #: The subfolder it sits in ("" at the top), shown with its scope.
    namespace: str = ""
    scope: Scope = "project"
    source: str = ""
    #: The plugin it comes from ("" for the user's and the workspace's).
    plugin: str = ""

    @property
    def label(self) -> str:
        """``(project)``, ``(user:backend)``, ``(plugin:name)``: where it comes from."""
        where = f"plugin:{self.plugin}" if self.plugin else self.scope
        return f"({where}{':' + self.namespace if self.namespace else ''})"


@attrs.frozen
class Expansion:
    """A ``/name args`` prompt, expanded."""

    prompt: str
    command: CommandDefinition


def command_from_file(
    path: Path, root: Path, scope: Scope, text: str | None = None
) -> CommandDefinition:
    """The command in *path* (its *text*, if read already), below the commands folder *root*."""
    meta, body = read_definition(path, text)
    relative = path.relative_to(root)
    model = meta.get("model")
    description = meta.get("description")
    hint = meta.get("argument-hint")
    return CommandDefinition(
        name=path.stem,
        body=body.strip(),
        description=description if isinstance(description, str) else "",
        allowed_tools=tuple(as_list(meta.get("allowed-tools")) or ()),
        model=model if isinstance(model, str) and model not in ("", "inherit") else None,
        argument_hint=hint if isinstance(hint, str) else None,
        namespace=":".join(relative.parent.parts),
        scope=scope,
        source=str(path),
    )


def expand(prompt: str, commands: Mapping[str, CommandDefinition]) -> Expansion | None:
    """*prompt* expanded if it is ``/name args`` naming one of *commands*; None if it
    is not a slash command at all or names a built-in one; a :class:`CommandError`
    for an unknown name or a command this version cannot expand."""
    text = prompt.strip()
    match = re.match(r"^/([A-Za-z0-9_][\w:.-]*)(?:\s+(.*))?$", text, re.DOTALL)
    if match is None:
        return None
    name, arguments = match.group(1), (match.group(2) or "").strip()
    if name in BUILTIN_COMMANDS:
        return None
    command = commands.get(name)
    if command is None:
        known = ", ".join(f"/{n}" for n in sorted(commands)) or "none"
        raise CommandError(f"unknown command /{name} (commands here: {known})")
    if _BANG.search(command.body):
        raise CommandError(
            f"/{name} ({command.source}) runs shell lines (!`...`), which coterie does not"
            " support: they would run before the permission gate"
        )
    if _AT_FILE.search(command.body):
        raise CommandError(
            f"/{name} ({command.source}) uses @file references, which coterie does not support"
        )
    try:
        words = shlex.split(arguments)
    except ValueError:
        words = arguments.split()
    body = _POSITIONAL.sub(
        lambda m: words[int(m.group(1)) - 1] if 0 < int(m.group(1)) <= len(words) else "",
        command.body,
    )
    if "$ARGUMENTS" in body:
        body = body.replace("$ARGUMENTS", arguments)
    elif arguments and not _POSITIONAL.search(command.body):
        body = f"{body}\n\nARGUMENTS: {arguments}"  # as Claude Code appends them
    return Expansion(body, command)
