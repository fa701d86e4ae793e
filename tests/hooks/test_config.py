"""The `hooks` key of the settings files: parsed whole, refused with the file named."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest

from coterie.hooks import Handler, HookConfig, HooksConfigError, load_hooks

if TYPE_CHECKING:
    from pathlib import Path


def write(path: Path, hooks: Any) -> Path:
    path.write_text(json.dumps({"hooks": hooks}))
    return path


def command(text: str, **extra: Any) -> dict[str, Any]:
    return {"type": "command", "command": text, **extra}


def test_groups_and_handlers_are_read(tmp_path: Path) -> None:
    hooks = {"PreToolUse": [{"matcher": "Bash", "hooks": [command("a", timeout=5)]}]}
    config = load_hooks([(write(tmp_path / "s.json", hooks), True)])
    assert config.handlers("PreToolUse", "Bash") == (Handler("command", "a", 5.0),)
    assert config.handlers("PreToolUse", "Write") == ()


def test_identical_handlers_run_once(tmp_path: Path) -> None:
    hooks = {
        "PostToolUse": [{"hooks": [command("a")]}, {"matcher": "Edit", "hooks": [command("a")]}]
    }
    config = load_hooks([(write(tmp_path / "s.json", hooks), True)])
    assert len(config.handlers("PostToolUse", "Edit")) == 1


def test_a_file_that_does_not_apply_is_only_noted(tmp_path: Path) -> None:
    path = write(tmp_path / "s.json", {"Stop": [{"hooks": [command("a")]}]})
    config = load_hooks([(path, False)])
    assert (config.groups, config.ignored_files) == ((), (path,))


def test_events_without_a_matcher_take_every_group(tmp_path: Path) -> None:
    hooks = {"Stop": [{"matcher": "whatever", "hooks": [command("a")]}]}
    assert load_hooks([(write(tmp_path / "s.json", hooks), True)]).handlers("Stop")


@pytest.mark.parametrize(
    ("hooks", "message"),
    [
        ([], "hooks: must be an object"),
        ({"PreToolUse": {}}, "hooks.PreToolUse: must be a list"),
        ({"Stop": [{"hooks": []}]}, "hooks.Stop[0].hooks: must be a non-empty list"),
        ({"Stop": [{"hook": [command("a")]}]}, "unknown key 'hook'"),
        ({"Stop": [{"hooks": [{"type": "mcp_tool"}]}]}, "'mcp_tool' is not supported"),
        ({"Stop": [{"hooks": [command("")]}]}, "hooks.Stop[0].hooks[0].command: must be"),
        ({"Stop": [{"hooks": [command("a", timeout=0)]}]}, "timeout: must be a positive"),
        ({"PreToolUse": [{"matcher": "(", "hooks": [command("a")]}]}, "invalid regular"),
        ({"Stop": [{"hooks": [{"type": "http", "url": "ftp://x"}]}]}, "must be an http://"),
    ],
)
def test_a_malformed_entry_is_one_line_naming_the_file(
    tmp_path: Path, hooks: Any, message: str
) -> None:
    path = write(tmp_path / "settings.json", hooks)
    with pytest.raises(HooksConfigError) as caught:
        load_hooks([(path, True)])
    text = str(caught.value)
    assert text.startswith(f"{path}: ")
    assert message in text
    assert "\n" not in text


def test_an_event_coterie_does_not_have_is_said_once_and_never_runs(tmp_path: Path) -> None:
    """A newer Claude Code's event, or a misspelt one: a one-line notice naming the
    file, with the close match; the rest of the file's hooks still apply."""
    hooks = {"PreTooluse": [{"hooks": [command("a")]}], "Stop": [{"hooks": [command("b")]}]}
    path = write(tmp_path / "settings.json", hooks)
    config = load_hooks([(path, True)])
    (notice,) = config.notices
    assert notice.startswith(f"{path}: hooks.PreTooluse: coterie has no such event")
    assert "did you mean PreToolUse?" in notice
    assert [g.event for g in config.groups] == ["Stop"]


def test_layers_merge_in_order(tmp_path: Path) -> None:
    a = write(tmp_path / "a.json", {"Stop": [{"hooks": [command("first")]}]})
    b = write(tmp_path / "b.json", {"Stop": [{"hooks": [command("second")]}]})
    config = load_hooks([(a, True), (b, True)])
    assert [h.target for h in config.handlers("Stop")] == ["first", "second"]
    assert HookConfig().handlers("Stop") == ()
