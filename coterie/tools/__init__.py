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

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from coterie.tools._base import (
        FileStamp,
        ShellSandbox,
        TeamContext,
        Tool,
        ToolContext,
        ToolResult,
    )
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
    from coterie.tools.notebook import NotebookEditTool
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
    "NotebookEditTool",
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


#: Where each public name is defined. Imported on first use (PEP 562), so that one
#: light module of the package can be imported by its full dotted path (the
#: command line's parser does) without loading the whole package.
_HOMES = {
    "FileStamp": "coterie.tools._base",
    "ShellSandbox": "coterie.tools._base",
    "TeamContext": "coterie.tools._base",
    "Tool": "coterie.tools._base",
    "ToolContext": "coterie.tools._base",
    "ToolResult": "coterie.tools._base",
    "Authorizer": "coterie.tools._registry",
    "ToolRegistry": "coterie.tools._registry",
    "ToolSource": "coterie.tools._registry",
    "UnknownTool": "coterie.tools._registry",
    "execute_tool_call": "coterie.tools._registry",
    "BashTool": "coterie.tools.bash",
    "Access": "coterie.tools.capabilities",
    "Capabilities": "coterie.tools.capabilities",
    "Effect": "coterie.tools.capabilities",
    "Need": "coterie.tools.capabilities",
    "PathInput": "coterie.tools.capabilities",
    "BUILTIN_TOOLS": "coterie.tools.catalogue",
    "Provides": "coterie.tools.catalogue",
    "add_team_tools": "coterie.tools.catalogue",
    "builtin_registry": "coterie.tools.catalogue",
    "builtin_tools": "coterie.tools.catalogue",
    "default_registry": "coterie.tools.catalogue",
    "team_tools": "coterie.tools.catalogue",
    "EditTool": "coterie.tools.files",
    "NotebookEditTool": "coterie.tools.notebook",
    "ReadTool": "coterie.tools.files",
    "WriteTool": "coterie.tools.files",
    "Bubblewrap": "coterie.tools.ossandbox",
    "NetworkSettings": "coterie.tools.ossandbox",
    "SandboxError": "coterie.tools.ossandbox",
    "SandboxSettings": "coterie.tools.ossandbox",
    "SandboxSettingsError": "coterie.tools.ossandbox",
    "probe_sandbox": "coterie.tools.ossandbox:probe",
    "Answer": "coterie.tools.permissions",
    "Asker": "coterie.tools.permissions",
    "Decision": "coterie.tools.permissions",
    "Mode": "coterie.tools.permissions",
    "NarrowedGate": "coterie.tools.permissions",
    "PermissionGate": "coterie.tools.permissions",
    "PermissionMode": "coterie.tools.permissions",
    "PermissionPolicy": "coterie.tools.permissions",
    "PermissionSettings": "coterie.tools.permissions",
    "Rule": "coterie.tools.permissions",
    "RuleError": "coterie.tools.permissions",
    "SettingsError": "coterie.tools.permissions",
    "Suggestion": "coterie.tools.permissions",
    "load_settings": "coterie.tools.permissions",
    "parse_rule": "coterie.tools.permissions",
    "SandboxViolation": "coterie.tools.sandbox",
    "sandboxed_path": "coterie.tools.sandbox",
    "ScheduleWakeupTool": "coterie.tools.schedule",
    "last_wakeup": "coterie.tools.schedule",
    "GlobTool": "coterie.tools.search",
    "GrepTool": "coterie.tools.search",
    "ListError": "coterie.tools.selection",
    "split_list": "coterie.tools.selection",
    "tool_choice": "coterie.tools.selection",
    "tool_names": "coterie.tools.selection",
    "Skill": "coterie.tools.skill",
    "SkillTool": "coterie.tools.skill",
    "STRUCTURED_OUTPUT": "coterie.tools.structured",
    "SchemaError": "coterie.tools.structured",
    "StructuredOutputTool": "coterie.tools.structured",
    "check_schema": "coterie.tools.structured",
    "load_schema": "coterie.tools.structured",
    "SUBAGENT_TYPES": "coterie.tools.task",
    "CustomType": "coterie.tools.task",
    "SubagentType": "coterie.tools.task",
    "TaskTool": "coterie.tools.task",
    "UnknownSubagentType": "coterie.tools.task",
    "custom_registry": "coterie.tools.task",
    "subagent_registry": "coterie.tools.task",
    "BROADCAST": "coterie.tools.team",
    "ApprovePlanTool": "coterie.tools.team",
    "MergeTaskTool": "coterie.tools.team",
    "SendMessageTool": "coterie.tools.team",
    "TaskCreateTool": "coterie.tools.team",
    "TaskGetTool": "coterie.tools.team",
    "TaskListTool": "coterie.tools.team",
    "TaskUpdateTool": "coterie.tools.team",
    "TodoWriteTool": "coterie.tools.todo",
    "todo_reminder": "coterie.tools.todo",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, _, attribute = home.partition(":")
    value = getattr(importlib.import_module(module), attribute or name)
    globals()[name] = value  # once is enough
    return value
