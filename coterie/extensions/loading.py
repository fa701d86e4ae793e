"""Loading a run's extensions: the user's, the workspace's (when trusted), ``--agents``.

Extensions are custom subagents, skills, commands and output styles
(:mod:`coterie.agent.outputstyles`). The user's are in their Claude folder
(``~/.claude``, or ``$CLAUDE_CONFIG_DIR``: :func:`coterie.home.claude_dir`),
the workspace's in its ``.claude``.

Precedence by name, as in Claude Code: ``--agents`` over the project's
files, the project's over the user's. A workspace's files are the
repository's, so they load only once the workspace is trusted
(:mod:`coterie.trust`): a checked-in agent, skill or command is a prompt
the repository wrote, and could carry prompt injection. Otherwise they are
left out and one notice says so. Once it is trusted, a workspace file
loads only as the user trusted it (:mod:`coterie.trust`): one that is new or
changed since (a skill a model wrote, granting itself ``allowed-tools``) is
left out, and one notice names it. A file that cannot be used is a notice
naming it; the others still load. Of the output styles, the one the
settings' ``outputStyle`` names is chosen here (an unknown name is a notice,
and ``default`` is used).

A plugin's agents, skills and commands (:mod:`~coterie.extensions.plugins`:
``--plugin-dir``, the user's own choice) load whatever the workspace's
trust, each named after its plugin (``myplugin:reviewer``,
``/myplugin:hello``), so they never shadow the user's or the workspace's;
``${CLAUDE_PLUGIN_ROOT}`` in their bodies is the plugin's folder.
"""

from __future__ import annotations

import os
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
from coterie.home import claude_dir
from coterie.trust import Approval, approval, file_digest

if TYPE_CHECKING:
    from collections.abc import Collection
    from pathlib import Path

    from coterie.agent.outputstyles import OutputStyle
    from coterie.extensions.plugins import Plugin, Plugins

__all__ = ["Extensions", "extension_items", "load_extensions"]

#: Where each kind of extension is found under a ``.claude`` folder.
KINDS = {
    "agents": "*.md",
    "skills": "*/SKILL.md",
    "commands": "**/*.md",
    "output-styles": "*.md",
}


