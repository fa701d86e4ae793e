"""Tools and permission gates (docs/engine.md).

This package owns the tool registry, the built-in tools with Claude Code's
names and input schemas, the workspace sandbox, and the permission gates
(rules from Claude Code's settings files, the hard deny list, modes). It
knows nothing of models or actors; it must not import from ``coterie.agent``,
``coterie.models`` or ``coterie.actors``.

Every fact about a tool is declared on it (:class:`Capabilities`); the
policy, the rule matcher, the subagent types and the choice of each agent's
tools (:mod:`coterie.tools.catalogue`) are derived from those declarations.
"""

from coterie.tools._base import FileStamp, ShellSandbox, TeamContext, Tool, ToolContext, ToolResult
from coterie.tools._registry import (
    Authorizer,
    ToolRegistry,
    ToolSource,
    UnknownTool,
    execute_tool_call,
)
from coterie.tools.bash import BashTool
from coterie.tools.capabilities import Access, Capabilities, Effect, Need, PathInput
from coterie.tools.catalogue import (
    BUILTIN_TOOLS,
    Provides,
    add_team_tools,
    builtin_registry,
    builtin_tools,
    default_registry,
    team_tools,
)
from coterie.tools.files import EditTool, ReadTool, WriteTool
from coterie.tools.ossandbox import (
    Bubblewrap,
    NetworkSettings,
    SandboxError,
    SandboxSettings,
    SandboxSettingsError,
)
from coterie.tools.ossandbox import probe as probe_sandbox
from coterie.tools.permissions import (
    Answer,
    Asker,
    Decision,
    Mode,
    NarrowedGate,
    PermissionGate,
    PermissionMode,
    PermissionPolicy,
    PermissionSettings,
    Rule,
    RuleError,
    SettingsError,
    Suggestion,
    load_settings,
    parse_rule,
)
from coterie.tools.sandbox import SandboxViolation, sandboxed_path
from coterie.tools.schedule import ScheduleWakeupTool, last_wakeup
from coterie.tools.search import GlobTool, GrepTool
from coterie.tools.selection import ListError, split_list, tool_choice, tool_names
from coterie.tools.skill import Skill, SkillTool
from coterie.tools.structured import (
    STRUCTURED_OUTPUT,
    SchemaError,
    StructuredOutputTool,
    check_schema,
    load_schema,
)
from coterie.tools.task import (
    SUBAGENT_TYPES,
    CustomType,
    SubagentType,
    TaskTool,
    UnknownSubagentType,
    custom_registry,
    subagent_registry,
)
from coterie.tools.team import (
    BROADCAST,
    ApprovePlanTool,
    MergeTaskTool,
    SendMessageTool,
    TaskCreateTool,
    TaskGetTool,
    TaskListTool,
    TaskUpdateTool,
)
from coterie.tools.todo import TodoWriteTool, todo_reminder

__all__ = [
    "ListError",
    "split_list",
    "tool_choice",
    "tool_names",
    "BUILTIN_TOOLS",
    "Access",
    "Capabilities",
    "Effect",
    "Need",
    "PathInput",
    "Provides",
    "SubagentType",
    "UnknownSubagentType",
    "builtin_registry",
    "builtin_tools",
    "subagent_registry",
    "ScheduleWakeupTool",
    "last_wakeup",
    "ApprovePlanTool",
    "MergeTaskTool",
    "SUBAGENT_TYPES",
    "TaskTool",
    "BROADCAST",
    "Answer",
    "Asker",
    "Suggestion",
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
    "ShellSandbox",
    "ToolContext",
    "ToolRegistry",
    "ToolSource",
    "ToolResult",
    "UnknownTool",
    "WriteTool",
    "Bubblewrap",
    "NetworkSettings",
    "SandboxError",
    "SandboxSettings",
    "SandboxSettingsError",
    "probe_sandbox",
    "add_team_tools",
    "default_registry",
    "execute_tool_call",
    "load_settings",
    "parse_rule",
    "sandboxed_path",
    "team_tools",
    "todo_reminder",
    "CustomType",
    "NarrowedGate",
    "Skill",
    "SkillTool",
    "custom_registry",
    "STRUCTURED_OUTPUT",
    "SchemaError",
    "StructuredOutputTool",
    "check_schema",
    "load_schema",
]
