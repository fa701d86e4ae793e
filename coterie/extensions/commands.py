"""Slash commands: ``.claude/commands/**/*.md`` and ``~/.claude/commands/**/*.md``, expanded.

A command is named after its file (``review.md`` is ``/review``); a
subfolder groups commands and shows in the description
(``frontend/component.md`` is ``/component``, "(project:frontend)"), and
``/frontend:component`` names it too. Frontmatter: ``description``,
``allowed-tools`` (permission rules allowed for the run it starts),
``model``, ``argument-hint``. The body is the prompt, with ``$ARGUMENTS``
replaced by everything after the name and ``$1``, ``$2``... by the
arguments one by one (shell-like quoting).

A skill the user may invoke (:mod:`~coterie.extensions.skills`) is a
command too, as in Claude Code: ``/skill-name args`` sends ``Base directory
for this skill: <folder>`` and its body, arguments in place
(:func:`command_from_skill`); a skill shadows a command of the same name.

Shell lines (``!`git status``` and ````` ```! ````` blocks) and ``@file``
references are found as Claude Code finds them (:mod:`~coterie.extensions.commandlines`);
the :class:`Expansion` lists the lines to run and the files to attach, and
:meth:`Expansion.completed` makes the prompt from what they gave. Running
them (as the lead's tool calls, through the permission gate under the
command's ``allowed-tools``) is the run's: :func:`expand` does no I/O.
"""

from __future__ import annotations

import re
import shlex
from typing import TYPE_CHECKING

import attrs

from coterie.errors import CoterieError
from coterie.extensions.agents import Scope, read_definition
from coterie.extensions.commandlines import (
    Piece,
    ShellLine,
    file_refs,
    fill,
    parse_body,
    shell_lines,
)
from coterie.extensions.frontmatter import as_list

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from pathlib import Path

    from coterie.extensions.skills import SkillDefinition

__all__ = [
    "BUILTIN_COMMANDS",
    "CommandDefinition",
    "CommandError",
    "Expansion",
    "command_from_file",
    "command_from_skill",
    "expand",
    "invocable",
]

#: coterie's own slash commands (the interactive session's); never a file's.
BUILTIN_COMMANDS = frozenset({"help", "clear", "compact", "exit", "quit", "cost", "status"})

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
    #: Whether it is a skill invoked as a command (:func:`command_from_skill`).
    skill: bool = False

    @property
    def label(self) -> str:
        """``(project)``, ``(user:backend)``, ``(plugin:name)``: where it comes from."""
        where = f"plugin:{self.plugin}" if self.plugin else self.scope
        return f"({where}{':' + self.namespace if self.namespace else ''})"


@attrs.frozen
class Expansion:
    """A ``/name args`` prompt, expanded: ready as :attr:`prompt` when it has no
    :attr:`shell` lines to run nor :attr:`files` to look for; else
    :meth:`completed` with what they gave (or :meth:`stopped` at a line that
    failed or was not allowed)."""

    prompt: str
    command: CommandDefinition
    #: The body (arguments in place) as text and shell lines.
    pieces: tuple[Piece, ...] = ()
    #: The paths the body names with ``@``, as written (each once): attached
    #: if they are files, listed if they are directories, else left alone.
    files: tuple[str, ...] = ()

    @property
    def shell(self) -> tuple[ShellLine, ...]:
        """The shell lines to run before the prompt is sent, in order."""
        return shell_lines(self.pieces)

    def completed(
        self,
        outputs: Sequence[str],
        attached: Sequence[tuple[str, str]] = (),
        listed: Sequence[tuple[str, Sequence[str]]] = (),
    ) -> str:
        """The prompt, each shell line replaced by its output (*outputs*, in order),
        after the *attached* files (``(path, content)``: the files among
        :attr:`files` that were read) and the *listed* directories (``(path,
        names)``: the directories among :attr:`files` whose entries were read;
        as Claude Code lists a directory: every entry's name, dot files too,
        here sorted)."""
        text = fill(self.pieces, outputs) if self.pieces else self.prompt
        notes = [
            f'<attached-file path="{path}">\n{content}\n</attached-file>\n'
            for path, content in attached
        ]
        for path, names in listed:
            entries = "".join(name + "\n" for name in sorted(names))
            notes.append(f'<attached-directory path="{path}">\n{entries}</attached-directory>\n')
        return "".join(notes) + text

    def stopped(self, line: ShellLine, reason: str) -> str:
        """The one line saying the command stopped at *line*, and why (*reason*: the
        gate's refusal, or what the line printed and its exit status)."""
        detail = " ".join(reason.split())
        command = self.command
        name = f"{command.plugin}:{command.name}" if command.plugin else command.name
        return f"/{name} stopped at {line.pattern}: {detail}"


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


def command_from_skill(skill: SkillDefinition) -> CommandDefinition:
    """*skill* as the ``/name`` command Claude Code makes of it: its body after the
    line naming its folder, its ``allowed-tools`` for the lines it runs."""
    return CommandDefinition(
        name=skill.name,
        body=f"Base directory for this skill: {skill.folder}\n\n{skill.body}",
        description=skill.description,
        allowed_tools=skill.allowed_tools,
        argument_hint=skill.argument_hint,
        scope=skill.scope,
        source=str(skill.folder / "SKILL.md"),
        skill=True,
    )


def invocable(
    commands: Mapping[str, CommandDefinition],
    skills: Mapping[str, SkillDefinition] | None = None,
) -> dict[str, CommandDefinition]:
    """The ``/name`` commands of a run: *commands*, and the *skills* the user may
    invoke (a skill shadows a command of its name), by name."""
    found = dict(commands)
    for name, skill in (skills or {}).items():
        if skill.user_invocable:
            found[name] = command_from_skill(skill)
    return found


def expand(
    prompt: str,
    commands: Mapping[str, CommandDefinition],
    skills: Mapping[str, SkillDefinition] | None = None,
) -> Expansion | None:
    """*prompt* expanded if it is ``/name args`` naming one of *commands* or of the
    *skills* the user may invoke (:func:`invocable`); None if it is not a slash
    command at all or names a built-in one; a :class:`CommandError` for an
    unknown name. The arguments are put in before the shell lines are found
    (``!`gh issue view $1``` runs with the first argument)."""
    text = prompt.strip()
    match = re.match(r"^/([A-Za-z0-9_][\w:.-]*)(?:\s+(.*))?$", text, re.DOTALL)
    if match is None:
        return None
    name, arguments = match.group(1), (match.group(2) or "").strip()
    if name in BUILTIN_COMMANDS:
        return None
    commands = invocable(commands, skills) if skills else commands
    command = commands.get(name)
    if command is None:
        known = ", ".join(f"/{n}" for n in sorted(commands)) or "none"
        raise CommandError(f"unknown command /{name} (commands here: {known})")
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
    pieces = parse_body(body)
    runs = any(isinstance(p, ShellLine) for p in pieces)
    return Expansion(body, command, pieces if runs else (), file_refs(body))
