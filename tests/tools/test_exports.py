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


def test_the_public_surface() -> None:
    assert set(coterie.tools.__all__) >= {
        "Tool",
        "ToolContext",
        "ToolResult",
        "FileStamp",
        "ToolRegistry",
        "execute_tool_call",
        "default_registry",
        "PermissionGate",
        "PermissionPolicy",
        "Decision",
        "Asker",
        "todo_reminder",
    }


@pytest.mark.parametrize("module", MODULES)
def test_every_public_class_and_function_has_a_docstring(module: object) -> None:
    for name in module.__all__:  # type: ignore[attr-defined]
        obj = getattr(module, name)
        if inspect.isclass(obj) or inspect.isfunction(obj):
            assert obj.__doc__, name
