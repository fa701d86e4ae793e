"""Skills as ``/name`` commands, and ``@dir`` listings, in the expansion (no I/O).

As Claude Code 2.1 sends them (measured): ``/hook-dev some args`` is the line
naming the skill's folder, then its body with ``$ARGUMENTS`` in place; a skill
with ``user-invocable: false`` is no command; a skill shadows a command of
its name. A directory named with ``@`` is listed by the names of its entries.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from coterie.extensions import CommandDefinition, CommandError, expand
from coterie.extensions.commands import invocable
from coterie.extensions.skills import skill_from_folder

if TYPE_CHECKING:
    from pathlib import Path

    from coterie.extensions import SkillDefinition


def make(tmp_path: Path, folder: str, text: str) -> SkillDefinition:
    path = tmp_path / folder
    path.mkdir(parents=True, exist_ok=True)
    (path / "SKILL.md").write_text(text)
    return skill_from_folder(path, "project")


def test_a_skill_is_a_command_with_its_folder_and_arguments(tmp_path: Path) -> None:
    hook = make(tmp_path, "hook-dev", "---\nname: Hook Development\ndescription: d\n---\n"
                "# Hooks\n\nARGS=$ARGUMENTS\n")  # fmt: skip
    expansion = expand("/hook-dev some args here", {}, {"hook-dev": hook})
    assert expansion is not None
    assert expansion.prompt == (
        f"Base directory for this skill: {tmp_path / 'hook-dev'}\n\n# Hooks\n\nARGS=some args here"
    )
    assert expansion.command.skill


def test_a_skill_s_lines_run_under_its_allowed_tools(tmp_path: Path) -> None:
    text = "---\ndescription: d\nallowed-tools: Bash(git status:*)\n---\nNow: !`git status`\n"
    found = make(tmp_path, "git-state", text)
    expansion = expand("/git-state", {}, {"git-state": found})
    assert expansion is not None
    assert [line.command for line in expansion.shell] == ["git status"]
    assert expansion.command.allowed_tools == ("Bash(git status:*)",)


def test_a_skill_shadows_a_command_and_a_private_skill_is_no_command(tmp_path: Path) -> None:
    command = CommandDefinition(name="review", body="the command's")
    review = make(tmp_path, "review", "---\ndescription: d\n---\nthe skill's\n")
    private = make(tmp_path, "private", "---\ndescription: d\nuser-invocable: false\n---\nB\n")
    skills = {"review": review, "private": private}
    assert sorted(invocable({"review": command}, skills)) == ["review"]
    expansion = expand("/review", {"review": command}, skills)
    assert expansion is not None
    assert expansion.prompt.endswith("the skill's")
    with pytest.raises(CommandError, match="unknown command /private"):
        expand("/private", {"review": command}, skills)


def test_without_skills_commands_expand_as_before(tmp_path: Path) -> None:
    command = CommandDefinition(name="hello", body="Hi $ARGUMENTS")
    expansion = expand("/hello you", {"hello": command})
    assert expansion is not None
    assert expansion.prompt == "Hi you"


def test_a_listed_directory_is_attached_by_its_entries_names() -> None:
    command = CommandDefinition(name="see", body="Look at @sub and @notes.md please.")
    expansion = expand("/see", {"see": command})
    assert expansion is not None
    assert expansion.files == ("sub", "notes.md")
    prompt = expansion.completed((), [("notes.md", "N")], [("sub", ["b.md", ".hidden", "a"])])
    assert prompt == (
        '<attached-file path="notes.md">\nN\n</attached-file>\n'
        '<attached-directory path="sub">\n.hidden\na\nb.md\n</attached-directory>\n'
        "Look at @sub and @notes.md please."
    )


def test_arguments_a_skill_does_not_place_follow_it(tmp_path: Path) -> None:
    plain = make(tmp_path, "nodesc", "---\nname: nodesc\n---\n\nFirst line.\n")
    expansion = expand("/nodesc foo bar", {}, {"nodesc": plain})
    assert expansion is not None
    assert expansion.prompt.endswith("First line.\n\nARGUMENTS: foo bar")
