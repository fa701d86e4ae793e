"""Issue 24, findings 2 to 5: one rule for configuration that acts later.

``.claude`` (all of it), ``.mcp.json`` and ``.git`` are protected at ANY depth of the
workspace and the additional directories, for the file tools and every Bash write,
in every mode; a Bash write through a hard link is asked. ``CLAUDE.md`` stays
writable. The file tools replace a file by rename, so they never write through a link.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import pytest
import trio
from hypothesis import given
from hypothesis import strategies as st

from coterie.tools import EditTool, PermissionPolicy, ReadTool, ToolContext, WriteTool
from coterie.tools.permissions import MODES, Mode
from coterie.tools.permissions.places import ACTS_LATER, acts_later
from coterie.tools.permissions.protect import _braces
from tests.tools.test_shell_words import TOOLS, decide

if TYPE_CHECKING:
    from pathlib import Path


@pytest.fixture
def ws(workspace: Path) -> Path:
    (workspace / ".git").mkdir()
    (workspace / ".git" / "config").write_text("[core]\n")
    (workspace / "sub" / ".claude").mkdir(parents=True)
    (workspace / "docs").mkdir()
    (workspace / "docs" / "a.md").write_text("a\n")
    return workspace


def file_tool(ws: Path, path: str, mode: Mode = "acceptEdits") -> tuple[str, str | None]:
    policy = PermissionPolicy(mode=mode)
    input: dict[str, Any] = {"file_path": path, "content": ""}
    decision = policy.check(TOOLS["Write"], input, ToolContext(workspace=ws))
    return decision.behavior, decision.rule


CONFIG = [
    "sub/.claude/settings.json",
    "a/b/.claude/settings.local.json",
    ".claude/skills/x/SKILL.md",
    ".claude/commands/c.md",
    ".claude/agents/a.md",
    ".claude/output-styles/o.md",
    ".claude/hooks/h.sh",
    ".mcp.json",
    "sub/.mcp.json",
    "vendor/dep/.git/config",
    "wt/.git",
    "sub/.Claude/settings.json",
]


@pytest.mark.parametrize("path", CONFIG)
@pytest.mark.parametrize("mode", [m for m in MODES if m != "plan"])
def test_the_file_tools_ask_for_configuration_at_any_depth(ws: Path, path: str, mode: Mode) -> None:
    """Findings 3, 4, 5: bypassPermissions included; dontAsk (headless-like) denies."""
    expected = "deny" if mode == "dontAsk" else "ask"
    assert file_tool(ws, path, mode) == (expected, "protected-path")


@pytest.mark.parametrize("path", CONFIG)
def test_bash_asks_for_configuration_at_any_depth(ws: Path, path: str) -> None:
    for command in (f"echo x > {path}", f"tee -a {path}", f"cp docs/a.md {path}", f"rm {path}"):
        assert decide(command, ws, mode="bypassPermissions") == ("ask", "protected-path"), command


@pytest.mark.parametrize("path", ["CLAUDE.md", "sub/CLAUDE.md", ".claude/CLAUDE.md", "docs/b.md"])
def test_memory_files_stay_writable(ws: Path, path: str) -> None:
    """CLAUDE.md is prompt, not permission."""
    assert file_tool(ws, path) == ("allow", None)
    assert decide(f"echo x > {path}", ws, mode="acceptEdits") == ("allow", None)


@pytest.mark.parametrize(
    "command",
    [
        "rm -rf */",
        "rm -rf *",
        "rm -rf sub",
        "mv sub gone",
        "cp x */.claude/",
        "cp x */.claude/settings.json",
        "cp x sub/.c*",
        "echo x > {.,a}mcp.json",
        "echo x > sub/{.claude,b}/settings.json",
        "mkdir -p sub/x/../.claude",
        "mkdir -p new/.claude/../x",
        "cp -r docs/. sub",
        "echo x > .[m]cp.json",
        "echo x > .mcp.jso?",
        "chmod -R u+w sub",
    ],
)
def test_globs_braces_and_directories_that_may_reach_configuration_ask(
    ws: Path, command: str
) -> None:
    assert decide(command, ws, mode="acceptEdits") == ("ask", "protected-path")


@pytest.mark.parametrize(
    "command", ["rm -rf docs/*", "rm -rf docs", "echo x > docs/{a,b}.md", "cp x docs/", "rm *.md"]
)
def test_writes_that_cannot_reach_configuration_pass(ws: Path, command: str) -> None:
    assert decide(command, ws, mode="acceptEdits") == ("allow", None)


def test_a_write_through_a_hard_link_asks(ws: Path) -> None:
    """Finding 2: `cp -l .git/config gc` then `>> gc` wrote .git/config."""
    os.link(ws / ".git" / "config", ws / "gc")
    for command in ("echo x >> gc", "tee -a gc", "cp docs/a.md gc", "echo x > g?"):
        assert decide(command, ws, mode="bypassPermissions") == ("ask", "protected-path"), command
    assert decide("echo x >> docs/a.md", ws, mode="acceptEdits") == ("allow", None)


def test_an_additional_directory_is_protected_the_same(ws: Path, tmp_path: Path) -> None:
    extra = tmp_path / "extra"
    (extra / "p" / ".claude").mkdir(parents=True)
    assert decide(f"echo x > {extra}/p/.claude/s.json", ws, extra=(extra,)) == (
        "ask",
        "protected-path",
    )


async def test_the_file_tools_replace_a_linked_file_without_writing_through_it(
    ws: Path,
) -> None:
    """Write and Edit rename a new file over the name, which breaks the link: the
    other name (here .git/config) keeps its content, so no question is needed."""
    os.link(ws / ".git" / "config", ws / "gc")
    ctx = ToolContext(workspace=ws)
    assert file_tool(ws, "gc") == ("allow", None)
    await ReadTool().run({"file_path": "gc"}, ctx)
    edit = {"file_path": "gc", "old_string": "[core]", "new_string": "[core]\n\tfsmonitor = x"}
    assert not (await EditTool().run(edit, ctx)).is_error
    assert not (await WriteTool().run({"file_path": "gc", "content": "y"}, ctx)).is_error
    assert (ws / ".git" / "config").read_text() == "[core]\n"
    assert (ws / ".git" / "config").stat().st_nlink == 1
    await trio.lowlevel.checkpoint()


_NAMES = st.sampled_from(["a", "b", "CLAUDE.md", "x.json", *ACTS_LATER, ".CLAUDE", ".gitx"])


@given(st.lists(_NAMES, min_size=1, max_size=5))
def test_acts_later_is_any_component_named_so(parts: list[str]) -> None:
    folded = [p.casefold() for p in parts]
    first = next((i for i, p in enumerate(folded) if p in ACTS_LATER), None)
    memory = first is not None and folded[first:] == [".claude", "claude.md"]
    assert acts_later(parts) == (first is not None and not memory)


@given(st.lists(st.sampled_from(["a", ".", "c", ",", "{", "}", ".."]), max_size=12).map("".join))
def test_brace_expansion_agrees_with_bash(word: str) -> None:
    """Every word bash makes of a brace expression is among those coterie judges."""
    import subprocess

    if "'" in word:
        return
    done = subprocess.run(
        ["bash", "-c", f"printf '%s\\n' {word}"], capture_output=True, text=True, check=False
    )
    ours = _braces(word)
    if ours is None or done.returncode != 0:
        return
    assert set(done.stdout.splitlines()) <= set(ours)
