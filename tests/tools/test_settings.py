"""Loading and merging .claude settings files."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest

from coterie.tools.permissions import (
    PermissionPolicy,
    PermissionSettings,
    SettingsError,
    load_settings,
    load_settings_file,
)

if TYPE_CHECKING:
    from pathlib import Path


def write_settings(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


@pytest.fixture
def user_file(tmp_path: Path) -> Path:
    """Where the user settings live in these tests (never the real ~/.claude)."""
    return tmp_path / "home" / ".claude" / "settings.json"


def test_no_files_means_empty_settings(workspace: Path, user_file: Path) -> None:
    settings = load_settings(workspace, user_settings=user_file)
    assert settings.allow == settings.ask == settings.deny == ()
    assert settings.default_mode is None
    assert settings.files == ()


def test_lists_merge_and_the_most_local_mode_wins(workspace: Path, user_file: Path) -> None:
    write_settings(
        user_file,
        {"permissions": {"allow": ["Bash(ls *)"], "defaultMode": "plan"}, "model": "x"},
    )
    write_settings(
        workspace / ".claude/settings.json",
        {"permissions": {"deny": ["Read(./secrets/**)"], "defaultMode": "acceptEdits"}},
    )
    write_settings(
        workspace / ".claude/settings.local.json",
        {"permissions": {"allow": ["Bash(npm test)"], "ask": ["Bash(git push *)"]}},
    )
    settings = load_settings(workspace, user_settings=user_file, trusted=True)
    assert [r.text for r in settings.allow] == ["Bash(ls *)", "Bash(npm test)"]
    assert [r.text for r in settings.deny] == ["Read(./secrets/**)"]
    assert [r.text for r in settings.ask] == ["Bash(git push *)"]
    assert settings.default_mode == "acceptEdits"
    assert settings.files == (
        user_file,
        workspace / ".claude/settings.json",
        workspace / ".claude/settings.local.json",
    )


def test_local_mode_beats_project_mode(workspace: Path) -> None:
    write_settings(workspace / ".claude/settings.json", {"permissions": {"defaultMode": "plan"}})
    write_settings(
        workspace / ".claude/settings.local.json", {"permissions": {"defaultMode": "dontAsk"}}
    )
    assert load_settings(workspace, user_settings=None, trusted=True).default_mode == "dontAsk"


def test_rules_remember_their_file_and_project_root(workspace: Path) -> None:
    path = write_settings(workspace / ".claude/settings.json", {"permissions": {"deny": ["Edit"]}})
    rule = load_settings(workspace, user_settings=None).deny[0]
    assert rule.source == str(path)
    assert rule.root == workspace


def test_additional_directories(workspace: Path, tmp_path: Path) -> None:
    (tmp_path / "shared").mkdir()
    write_settings(
        workspace / ".claude/settings.json",
        {"permissions": {"additionalDirectories": ["../shared", str(tmp_path / "abs")]}},
    )
    dirs = load_settings(workspace, user_settings=None, trusted=True).additional_directories
    assert dirs == ((tmp_path / "shared").resolve(), (tmp_path / "abs").resolve())


def test_the_same_file_is_not_loaded_twice(tmp_path: Path) -> None:
    """A workspace that is the home directory has one settings.json, not two."""
    path = write_settings(tmp_path / ".claude/settings.json", {"permissions": {"allow": ["Read"]}})
    settings = load_settings(tmp_path, user_settings=path)
    assert len(settings.allow) == 1


def test_policy_from_settings_uses_the_mode_unless_overridden(workspace: Path) -> None:
    write_settings(workspace / ".claude/settings.json", {"permissions": {"defaultMode": "plan"}})
    settings = load_settings(workspace, user_settings=None, trusted=True)
    assert PermissionPolicy.from_settings(settings).mode == "plan"
    assert PermissionPolicy.from_settings(settings, mode="acceptEdits").mode == "acceptEdits"
    assert PermissionPolicy.from_settings(PermissionSettings()).mode == "default"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "not valid JSON"),
        ("[]", "top level must be a JSON object"),
        ({"permissions": []}, "'permissions' must be an object"),
        ({"permissions": {"allow": "Bash"}}, "permissions.allow must be a list of strings"),
        ({"permissions": {"deny": [1]}}, "permissions.deny must be a list of strings"),
        ({"permissions": {"allow": ["Bash("]}}, "permissions.allow"),
        ({"permissions": {"defaultMode": "yolo"}}, "defaultMode is 'yolo'"),
        ({"permissions": {"additionalDirectories": "x"}}, "additionalDirectories must be a list"),
    ],
)
def test_malformed_settings_name_the_file(workspace: Path, content: Any, message: str) -> None:
    path = write_settings(workspace / ".claude/settings.local.json", content)
    with pytest.raises(SettingsError) as info:
        load_settings(workspace, user_settings=None)
    assert str(path) in str(info.value)
    assert message in str(info.value)


def test_json_errors_give_the_position(workspace: Path) -> None:
    path = write_settings(workspace / ".claude/settings.json", '{\n  "permissions": ,\n}')
    with pytest.raises(SettingsError, match="line 2"):
        load_settings_file(path)


def test_unknown_keys_are_ignored(workspace: Path) -> None:
    write_settings(
        workspace / ".claude/settings.json",
        {"env": {"X": "1"}, "permissions": {"disableBypassPermissionsMode": "disable"}},
    )
    assert load_settings(workspace, user_settings=None).files


def test_an_unknown_mode_from_the_command_line_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="unknown permission mode 'yolo'"):
        PermissionPolicy.from_settings(PermissionSettings(), mode="yolo")
