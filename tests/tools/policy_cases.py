"""The permission policy's decisions over every built-in tool, mode and a spread of inputs.

:func:`decisions` is the table ``test_policy_table.py`` compares with
``policy_table.json``, which holds the decisions of the policy as it was
before tools declared their capabilities (the hand-kept name lists). To
record it again (only ever from that old code)::

    python -m tests.tools.policy_cases > tests/tools/policy_table.json

This module imports only what both the old and the new code have.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from coterie.tools import PermissionPolicy, ToolContext

if TYPE_CHECKING:
    from collections.abc import Iterable

    from coterie.tools import Tool

MODES = ("default", "acceptEdits", "plan", "auto", "dontAsk", "bypassPermissions")

#: Rule sets, each exercising a different rule kind (Read, Edit, Write, Bash, whole tools).
RULES: dict[str, dict[str, list[str]]] = {
    "none": {},
    "reads-and-bash": {
        "allow": ["Bash(ls *)", "Edit(src/**)"],
        "ask": ["Read(./ask/**)", "Bash(git push *)"],
        "deny": ["Read(./secret/**)", "Bash(rm *)", "Write(./locked/**)"],
    },
    "edits": {
        "allow": ["Write", "Edit(./docs/**)", "Read(./ask/**)"],
        "ask": ["Edit(./src/**)", "Grep"],
        "deny": ["Edit(./locked/**)", "TaskCreate", "Glob(*)"],
    },
    "execution": {"allow": ["Bash(*)", "Bash(python:*)", "TodoWrite", "Task"]},
}

_FILES = ("a.txt", "src/a.py", "docs/x.md", "secret/k.txt", "ask/q.txt", "locked/l.txt")
_SPECIAL = (".git/config", ".claude/settings.json", ".claude/commands/x.md", "../out.txt", "/etc")
_DIRS = (None, "src", "secret", "ask", "..", ".git")

#: Inputs per tool name; tools not named here get one empty input.
INPUTS: dict[str, dict[str, dict[str, Any]]] = {
    "Bash": {
        c: {"command": c}
        for c in (
            "ls -la",
            "ls src && rm -rf build",
            "git push origin main",
            "echo $(whoami)",
            "python -c 'print(1)'",
            "rm -rf /",
            "cat secret/k.txt",
        )
    },
    "Read": {p: {"file_path": p} for p in (*_FILES, *_SPECIAL)},
    "Write": {p: {"file_path": p, "content": "x"} for p in (*_FILES, *_SPECIAL)},
    "Edit": {
        p: {"file_path": p, "old_string": "a", "new_string": "b"} for p in (*_FILES, *_SPECIAL)
    },
    "NotebookEdit": {p: {"notebook_path": p, "new_source": "x"} for p in (*_FILES, *_SPECIAL)},
    "Glob": {str(d): {"pattern": "*"} | ({"path": d} if d else {}) for d in _DIRS},
    "Grep": {str(d): {"pattern": "x"} | ({"path": d} if d else {}) for d in _DIRS},
}


def decisions(tools: Iterable[Tool], workspace: Path) -> dict[str, Any]:
    """``table[rules][mode][tool][input] = [behavior, rule]`` for every combination."""
    table: dict[str, Any] = {}
    for label, rules in RULES.items():
        for mode in MODES:
            policy = PermissionPolicy.from_rules(mode=mode, **rules)  # type: ignore[arg-type]
            by_tool = table.setdefault(label, {}).setdefault(mode, {})
            for tool in tools:
                cases = INPUTS.get(tool.name, {"{}": {}})
                by_tool[tool.name] = {
                    case: _decide(policy, tool, data, workspace) for case, data in cases.items()
                }
    return table


def _decide(policy: PermissionPolicy, tool: Tool, data: dict[str, Any], ws: Path) -> list[Any]:
    decision = policy.check(tool, data, ToolContext(workspace=ws))
    return [decision.behavior, decision.rule]


def _old_tools() -> list[Tool]:
    """The fifteen built-in tools as the old code spelled them (no catalogue yet)."""
    import coterie.tools as t

    classes = [
        t.BashTool, t.ReadTool, t.WriteTool, t.EditTool, t.GlobTool, t.GrepTool,
        t.TodoWriteTool, t.TaskCreateTool, t.TaskUpdateTool, t.TaskListTool, t.TaskGetTool,
        t.SendMessageTool, t.ScheduleWakeupTool, t.TaskTool, t.ApprovePlanTool,
    ]  # fmt: skip
    return [cls() for cls in classes]


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        workspace = Path(tmp).resolve() / "ws"
        workspace.mkdir()
        json.dump(decisions(_old_tools(), workspace), sys.stdout, indent=1, sort_keys=True)
        sys.stdout.write("\n")