@attrs.frozen
class Extensions:
    """The custom subagents, skills, commands and output styles of one run, by name."""

    agents: dict[str, AgentDefinition] = attrs.field(factory=dict, hash=False)
    skills: dict[str, SkillDefinition] = attrs.field(factory=dict, hash=False)
    commands: dict[str, CommandDefinition] = attrs.field(factory=dict, hash=False)
    #: What the user must be told once (files ignored or unusable).
    notices: tuple[str, ...] = ()
    #: The output styles the run knows (built-in, the user's, the project's), by name.
    output_styles: dict[str, OutputStyle] = attrs.field(factory=dict, hash=False)
    #: The output style the run answers in (None: ``default``).
    output_style: OutputStyle | None = None
    #: The plugins whose parts these include (``system/init``'s ``plugins``).
    plugins: tuple[Plugin, ...] = ()

    def expand(self, prompt: str) -> Expansion | None:
        """*prompt* expanded if it is a ``/command`` or a ``/skill`` the user may invoke
        (see :func:`~coterie.extensions.expand`)."""
        return expand(prompt, self.commands, self.skills)


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
    read_project: bool = True,
    home: Path | None = None,
    agents_json: str | None = None,
    known_tools: Collection[str] = (),
    approved: Approval | None = None,
    output_style: str | None = None,
    plugins: Plugins | None = None,
) -> Extensions:
    """The extensions of a run in *workspace* (see the module docstring).

    *home* is the user's home (default: the Claude folder is ``~/.claude`` or
    ``$CLAUDE_CONFIG_DIR``; given, ``home/.claude``); *known_tools* the tool names a
    definition's ``tools`` may use (others are reported, never given).
    *approved* is what the user approved of a trusted workspace (default: what
    the trust store says). A malformed *agents_json* is an
    :class:`~coterie.extensions.AgentsError`. *output_style* is the settings'
    ``outputStyle``: the style chosen (:attr:`Extensions.output_style`).
    *plugins* are the run's plugins (``--plugin-dir``): their parts load under
    their names, and their notices are the run's. *read_project* False leaves the
    workspace's files unread (``--setting-sources`` without ``project``).
    """
    user = claude_dir(home)
    project = workspace / ".claude"
    same = os.path.realpath(user) == os.path.realpath(project)
    notices: list[str] = []
    agents: dict[str, AgentDefinition] = {}
    skills: dict[str, SkillDefinition] = {}
    commands: dict[str, CommandDefinition] = {}
    styles: list[tuple[str, Path, str | None]] = []
    scopes: list[tuple[str, Path]] = [("user", user)]
    texts: dict[Path, str] = {}  # the project's files approved, as checked
    left_out: set[Path] = set()
    if not same and read_project:
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
        for path in files("output-styles"):
            styles.append((scope, path, texts[path] if path in texts else _text(path)))
    for plugin in plugins.plugins if plugins is not None else ():
        _add_plugin(plugin, agents, skills, commands, notices)
    if plugins is not None:  # named plugin:style, after the user's and the project's
        styles.extend(plugins.style_files())
    if plugins is not None:
        notices[:0] = plugins.notices
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
    # Imported here: the agent engine is not needed to read a command's prompt.
    from coterie.agent.outputstyles import choose_style, styles_from_files

    known_styles, said = styles_from_files(styles)
    chosen, missing = choose_style(output_style, known_styles)
    notices.extend(said if missing is None else (*said, missing))
    loaded = plugins.plugins if plugins is not None else ()
    return Extensions(agents, skills, commands, tuple(notices), known_styles, chosen, loaded)


def _text(path: Path) -> str | None:
    """A user's file as text (None: not UTF-8, or unreadable)."""
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _add_plugin(
    plugin: Plugin,
    agents: dict[str, AgentDefinition],
    skills: dict[str, SkillDefinition],
    commands: dict[str, CommandDefinition],
    notices: list[str],
) -> None:
    """*plugin*'s agents, skills and commands, each named ``plugin:name`` (a skill
    after its folder, a command with its sub-folders: ``plugin:sub:name``)."""
    prefix = plugin.name
    for path in _plugin_files(plugin.agents, "*.md"):
        try:
            agent = agent_from_file(path, "user")
        except AgentsError as exc:
            notices.append(f"agent not loaded: {exc}")
            continue
        name = f"{prefix}:{agent.name}"
        agents[name] = attrs.evolve(agent, name=name, prompt=plugin.substitute(agent.prompt))
    for folder in plugin.skills:
        for path in _files(folder, KINDS["skills"]):
            name = f"{prefix}:{path.parent.name}"
            try:
                skill = skill_from_folder(path.parent, "user", name=name)
            except AgentsError as exc:
                notices.append(f"skill not loaded: {exc}")
                continue
            skills[name] = attrs.evolve(skill, body=plugin.substitute(skill.body))
    for root in plugin.commands:
        for path in _plugin_files((root,), KINDS["commands"]):
            try:
                command = command_from_file(path, root if root.is_dir() else path.parent, "user")
            except AgentsError as exc:
                notices.append(f"command not loaded: {exc}")
                continue
            name = ":".join(p for p in (prefix, command.namespace, command.name) if p)
            commands[name] = attrs.evolve(
                command,
                body=plugin.substitute(command.body),
                allowed_tools=tuple(plugin.substitute(t) for t in command.allowed_tools),
                plugin=prefix,
            )


def _plugin_files(paths: tuple[Path, ...], pattern: str) -> list[Path]:
    """The files of a plugin's *paths*: each a folder (its files matching
    *pattern*) or a file the manifest names."""
    return [p for path in paths for p in ([path] if path.is_file() else _files(path, pattern))]
