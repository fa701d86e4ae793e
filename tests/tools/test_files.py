"""Read, Write and Edit: success and error paths, read-before-write, atomicity."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import pytest

from coterie.tools import EditTool, ReadTool, ToolContext, WriteTool

if TYPE_CHECKING:
    from pathlib import Path

read, write, edit = ReadTool(), WriteTool(), EditTool()


# -- Read --------------------------------------------------------------------


async def test_read_numbers_lines_like_cat_n(ctx: ToolContext, workspace: Path) -> None:
    (workspace / "a.txt").write_text("alpha\nbeta\n")
    result = await read.run({"file_path": "a.txt"}, ctx)
    assert not result.is_error
    assert result.content == "1\talpha\n2\tbeta"


async def test_read_accepts_absolute_paths(ctx: ToolContext, workspace: Path) -> None:
    (workspace / "a.txt").write_text("x\n")
    result = await read.run({"file_path": str(workspace / "a.txt")}, ctx)
    assert result.content == "1\tx"


async def test_read_records_a_stamp(ctx: ToolContext, workspace: Path) -> None:
    path = workspace / "a.txt"
    path.write_text("x\n")
    await read.run({"file_path": "a.txt"}, ctx)
    assert ctx.read_files[path].size == 2


async def test_read_offset_and_limit(ctx: ToolContext, workspace: Path) -> None:
    (workspace / "n.txt").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    result = await read.run({"file_path": "n.txt", "offset": 3, "limit": 2}, ctx)
    assert result.content.startswith("3\tline 3\n4\tline 4")
    assert "Showing lines 3-4 of 10" in result.content


async def test_read_defaults_to_2000_lines(ctx: ToolContext, workspace: Path) -> None:
    (workspace / "big.txt").write_text("x\n" * 2500)
    result = await read.run({"file_path": "big.txt"}, ctx)
    assert "\n2000\tx" in result.content
    assert "\n2001\t" not in result.content
    assert "Showing lines 1-2000 of 2500" in result.content


async def test_read_truncates_long_lines(ctx: ToolContext, workspace: Path) -> None:
    (workspace / "wide.txt").write_text("y" * 5000 + "\n")
    result = await read.run({"file_path": "wide.txt"}, ctx)
    assert "line truncated, 5000 characters" in result.content
    assert len(result.content) < 2100


async def test_read_offset_past_the_end_warns(ctx: ToolContext, workspace: Path) -> None:
    (workspace / "s.txt").write_text("one\n")
    result = await read.run({"file_path": "s.txt", "offset": 5}, ctx)
    assert not result.is_error
    assert "shorter than the provided offset (5). The file has 1 lines." in result.content


async def test_read_empty_file_warns(ctx: ToolContext, workspace: Path) -> None:
    (workspace / "e.txt").write_text("")
    result = await read.run({"file_path": "e.txt"}, ctx)
    assert "contents are empty" in result.content
    assert (workspace / "e.txt") in ctx.read_files


async def test_read_missing_file_is_an_error(ctx: ToolContext) -> None:
    result = await read.run({"file_path": "nope.txt"}, ctx)
    assert result.is_error
    assert "does not exist" in result.content


async def test_read_directory_is_an_error(ctx: ToolContext, workspace: Path) -> None:
    (workspace / "d").mkdir()
    result = await read.run({"file_path": "d"}, ctx)
    assert result.is_error
    assert "is a directory" in result.content


async def test_read_binary_file_is_an_error(ctx: ToolContext, workspace: Path) -> None:
    (workspace / "b.bin").write_bytes(b"\x89PNG\x00\x01\x02")
    result = await read.run({"file_path": "b.bin"}, ctx)
    assert result.is_error
    assert "binary" in result.content
    assert (workspace / "b.bin") not in ctx.read_files


async def test_read_outside_the_workspace_is_refused(ctx: ToolContext, outside: Path) -> None:
    (outside / "secret.txt").write_text("s\n")
    result = await read.run({"file_path": str(outside / "secret.txt")}, ctx)
    assert result.is_error
    assert "outside the workspace" in result.content


async def test_read_in_an_added_directory_is_allowed(ctx: ToolContext, outside: Path) -> None:
    (outside / "shared.txt").write_text("s\n")
    ctx.extra_dirs.append(outside)
    result = await read.run({"file_path": str(outside / "shared.txt")}, ctx)
    assert not result.is_error


# -- Write -------------------------------------------------------------------


async def test_write_creates_a_new_file_and_parents(ctx: ToolContext, workspace: Path) -> None:
    result = await write.run({"file_path": "sub/dir/new.txt", "content": "hello"}, ctx)
    assert not result.is_error
    assert "created" in result.content
    assert (workspace / "sub/dir/new.txt").read_text() == "hello"


async def test_write_existing_file_needs_a_read_first(ctx: ToolContext, workspace: Path) -> None:
    (workspace / "a.txt").write_text("old")
    result = await write.run({"file_path": "a.txt", "content": "new"}, ctx)
    assert result.is_error
    assert "has not been read yet" in result.content
    assert (workspace / "a.txt").read_text() == "old"


async def test_write_after_read_overwrites(ctx: ToolContext, workspace: Path) -> None:
    (workspace / "a.txt").write_text("old")
    await read.run({"file_path": "a.txt"}, ctx)
    result = await write.run({"file_path": "a.txt", "content": "new"}, ctx)
    assert not result.is_error
    assert (workspace / "a.txt").read_text() == "new"


async def test_write_refuses_a_stale_read(ctx: ToolContext, workspace: Path) -> None:
    path = workspace / "a.txt"
    path.write_text("old")
    await read.run({"file_path": "a.txt"}, ctx)
    path.write_text("changed by someone else")
    result = await write.run({"file_path": "a.txt", "content": "new"}, ctx)
    assert result.is_error
    assert "modified since it was read" in result.content
    assert path.read_text() == "changed by someone else"


async def test_own_write_keeps_the_file_writable(ctx: ToolContext, workspace: Path) -> None:
    """The stamp is updated after a write, so the agent can write again."""
    await write.run({"file_path": "a.txt", "content": "one"}, ctx)
    result = await write.run({"file_path": "a.txt", "content": "two"}, ctx)
    assert not result.is_error
    assert (workspace / "a.txt").read_text() == "two"


async def test_write_keeps_permission_bits(ctx: ToolContext, workspace: Path) -> None:
    path = workspace / "run.sh"
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755)
    await read.run({"file_path": "run.sh"}, ctx)
    await write.run({"file_path": "run.sh", "content": "#!/bin/sh\necho\n"}, ctx)
    assert path.stat().st_mode & 0o777 == 0o755


async def test_write_leaves_no_temporary_files(ctx: ToolContext, workspace: Path) -> None:
    await write.run({"file_path": "a.txt", "content": "x"}, ctx)
    assert os.listdir(workspace) == ["a.txt"]


async def test_write_replaces_the_file_atomically(ctx: ToolContext, workspace: Path) -> None:
    """A rename, not an in-place rewrite: the old inode is never half-written."""
    path = workspace / "a.txt"
    path.write_text("old")
    before = path.stat().st_ino
    await read.run({"file_path": "a.txt"}, ctx)
    await write.run({"file_path": "a.txt", "content": "new"}, ctx)
    assert path.stat().st_ino != before


async def test_write_over_a_directory_is_an_error(ctx: ToolContext, workspace: Path) -> None:
    (workspace / "d").mkdir()
    result = await write.run({"file_path": "d", "content": "x"}, ctx)
    assert result.is_error


@pytest.mark.parametrize("spelling", ["../outside/x.txt", "OUTSIDE/x.txt", "link/x.txt"])
async def test_write_outside_the_workspace_is_refused(
    ctx: ToolContext, workspace: Path, outside: Path, spelling: str
) -> None:
    (workspace / "link").symlink_to(outside)
    file_path = spelling.replace("OUTSIDE", str(outside))
    result = await write.run({"file_path": file_path, "content": "pwned"}, ctx)
    assert result.is_error
    assert "outside the workspace" in result.content
    assert list(outside.iterdir()) == []


async def test_write_through_a_symlinked_file_pointing_outside_is_refused(
    ctx: ToolContext, workspace: Path, outside: Path
) -> None:
    (outside / "target.txt").write_text("keep")
    (workspace / "innocent.txt").symlink_to(outside / "target.txt")
    result = await write.run({"file_path": "innocent.txt", "content": "pwned"}, ctx)
    assert result.is_error
    assert (outside / "target.txt").read_text() == "keep"


# -- Edit --------------------------------------------------------------------


async def read_then_edit(ctx: ToolContext, **input: object) -> str:
    await read.run({"file_path": input["file_path"]}, ctx)
    result = await edit.run(dict(input), ctx)
    assert not result.is_error, result.content
    return result.content


async def test_edit_replaces_a_unique_string(ctx: ToolContext, workspace: Path) -> None:
    (workspace / "c.py").write_text("a = 1\nb = 2\n")
    content = await read_then_edit(ctx, file_path="c.py", old_string="b = 2", new_string="b = 3")
    assert (workspace / "c.py").read_text() == "a = 1\nb = 3\n"
    assert "b = 3" in content  # the snippet shows the result


async def test_edit_needs_a_read_first(ctx: ToolContext, workspace: Path) -> None:
    (workspace / "c.py").write_text("a = 1\n")
    input = {"file_path": "c.py", "old_string": "1", "new_string": "2"}
    result = await edit.run(input, ctx)
    assert result.is_error
    assert "has not been read yet" in result.content


async def test_edit_refuses_a_stale_read(ctx: ToolContext, workspace: Path) -> None:
    path = workspace / "c.py"
    path.write_text("a = 1\n")
    await read.run({"file_path": "c.py"}, ctx)
    path.write_text("a = 10\n")
    result = await edit.run({"file_path": "c.py", "old_string": "a", "new_string": "b"}, ctx)
    assert result.is_error
    assert "modified since it was read" in result.content


async def test_edit_ambiguous_string_needs_replace_all(ctx: ToolContext, workspace: Path) -> None:
    (workspace / "c.py").write_text("x\nx\n")
    await read.run({"file_path": "c.py"}, ctx)
    result = await edit.run({"file_path": "c.py", "old_string": "x", "new_string": "y"}, ctx)
    assert result.is_error
    assert "Found 2 matches" in result.content
    assert (workspace / "c.py").read_text() == "x\nx\n"


async def test_edit_replace_all(ctx: ToolContext, workspace: Path) -> None:
    (workspace / "c.py").write_text("x\nx\n")
    await read_then_edit(ctx, file_path="c.py", old_string="x", new_string="y", replace_all=True)
    assert (workspace / "c.py").read_text() == "y\ny\n"


async def test_edit_missing_string_is_an_error(ctx: ToolContext, workspace: Path) -> None:
    (workspace / "c.py").write_text("x\n")
    await read.run({"file_path": "c.py"}, ctx)
    result = await edit.run({"file_path": "c.py", "old_string": "zz", "new_string": "y"}, ctx)
    assert result.is_error
    assert "not found" in result.content


async def test_edit_identical_strings_is_an_error(ctx: ToolContext, workspace: Path) -> None:
    (workspace / "c.py").write_text("x\n")
    await read.run({"file_path": "c.py"}, ctx)
    result = await edit.run({"file_path": "c.py", "old_string": "x", "new_string": "x"}, ctx)
    assert result.is_error
    assert "exactly the same" in result.content


async def test_edit_missing_file_is_an_error(ctx: ToolContext) -> None:
    result = await edit.run({"file_path": "no.py", "old_string": "a", "new_string": "b"}, ctx)
    assert result.is_error
    assert "does not exist" in result.content


async def test_edit_with_empty_old_string_creates_a_file(ctx: ToolContext, workspace: Path) -> None:
    result = await edit.run({"file_path": "n.py", "old_string": "", "new_string": "hi\n"}, ctx)
    assert not result.is_error
    assert (workspace / "n.py").read_text() == "hi\n"


async def test_edit_keeps_crlf_line_endings(ctx: ToolContext, workspace: Path) -> None:
    path = workspace / "w.txt"
    path.write_bytes(b"one\r\ntwo\r\n")
    await read_then_edit(ctx, file_path="w.txt", old_string="one\ntwo", new_string="1\n2")
    assert path.read_bytes() == b"1\r\n2\r\n"


async def test_successive_edits_need_no_new_read(ctx: ToolContext, workspace: Path) -> None:
    (workspace / "c.py").write_text("a\nb\n")
    await read_then_edit(ctx, file_path="c.py", old_string="a", new_string="A")
    result = await edit.run({"file_path": "c.py", "old_string": "b", "new_string": "B"}, ctx)
    assert not result.is_error
    assert (workspace / "c.py").read_text() == "A\nB\n"


async def test_edit_outside_the_workspace_is_refused(ctx: ToolContext, outside: Path) -> None:
    (outside / "t.txt").write_text("x")
    result = await edit.run(
        {"file_path": str(outside / "t.txt"), "old_string": "x", "new_string": "y"}, ctx
    )
    assert result.is_error
    assert (outside / "t.txt").read_text() == "x"


# -- protected paths -----------------------------------------------------------


@pytest.mark.parametrize("spelling", ["state/run/config.json", "state/new/deeper/f.txt", "state"])
async def test_no_write_or_edit_lands_in_a_protected_directory(
    ctx: ToolContext, workspace: Path, spelling: str
) -> None:
    """The run's state (under the coterie home) stays out of reach even inside a root."""
    (workspace / "state" / "run").mkdir(parents=True)
    (workspace / "state" / "run" / "config.json").write_text("{}")
    ctx.protected_paths = (workspace / "state",)
    await read.run({"file_path": "state/run/config.json"}, ctx)
    wrote = await write.run({"file_path": spelling, "content": "x"}, ctx)
    edited = await edit.run({"file_path": spelling, "old_string": "", "new_string": "x"}, ctx)
    assert wrote.is_error
    assert "protected" in wrote.content
    assert edited.is_error
    assert (workspace / "state" / "run" / "config.json").read_text() == "{}"
    assert sorted(p.name for p in (workspace / "state").rglob("*")) == ["config.json", "run"]


async def test_reading_a_protected_directory_is_not_the_file_tools_business(
    ctx: ToolContext, workspace: Path
) -> None:
    (workspace / "state").mkdir()
    (workspace / "state" / "f.txt").write_text("x\n")
    ctx.protected_paths = (workspace / "state",)
    result = await read.run({"file_path": "state/f.txt"}, ctx)
    assert not result.is_error  # protected means not written; Read rules are the policy's
