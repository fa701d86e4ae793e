"""Glob and Grep: matching, ordering, output modes, and what they skip.

Every test runs twice: with ripgrep finding the files, and with the pure-Python
walk (``COTERIE_RG=off``): the answers must be the same.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import pytest

from coterie.tools import GlobTool, GrepTool, PermissionPolicy, ToolContext
from coterie.tools._dirfd import MAX_WALK_DEPTH
from coterie.tools._ripgrep import RG_ENV, find_rg

if TYPE_CHECKING:
    from pathlib import Path

glob, grep = GlobTool(), GrepTool()


@pytest.fixture(autouse=True, params=["ripgrep", "python"])
def finder(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Which way files are found: ripgrep (which must be installed under CI) or the walk."""
    if request.param == "python":
        monkeypatch.setenv(RG_ENV, "off")
    else:
        monkeypatch.delenv(RG_ENV, raising=False)
        if find_rg() is None:
            if os.environ.get("CI") == "true":
                pytest.fail("no rg binary (pip install ripgrep); CI must test the ripgrep path")
            pytest.skip("no rg binary")
    return str(request.param)


def make(root: Path, files: dict[str, str | bytes], mtimes: bool = True) -> None:
    """Create *files*; later ones get later modification times."""
    for i, (name, content) in enumerate(files.items()):
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
        if mtimes:
            os.utime(path, (1_000_000 + i, 1_000_000 + i))


# -- Glob --------------------------------------------------------------------


async def test_glob_recursive_pattern_newest_first(ctx: ToolContext, workspace: Path) -> None:
    make(workspace, {"a.py": "", "pkg/b.py": "", "pkg/deep/c.py": "", "d.txt": ""})
    result = await glob.run({"pattern": "**/*.py"}, ctx)
    assert result.content.splitlines() == [
        str(workspace / "pkg/deep/c.py"),
        str(workspace / "pkg/b.py"),
        str(workspace / "a.py"),
    ]


async def test_glob_star_does_not_cross_directories(ctx: ToolContext, workspace: Path) -> None:
    make(workspace, {"a.py": "", "pkg/b.py": ""})
    result = await glob.run({"pattern": "*.py"}, ctx)
    assert result.content == str(workspace / "a.py")


async def test_glob_braces_and_path(ctx: ToolContext, workspace: Path) -> None:
    make(workspace, {"src/a.ts": "", "src/b.tsx": "", "src/c.js": "", "other/d.ts": ""})
    result = await glob.run({"pattern": "*.{ts,tsx}", "path": "src"}, ctx)
    assert sorted(result.content.splitlines()) == [
        str(workspace / "src/a.ts"),
        str(workspace / "src/b.tsx"),
    ]


async def test_glob_absolute_pattern(ctx: ToolContext, workspace: Path) -> None:
    make(workspace, {"src/a.py": ""})
    result = await glob.run({"pattern": f"{workspace}/src/*.py"}, ctx)
    assert result.content == str(workspace / "src/a.py")


async def test_glob_no_match(ctx: ToolContext) -> None:
    result = await glob.run({"pattern": "**/*.rs"}, ctx)
    assert result.content == "No files found"
    assert not result.is_error


async def test_glob_is_capped_at_100(ctx: ToolContext, workspace: Path) -> None:
    make(workspace, {f"f{i:03}.txt": "" for i in range(130)})
    lines = (await glob.run({"pattern": "*.txt"}, ctx)).content.splitlines()
    assert len(lines) == 101
    assert lines[0] == str(workspace / "f129.txt")
    assert "truncated" in lines[-1]


async def test_glob_skips_git(ctx: ToolContext, workspace: Path) -> None:
    make(workspace, {".git/config": "", "a.cfg": ""})
    result = await glob.run({"pattern": "**/*"}, ctx)
    assert result.content == str(workspace / "a.cfg")


async def test_glob_outside_the_workspace_is_refused(ctx: ToolContext, outside: Path) -> None:
    result = await glob.run({"pattern": "*", "path": str(outside)}, ctx)
    assert result.is_error
    assert "outside the workspace" in result.content


async def test_glob_hides_read_denied_files(ctx: ToolContext, workspace: Path) -> None:
    make(workspace, {"secrets/key.txt": "", "notes.txt": ""})
    policy = PermissionPolicy.from_rules(deny=["Read(./secrets/**)"])
    ctx.read_denied = policy.read_filter(workspace)
    result = await glob.run({"pattern": "**/*.txt"}, ctx)
    assert result.content == str(workspace / "notes.txt")


# -- Grep --------------------------------------------------------------------


@pytest.fixture
def tree(workspace: Path) -> Path:
    make(
        workspace,
        {
            "a.py": "import os\ndef main():\n    return os.sep\n",
            "b.py": "print('hello')\n",
            "notes.md": "Import things\n",
            "data.bin": b"import\x00binary",
            ".git/HEAD": "import ref\n",
        },
    )
    return workspace


