"""Custom subagent definitions: ``.claude/agents/*.md``, ``~/.claude/agents/*.md``, ``--agents``.

A definition file's frontmatter names the subagent (``name``, lowercase
letters, digits and hyphens), says when to use it (``description``), and may
limit its ``tools`` (a comma list or a list; absent: its parent's tools),
pick its ``model`` (an alias or a name; ``inherit`` or absent: the parent's)
and its ``permissionMode``. The body is its system prompt. ``--agents`` takes
Claude Code's JSON: ``{"name": {"description", "prompt", "tools"?, "model"?,
"permissionMode"?}}``.

These are prompts, not permissions: the runtime gives a custom subagent only
those of its parent's tools its ``tools`` names, and applies its
``permissionMode`` only when it is narrower than its parent's
(:func:`narrower_mode`): a checked-in ``bypassPermissions`` bypasses nothing.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any, Final, Literal

import attrs

from coterie.errors import CoterieError
from coterie.extensions.frontmatter import FrontmatterError, as_list, parse_frontmatter

if TYPE_CHECKING:
    from pathlib import Path

__all__ = [
    "AgentDefinition",
    "AgentsError",
    "Scope",
    "agent_from_file",
    "narrower_mode",
    "parse_agents_json",
]

Scope = Literal["user", "project", "cli"]
NAME: Final = re.compile(r"^[a-z0-9][a-z0-9-]{0,63}$")

#: How much each permission mode lets through, least first: a subagent's own
#: mode applies only when it ranks below its parent's. ``auto`` and
#: ``acceptEdits`` are incomparable (one asks a classifier, one edits unasked),
#: so neither narrows the other.
_RANK: Final = {"plan": 0, "dontAsk": 1, "default": 2, "acceptEdits": 3, "auto": 3,
                "bypassPermissions": 4}  # fmt: skip


class AgentsError(CoterieError, ValueError):
    """An ``--agents`` value or an agent definition file cannot be used."""


@attrs.frozen
class AgentDefinition:
    """One custom subagent type."""

    name: str
    description: str
    #: Its system prompt (the file's body).
    prompt: str
    #: The tools it may use, by name (None: every tool its parent has).
    tools: tuple[str, ...] | None = None
    #: Its model (None: its parent's; ``inherit`` is read as None).
    model: str | None = None
    #: The mode it asks for; applied only if narrower than its parent's.
    permission_mode: str | None = None
    scope: Scope = "project"
    #: Where it was defined (a file, or ``--agents``).
    source: str = "--agents"


def narrower_mode(parent: str, wanted: str | None) -> str | None:
    """*wanted* if it lets through less than *parent*, else None (the parent's holds)."""
    if wanted is None or wanted not in _RANK or parent not in _RANK:
        return None
    return wanted if _RANK[wanted] < _RANK[parent] else None


def _build(
    name: str, data: dict[str, Any], prompt: str, scope: Scope, source: str
) -> AgentDefinition:
    if not NAME.match(name):
        raise AgentsError(
            f"{source}: the agent name {name!r} must be lowercase letters, digits and hyphens"
        )
    description = data.get("description")
    if not isinstance(description, str) or not description.strip():
        raise AgentsError(f"{source}: agent {name!r} needs a description")
    tools_raw = data.get("tools")
    if tools_raw is not None and not isinstance(tools_raw, (str, list)):
        raise AgentsError(f"{source}: agent {name!r}: tools must be a list of names")
    tools = as_list(tools_raw)
    if tools is not None and not all(isinstance(t, str) for t in tools):
        raise AgentsError(f"{source}: agent {name!r}: tools must be a list of names")
    model = data.get("model")
    if model is not None and not isinstance(model, str):
        raise AgentsError(f"{source}: agent {name!r}: model must be a string")
    mode = data.get("permissionMode")
    if mode is not None and mode not in _RANK:
        raise AgentsError(
            f"{source}: agent {name!r}: permissionMode {mode!r} is not one of {', '.join(_RANK)}"
        )
    return AgentDefinition(
        name=name,
        description=description.strip(),
        prompt=prompt.strip(),
        tools=tuple(tools) if tools is not None else None,
        model=None if model in (None, "", "inherit") else model,
        permission_mode=mode,
        scope=scope,
        source=source,
    )


def read_definition(path: Path, text: str | None = None) -> tuple[dict[str, Any], str]:
    """The frontmatter and body of the definition file *path* (an agent's, a skill's,
    a command's), or of its *text* already read (what was checked against the trust
    record is what is parsed); an :class:`AgentsError` naming it if it cannot be used."""
    try:
        return parse_frontmatter(path.read_text(encoding="utf-8") if text is None else text)
    except (OSError, UnicodeDecodeError) as exc:
        raise AgentsError(f"{path}: cannot be read ({exc})") from None
    except FrontmatterError as exc:
        raise AgentsError(f"{path}: {exc}") from None


def agent_from_file(path: Path, scope: Scope, text: str | None = None) -> AgentDefinition:
    """The definition in *path* (its *text*, if read already; an :class:`AgentsError`
    naming it if it cannot be used)."""
    meta, body = read_definition(path, text)
    name = meta.get("name")
    if not isinstance(name, str) or not name:
        raise AgentsError(f"{path}: the frontmatter has no name")
    return _build(name, dict(meta), body, scope, str(path))


def parse_agents_json(text: str) -> tuple[AgentDefinition, ...]:
    """The definitions of an ``--agents`` value (Claude Code's JSON object)."""
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise AgentsError(f"--agents: not valid JSON ({exc.msg})") from None
    if not isinstance(raw, dict):
        raise AgentsError("--agents: expected an object of agents by name")
    out = []
    for name, data in raw.items():
        if not isinstance(data, dict):
            raise AgentsError(f"--agents: agent {name!r} must be an object")
        prompt = data.get("prompt")
        if not isinstance(prompt, str) or not prompt.strip():
            raise AgentsError(f"--agents: agent {name!r} needs a prompt")
        out.append(_build(str(name), data, prompt, "cli", "--agents"))
    return tuple(out)
