"""The workspace sandbox and the tools' own walk: resolution, refusal, no-escape properties."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import trio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from coterie.tools import (
    EditTool,
    ReadTool,
    SandboxViolation,
    Tool,
    ToolContext,
    WriteTool,
    sandboxed_path,
)
from coterie.tools._base import FileStamp
from coterie.tools._dirfd import resolve
from coterie.tools.sandbox import absolute_path, resolve_path
from tests.strategies import path_spellings


def test_relative_paths_resolve_against_the_workspace(ctx: ToolContext, workspace: Path) -> None:
    assert sandboxed_path("a/b.txt", ctx) == workspace / "a/b.txt"


def test_dot_dot_inside_the_workspace_is_fine(ctx: ToolContext, workspace: Path) -> None:
    assert sandboxed_path("a/../b.txt", ctx) == workspace / "b.txt"


def test_the_workspace_itself_is_inside(ctx: ToolContext, workspace: Path) -> None:
    assert sandboxed_path(".", ctx) == workspace


@pytest.mark.parametrize("spelling", ["../x", "../ws2/x", "/etc/passwd", "~/x", "//etc/passwd"])
def test_paths_outside_are_refused(ctx: ToolContext, spelling: str) -> None:
    with pytest.raises(SandboxViolation, match="outside the workspace"):
        sandboxed_path(spelling, ctx)


def test_a_sibling_with_a_common_prefix_is_outside(ctx: ToolContext, workspace: Path) -> None:
    """``/tmp/ws2`` starts with ``/tmp/ws`` but is not inside it."""
    with pytest.raises(SandboxViolation):
        sandboxed_path(str(workspace) + "2/x", ctx)


def test_a_symlinked_directory_leading_out_is_refused(
    ctx: ToolContext, workspace: Path, outside: Path
) -> None:
    (workspace / "out").symlink_to(outside)
    with pytest.raises(SandboxViolation):
        sandboxed_path("out/new/deeper.txt", ctx)


def test_a_dangling_symlink_leading_out_is_refused(
    ctx: ToolContext, workspace: Path, outside: Path
) -> None:
    (workspace / "d").symlink_to(outside / "not-yet")
    with pytest.raises(SandboxViolation):
        sandboxed_path("d", ctx)


def test_a_symlink_within_the_workspace_resolves_to_its_target(
    ctx: ToolContext, workspace: Path
) -> None:
    (workspace / "real").mkdir()
    (workspace / "alias").symlink_to(workspace / "real")
    assert sandboxed_path("alias/f.txt", ctx) == workspace / "real/f.txt"


def test_added_directories_are_inside(ctx: ToolContext, outside: Path) -> None:
    ctx.extra_dirs.append(outside)
    assert sandboxed_path(str(outside / "f"), ctx) == outside / "f"


@pytest.mark.parametrize("bad", ["", "   ", "a\0b"])
def test_unusable_paths_are_refused(ctx: ToolContext, bad: str) -> None:
    with pytest.raises(SandboxViolation):
        sandboxed_path(bad, ctx)


def test_the_message_says_where_it_resolved(ctx: ToolContext, workspace: Path) -> None:
    with pytest.raises(SandboxViolation) as info:
        sandboxed_path("../escape.txt", ctx)
    assert str(workspace.parent / "escape.txt") in str(info.value)


# -- properties ----------------------------------------------------------------


def _outside_state(base: Path, ws: Path) -> list[tuple[str, bytes]]:
    state = []
    for dirpath, dirnames, filenames in os.walk(base):
        if Path(dirpath) == base:
            dirnames.remove("ws")
        for name in filenames:
            path = Path(dirpath, name)
            state.append((str(path), path.read_bytes()))
    return sorted(state)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_no_spelling_resolves_outside(tree: tuple[Path, Path, Path], data: st.DataObject) -> None:
    """Whatever the spelling, an accepted path really lies inside the workspace."""
    base, ws, _ = tree
    spelling = data.draw(path_spellings(str(ws), str(base)))
    ctx = ToolContext(workspace=ws)
    try:
        path = sandboxed_path(spelling, ctx)
    except SandboxViolation:
        return
    assert os.path.realpath(path) == str(path)
    assert path == ws or ws in path.parents


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), use_edit=st.booleans())
def test_write_and_edit_never_change_anything_outside(
    tree: tuple[Path, Path, Path], data: st.DataObject, use_edit: bool
) -> None:
    """Running the real tools on any spelling leaves everything outside untouched."""
    base, ws, outside = tree
    spelling = data.draw(path_spellings(str(ws), str(base)))
    before = _outside_state(base, ws)
    ctx = ToolContext(workspace=ws)
    # Even a stamp the agent should not have cannot open the way out.
    existing = outside / "existing.txt"
    ctx.read_files[existing] = FileStamp(existing.stat().st_mtime_ns, existing.stat().st_size)
    tool: Tool
    if use_edit:
        old = data.draw(st.sampled_from(["", "keep"]))
        tool, input = EditTool(), {"file_path": spelling, "old_string": old, "new_string": "x"}
    else:
        tool, input = WriteTool(), {"file_path": spelling, "content": "pwned"}
    trio.run(tool.run, input, ctx)
    assert _outside_state(base, ws) == before


def test_resolve_path_expands_the_home_directory(tree: tuple[Path, Path, Path]) -> None:
    base, ws, _ = tree
    assert resolve_path("~/f", ws) == base / "home/f"


# -- the tools' own walk (coterie.tools._dirfd) --------------------------------


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_the_tools_walk_agrees_with_the_policy_s_view(
    tree: tuple[Path, Path, Path], data: st.DataObject
) -> None:
    """What the tools open is what the policy judged (realpath), or they refuse it."""
    base, ws, _ = tree
    spelling = data.draw(path_spellings(str(ws), str(base)))
    try:
        absolute = absolute_path(spelling, ws)
        with resolve(absolute, [ws], raw=spelling) as target:
            opened = target.path
    except (SandboxViolation, OSError):
        return
    assert opened == resolve_path(spelling, ws)
    assert opened == ws or ws in opened.parents


async def test_write_through_an_inside_symlinked_directory_writes_its_target(
    ctx: ToolContext, workspace: Path
) -> None:
    (workspace / "real").mkdir()
    (workspace / "alias").symlink_to("real")  # relative, as git checks them out
    result = await WriteTool().run({"file_path": "alias/new/f.txt", "content": "x"}, ctx)
    assert not result.is_error, result.content
    assert (workspace / "real/new/f.txt").read_text() == "x"
    assert (workspace / "alias").is_symlink()


async def test_write_through_an_inside_symlinked_file_keeps_the_link(
    ctx: ToolContext, workspace: Path
) -> None:
    (workspace / "target.txt").write_text("old")
    (workspace / "link.txt").symlink_to(workspace / "target.txt")
    await ReadTool().run({"file_path": "link.txt"}, ctx)
    result = await WriteTool().run({"file_path": "link.txt", "content": "new"}, ctx)
    assert not result.is_error, result.content
    assert (workspace / "link.txt").is_symlink()
    assert (workspace / "target.txt").read_text() == "new"


async def test_a_symlink_loop_is_an_error_not_a_hang(ctx: ToolContext, workspace: Path) -> None:
    (workspace / "a").symlink_to("b")
    (workspace / "b").symlink_to("a")
    for tool, input in [
        (ReadTool(), {"file_path": "a"}),
        (WriteTool(), {"file_path": "a/x", "content": "x"}),
    ]:
        result = await tool.run(input, ctx)
        assert result.is_error
        assert "symbolic links" in result.content


async def test_a_walk_through_outside_and_back_is_refused(
    ctx: ToolContext, workspace: Path, outside: Path
) -> None:
    """ws/l -> ../outside/../ws/sub: the walk may not enter a directory outside on its way."""
    (workspace / "sub").mkdir()
    (workspace / "l").symlink_to(f"../{outside.name}/../{workspace.name}/sub")
    result = await WriteTool().run({"file_path": "l/f.txt", "content": "x"}, ctx)
    assert result.is_error
    assert "outside the workspace" in result.content


async def test_a_dangling_symlink_inside_creates_its_target(
    ctx: ToolContext, workspace: Path
) -> None:
    (workspace / "later.txt").symlink_to("made.txt")
    result = await WriteTool().run({"file_path": "later.txt", "content": "x"}, ctx)
    assert not result.is_error, result.content
    assert (workspace / "made.txt").read_text() == "x"


async def test_missing_directories_are_not_made_outside(
    ctx: ToolContext, workspace: Path, outside: Path
) -> None:
    (workspace / "out").symlink_to(outside)
    await WriteTool().run({"file_path": "out/a/b/c.txt", "content": "x"}, ctx)
    await EditTool().run({"file_path": "out/n/e.txt", "old_string": "", "new_string": "x"}, ctx)
    assert list(outside.iterdir()) == []
