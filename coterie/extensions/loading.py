"""Loading a run's extensions: the user's, the workspace's (when trusted), ``--agents``.

Precedence by name, as in Claude Code: ``--agents`` over the project's
files, the project's over the user's. A workspace's files are the
repository's, so they load only once the workspace is trusted
(:mod:`coterie.trust`): a checked-in agent, skill or command is a prompt
the repository wrote, and could carry prompt injection. Otherwise they are
left out and one notice says so. Once it is trusted, a workspace file
loads only as the user trusted it (:mod:`coterie.trust`): one that is new or
changed since (a skill a model wrote, granting itself ``allowed-tools``) is
left out, and one notice names it. A file that cannot be used is a notice
naming it; the others still load.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import attrs

from coterie.extensions.agents import (
    AgentDefinition,
    AgentsError,
    agent_from_file,
    parse_agents_json,
)
from coterie.extensions.commands import CommandDefinition, Expansion, command_from_file, expand
from coterie.extensions.skills import SkillDefinition, skill_from_folder
from coterie.trust import Approval, approval, file_digest

if TYPE_CHECKING:
    from collections.abc import Collection

__all__ = ["Extensions", "extension_items", "load_extensions"]

#: Where each kind of extension is found under a ``.claude`` folder.
KINDS = {"agents": "*.md", "skills": "*/SKILL.md", "commands": "**/*.md"}


@attrs.frozen
class Extensions:
    """The custom subagents, skills and commands of one run, by name."""

    agents: dict[str, AgentDefinition] = attrs.field(factory=dict, hash=False)
    skills: dict[str, SkillDefinition] = attrs.field(factory=dict, hash=False)
    commands: dict[str, CommandDefinition] = attrs.field(factory=dict, hash=False)
    #: What the user must be told once (files ignored or unusable).
    notices: tuple[str, ...] = ()

    def expand(self, prompt: str) -> Expansion | None:
        """*prompt* expanded if it is a ``/command`` (see :func:`~coterie.extensions.expand`)."""
        return expand(prompt, self.commands)


def _files(folder: Path, pattern: str) -> list[Path]:
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.glob(pattern) if p.is_file())


def _digest(path: Path) -> str | None:
    try:
        return file_digest(path.read_bytes())
    except OSError:
        return None


def extension_items(workspace: Path) -> dict[str, str]:
    """The workspace's agents, skills and commands as the trust record keeps them
    (digests by path in the workspace; only ``.claude``'s folders are read)."""
    items: dict[str, str] = {}
    for kind, pattern in KINDS.items():
        for path in _files(workspace / ".claude" / kind, pattern):
            if (digest := _digest(path)) is not None:
                items[path.relative_to(workspace).as_posix()] = digest
    return items


def _checked(workspace: Path, approved: Approval) -> tuple[dict[Path, str], set[Path]]:
    """The workspace's extension files the user approved as they are now, with the
    text that was checked (read once: what is parsed is what was approved), and
    the others."""
    texts: dict[Path, str] = {}
    left_out: set[Path] = set()
    for kind, pattern in KINDS.items():
        for path in _files(workspace / ".claude" / kind, pattern):
            item = path.relative_to(workspace).as_posix()
            try:
                data = path.read_bytes()
            except OSError:
                left_out.add(path)
                continue
            try:
                if approved.approves(item, file_digest(data)):
                    texts[path] = data.decode("utf-8")
                    continue
            except UnicodeDecodeError:
                pass  # not text: out too (read again, it could be something else)
            left_out.add(path)
    return texts, left_out


def load_extensions(
    workspace: Path,
    *,
    trusted: bool,
    home: Path | None = None,
    agents_json: str | None = None,
    known_tools: Collection[str] = (),
    approved: Approval | None = None,
) -> Extensions:
    """The extensions of a run in *workspace* (see the module docstring).

    *home* is the user's home (default ``~``); *known_tools* the tool names a
    definition's ``tools`` may use (others are reported, never given).
    *approved* is what the user approved of a trusted workspace (default: what
    the trust store says). A malformed *agents_json* is an
    :class:`~coterie.extensions.AgentsError`.
    """
    user = (home or Path(os.path.expanduser("~"))) / ".claude"
    project = workspace / ".claude"
    same = os.path.realpath(user) == os.path.realpath(project)
    notices: list[str] = []
    agents: dict[str, AgentDefinition] = {}
    skills: dict[str, SkillDefinition] = {}
    commands: dict[str, CommandDefinition] = {}
    scopes: list[tuple[str, Path]] = [("user", user)]
    texts: dict[Path, str] = {}  # the project's files approved, as checked
    left_out: set[Path] = set()
    if not same:
        if trusted:
            scopes.append(("project", project))
            approved = approved or approval(workspace)
            texts, left_out = _checked(workspace, approved)
            if left_out:
                names = ", ".join(sorted(p.relative_to(workspace).as_posix() for p in left_out))
                notices.append(approved.notice(names, "not loaded"))
        else:
            found = [kind for kind, pattern in KINDS.items() if _files(project / kind, pattern)]
            if found:
                notices.append(
                    f"{workspace} is not trusted, so its .claude/{{{','.join(found)}}} were not"
                    " loaded (they are the repository's prompts);"
                    f" `coterie trust {workspace}` trusts it"
                )
    for scope, root in scopes:
        kind = "user" if scope == "user" else "project"

        def files(sub: str, *, root: Path = root, scope: str = scope) -> list[Path]:
            # The project's: only those checked and approved (not one made since).
            found = _files(root / sub, KINDS[sub])
            return found if scope == "user" else [p for p in found if p in texts]

        for path in files("agents"):
            try:
                definition = agent_from_file(path, kind, texts.get(path))  # type: ignore[arg-type]
            except AgentsError as exc:
                notices.append(f"agent not loaded: {exc}")
                continue
            agents[definition.name] = definition
        for path in files("skills"):
            try:
                skill = skill_from_folder(path.parent, kind, texts.get(path))  # type: ignore[arg-type]
            except AgentsError as exc:
                notices.append(f"skill not loaded: {exc}")
                continue
            skills[skill.name] = skill
        scoped: dict[str, CommandDefinition] = {}
        for path in files("commands"):
            try:
                command = command_from_file(path, root / "commands", kind, texts.get(path))  # type: ignore[arg-type]
            except AgentsError as exc:
                notices.append(f"command not loaded: {exc}")
                continue
            if command.namespace:
                scoped[f"{command.namespace}:{command.name}"] = command
            existing = scoped.get(command.name)
            if existing is not None:
                notices.append(
                    f"/{command.name}: {command.source} is shadowed by {existing.source}"
                )
                continue
            scoped[command.name] = command
        commands.update(scoped)
    if agents_json:
        for definition in parse_agents_json(agents_json):
            agents[definition.name] = definition
    if known_tools:
        for definition in agents.values():
            # MCP tools (mcp__server__tool) are known only once their servers run.
            unknown = [
                t
                for t in definition.tools or ()
                if t not in known_tools and not t.startswith("mcp__")
            ]
            if unknown:
                notices.append(
                    f"agent {definition.name} ({definition.source}): unknown tools"
                    f" {', '.join(unknown)} are not given to it"
                )
    return Extensions(agents, skills, commands, tuple(notices))
