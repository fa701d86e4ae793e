"""The public surface of coterie.tools, as trio's test_exports does it."""

from __future__ import annotations

import inspect

import pytest

import coterie.tools
import coterie.tools.permissions

MODULES = [coterie.tools, coterie.tools.permissions]


@pytest.mark.parametrize("module", MODULES)
def test_all_names_exist(module: object) -> None:
    for name in module.__all__:  # type: ignore[attr-defined]
        assert hasattr(module, name), name


TOOLS_SURFACE = {
    # the interface, the registry and the one call the loop makes
    "Tool", "ToolContext", "ToolResult", "FileStamp", "TeamContext", "ToolRegistry",
    "Authorizer", "UnknownTool", "execute_tool_call",
    # capabilities and the catalogue chosen by them
    "Access", "Capabilities", "Effect", "Need", "PathInput", "BUILTIN_TOOLS", "Provides",
    "builtin_registry", "builtin_tools", "default_registry", "team_tools", "add_team_tools",
    "SUBAGENT_TYPES", "SubagentType", "UnknownSubagentType", "subagent_registry",
    # the built-in tools
    "BashTool", "ReadTool", "WriteTool", "EditTool", "GlobTool", "GrepTool", "TodoWriteTool",
    "TaskCreateTool", "TaskUpdateTool", "TaskListTool", "TaskGetTool", "SendMessageTool",
    "ApprovePlanTool", "TaskTool", "ScheduleWakeupTool", "BROADCAST", "last_wakeup",
    "todo_reminder",
    # permissions and the sandbox
    "Answer", "Asker", "Decision", "Mode", "PermissionGate", "PermissionMode",
    "PermissionPolicy", "PermissionSettings", "Rule", "RuleError", "SettingsError",
    "load_settings", "parse_rule", "SandboxViolation", "sandboxed_path",
}  # fmt: skip

PERMISSIONS_SURFACE = {
    "Answer", "Asker", "Behavior", "Decision", "MODES", "Mode", "PATH_RULE_KINDS",
    "PermissionGate", "PermissionMode", "PermissionPolicy", "PermissionSettings", "Rule",
    "RuleError", "SettingsError", "ShellAnalysis", "USER_SETTINGS", "analyze", "command_views",
    "hard_deny_reason", "load_settings", "load_settings_file", "merge_settings", "parse_rule",
}  # fmt: skip


def test_the_public_surface() -> None:
    assert set(coterie.tools.__all__) == TOOLS_SURFACE
    assert len(coterie.tools.__all__) == len(TOOLS_SURFACE)


def test_the_permissions_surface() -> None:
    """No name list of tools is public any more (EDIT_TOOLS, READ_TOOLS are gone)."""
    assert set(coterie.tools.permissions.__all__) == PERMISSIONS_SURFACE


@pytest.mark.parametrize("module", MODULES)
def test_every_public_class_and_function_has_a_docstring(module: object) -> None:
    for name in module.__all__:  # type: ignore[attr-defined]
        obj = getattr(module, name)
        if inspect.isclass(obj) or inspect.isfunction(obj):
            assert obj.__doc__, name
