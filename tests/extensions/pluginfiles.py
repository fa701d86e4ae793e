"""Plugins written for the tests, in the shapes Claude Code's public plugins use."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pathlib import Path

HOOK_LINE = 'printf "%s %s\\n" "$CLAUDE_PLUGIN_ROOT" "{what}" >> "$CLAUDE_PROJECT_DIR/{log}"'


def put(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def hooks_json(log: str = "plugin-hooks.log") -> dict[str, Any]:
    """A PreToolUse and a PostToolUse hook on Bash, each appending the plugin's root
    (from ``${CLAUDE_PLUGIN_ROOT}``) and its event to *log* in the workspace."""

    def group(what: str) -> list[dict[str, Any]]:
        command = HOOK_LINE.format(what=what, log=log)
        return [{"matcher": "Bash", "hooks": [{"type": "command", "command": command}]}]

    return {
        "description": "records the Bash calls",
        "hooks": {"PreToolUse": group("pre"), "PostToolUse": group("post")},
    }


def write_plugin(
    root: Path,
    name: str = "myplugin",
    *,
    manifest: dict[str, Any] | str | None = None,
    hooks: dict[str, Any] | str | None = None,
) -> Path:
    """A plugin in *root*: a manifest (*manifest*, else one naming *name*; a string is
    written as it is), a command ``hello`` and one in a sub-folder, an agent
    ``helper``, a skill ``greet`` and *hooks* as its ``hooks/hooks.json``."""
    if manifest is None:
        manifest = {"name": name, "version": "1.2.0", "description": "a test plugin",
                    "author": {"name": "Tests"}}  # fmt: skip
    text = manifest if isinstance(manifest, str) else json.dumps(manifest)
    put(root / ".claude-plugin" / "plugin.json", text)
    put(
        root / "commands" / "hello.md",
        "---\ndescription: Greets someone\n---\n"
        "Greet $ARGUMENTS using ${CLAUDE_PLUGIN_ROOT}/greeting.txt.\n",
    )
    put(root / "commands" / "git" / "status.md", "Report the state of the repository.\n")
    put(
        root / "agents" / "helper.md",
        "---\nname: helper\ndescription: Helps, from ${CLAUDE_PLUGIN_ROOT}\n---\n"
        "You help. Your notes are in ${CLAUDE_PLUGIN_ROOT}/notes.\n",
    )
    put(
        root / "skills" / "greet" / "SKILL.md",
        "---\nname: Greeting Skill\ndescription: How to greet people\n---\n"
        "Read ${CLAUDE_PLUGIN_ROOT}/skills/greet/phrases.txt first.\n",
    )
    if hooks is not None:
        put(root / "hooks" / "hooks.json", hooks if isinstance(hooks, str) else json.dumps(hooks))
    return root
