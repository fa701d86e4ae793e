"""Tools and permission gates (DESIGN §5).

This package owns the tool registry, the built-in tools with Claude Code's
names and input schemas, the workspace sandbox, and the permission gates
(rules from Claude Code's settings files, the hard deny list, modes). It
knows nothing of models or actors; it must not import from ``coterie.agent``,
``coterie.models`` or ``coterie.actors``.
"""

from coterie.tools._base import FileStamp, Tool, ToolContext, ToolResult
from coterie.tools._registry import Authorizer, ToolRegistry, UnknownTool, execute_tool_call
from coterie.tools.bash import BashTool
from coterie.tools.files import EditTool, ReadTool, WriteTool
from coterie.tools.permissions import (
    Answer,
    Asker,
    Decision,
    Mode,
    PermissionGate,
    PermissionMode,
    PermissionPolicy,
    PermissionSettings,
    Rule,
    RuleError,
    SettingsError,
    load_settings,
    parse_rule,
)
from coterie.tools.sandbox import SandboxViolation, sandboxed_path
from coterie.tools.schedule import ScheduleWakeupTool, last_wakeup
from coterie.tools.search import GlobTool, GrepTool
from coterie.tools.task import SUBAGENT_TYPES, TaskTool
from coterie.tools.team import (
    BROADCAST,
    ApprovePlanTool,
    SendMessageTool,
    TaskCreateTool,
    TaskGetTool,
    TaskListTool,
    TaskUpdateTool,
    TeamContext,
    add_team_tools,
    team_tools,
)
from coterie.tools.todo import TodoWriteTool, todo_reminder


def default_registry() -> ToolRegistry:
    """A registry of the seven built-in tools: Bash, Read, Write, Edit, Glob, Grep, TodoWrite."""
    registry = ToolRegistry()
    for tool in (
        BashTool(),
        ReadTool(),
        WriteTool(),
        EditTool(),
        GlobTool(),
        GrepTool(),
        TodoWriteTool(),
    ):
        registry.register(tool)
    return registry


__all__ = [
    "ScheduleWakeupTool",
    "last_wakeup",
    "ApprovePlanTool",
    "SUBAGENT_TYPES",
    "TaskTool",
    "BROADCAST",
    "Answer",
    "Asker",
    "Authorizer",
    "BashTool",
    "Decision",
    "EditTool",
    "FileStamp",
    "GlobTool",
    "GrepTool",
    "Mode",
    "PermissionGate",
    "PermissionMode",
    "PermissionPolicy",
    "PermissionSettings",
    "ReadTool",
    "Rule",
    "RuleError",
    "SandboxViolation",
    "SendMessageTool",
    "SettingsError",
    "TaskCreateTool",
    "TaskGetTool",
    "TaskListTool",
    "TaskUpdateTool",
    "TeamContext",
    "TodoWriteTool",
    "Tool",
    "ToolContext",
    "ToolRegistry",
    "ToolResult",
    "UnknownTool",
    "WriteTool",
    "add_team_tools",
    "default_registry",
    "execute_tool_call",
    "load_settings",
    "parse_rule",
    "sandboxed_path",
    "team_tools",
    "todo_reminder",
]