async def test_grep_lists_matching_files_by_default(ctx: ToolContext, tree: Path) -> None:
    result = await grep.run({"pattern": "import"}, ctx)
    assert result.content.splitlines() == ["Found 1 file", str(tree / "a.py")]


async def test_grep_case_insensitive(ctx: ToolContext, tree: Path) -> None:
    result = await grep.run({"pattern": "import", "-i": True}, ctx)
    assert result.content.splitlines() == [
        "Found 2 files",
        str(tree / "notes.md"),
        str(tree / "a.py"),
    ]


async def test_grep_content_with_line_numbers(ctx: ToolContext, tree: Path) -> None:
    result = await grep.run({"pattern": "os", "output_mode": "content", "glob": "*.py"}, ctx)
    assert result.content.splitlines() == [
        f"{tree / 'a.py'}:1:import os",
        f"{tree / 'a.py'}:3:    return os.sep",
    ]


async def test_grep_content_with_context(ctx: ToolContext, tree: Path) -> None:
    result = await grep.run({"pattern": "def", "output_mode": "content", "-B": 1}, ctx)
    assert result.content.splitlines() == [
        f"{tree / 'a.py'}-1-import os",
        f"{tree / 'a.py'}:2:def main():",
    ]


async def test_grep_content_without_line_numbers(ctx: ToolContext, tree: Path) -> None:
    input = {"pattern": "hello", "output_mode": "content", "-n": False}
    result = await grep.run(input, ctx)
    assert result.content == f"{tree / 'b.py'}:print('hello')"


async def test_grep_count(ctx: ToolContext, tree: Path) -> None:
    result = await grep.run({"pattern": "os", "output_mode": "count", "type": "py"}, ctx)
    assert result.content.splitlines()[0] == f"{tree / 'a.py'}:2"
    assert "Found 2 total occurrences across 1 files." in result.content


async def test_grep_head_limit(ctx: ToolContext, tree: Path) -> None:
    input = {"pattern": ".", "output_mode": "content", "head_limit": 2, "glob": "a.py"}
    lines = (await grep.run(input, ctx)).content.splitlines()
    assert len(lines) == 3
    assert "head_limit" in lines[-1]


async def test_grep_multiline(ctx: ToolContext, tree: Path) -> None:
    input = {"pattern": r"def main\(\):\n\s+return", "multiline": True, "output_mode": "content"}
    lines = (await grep.run(input, ctx)).content.splitlines()
    assert [line.split(":")[1] for line in lines] == ["2", "3"]


async def test_grep_single_file_path(ctx: ToolContext, tree: Path) -> None:
    result = await grep.run({"pattern": "hello", "path": "b.py"}, ctx)
    assert str(tree / "b.py") in result.content


async def test_grep_no_match(ctx: ToolContext, tree: Path) -> None:
    result = await grep.run({"pattern": "zzz", "output_mode": "content"}, ctx)
    assert result.content == "No matches found"


async def test_grep_invalid_regex_is_an_error(ctx: ToolContext) -> None:
    result = await grep.run({"pattern": "("}, ctx)
    assert result.is_error
    assert "Invalid regular expression" in result.content


async def test_grep_unknown_type_is_an_error(ctx: ToolContext) -> None:
    result = await grep.run({"pattern": "x", "type": "cobol"}, ctx)
    assert result.is_error
    assert "py" in result.content


async def test_grep_does_not_read_through_symlinks_outside(
    ctx: ToolContext, workspace: Path, outside: Path
) -> None:
    (outside / "secret.txt").write_text("password=hunter2\n")
    (workspace / "link.txt").symlink_to(outside / "secret.txt")
    result = await grep.run({"pattern": "hunter2", "output_mode": "content"}, ctx)
    assert "hunter2" not in result.content


async def test_grep_hides_read_denied_files(ctx: ToolContext, workspace: Path) -> None:
    make(workspace, {".env": "TOKEN=abc\n", "app.py": "TOKEN = None\n"})
    ctx.read_denied = PermissionPolicy.from_rules(deny=["Read(.env)"]).read_filter(workspace)
    result = await grep.run({"pattern": "TOKEN"}, ctx)
    assert result.content.splitlines() == ["Found 1 file", str(workspace / "app.py")]


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc")
async def test_a_very_deep_tree_is_walked_to_a_bound_without_leaking(
    ctx: ToolContext, workspace: Path
) -> None:
    """A checkout nested to exhaust descriptors (or the stack) is cut at a depth."""
    deep = workspace
    for _ in range(MAX_WALK_DEPTH + 20):
        deep = deep / "d"
    deep.mkdir(parents=True)
    (deep / "bottom.txt").write_text("needle\n")
    (workspace / "d" / "top.txt").write_text("needle\n")
    before = open_fds()
    listed = await GlobTool().run({"pattern": "**/*.txt"}, ctx)
    found = await GrepTool().run({"pattern": "needle", "head_limit": 1}, ctx)
    assert listed.content == str(workspace / "d" / "top.txt")
    assert "top.txt" in found.content
    assert open_fds() == before
