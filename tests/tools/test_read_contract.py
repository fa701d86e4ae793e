"""Read as Claude Code's: whole ordinary files, 2,000 lines by default with a note, long
lines cut, a token cap that tells the model to page; the offset/limit arithmetic."""

from __future__ import annotations

import tempfile
from typing import TYPE_CHECKING

from hypothesis import given
from hypothesis import strategies as st

from coterie.context import FunnelConfig
from coterie.tools import ReadTool, ToolContext
from coterie.tools._fileio import read_lines
from coterie.tools._lines import DEFAULT_READ_LINES, numbered, read_window, window_note

if TYPE_CHECKING:
    from pathlib import Path

read = ReadTool()


def source_line(i: int) -> str:
    return f"    value_{i} = compute(value_{i - 1}, factor={i % 7})  # step {i}"


async def test_a_1500_line_file_reaches_the_model_whole(ctx: ToolContext, workspace: Path) -> None:
    lines = [source_line(i) for i in range(1, 1501)]
    (workspace / "mod.py").write_text("\n".join(lines) + "\n")
    result = await read.run({"file_path": "mod.py"}, ctx)
    assert not result.is_error
    shown = result.content.split("\n")
    assert len(shown) == 1500
    assert shown[0] == f"1\t{lines[0]}"
    assert shown[-1] == f"1500\t{lines[-1]}"
    # Past the old 20,000-character spill, but within what Read and the funnel keep.
    assert 20_000 < len(result.content) <= read.capabilities.result_chars
    assert len(result.content) > FunnelConfig().preview_chars * 10


async def test_a_10000_line_file_gives_2000_lines_and_the_note(
    ctx: ToolContext, workspace: Path
) -> None:
    (workspace / "log.txt").write_text("".join(f"entry {i}\n" for i in range(1, 10_001)))
    result = await read.run({"file_path": "log.txt"}, ctx)
    assert not result.is_error
    body, note = result.content.split("\n\n")
    assert body.split("\n")[-1] == "2000\tentry 2000"
    assert note == "(Showing lines 1-2000 of 10000; use offset to read more.)"
    again = await read.run({"file_path": "log.txt", "offset": 9999}, ctx)
    assert again.content.startswith("9999\tentry 9999\n10000\tentry 10000\n\n(Showing lines")


async def test_a_huge_single_line_file_is_cut_not_refused(
    ctx: ToolContext, workspace: Path
) -> None:
    (workspace / "min.js").write_text("a" * 5_000_000)
    result = await read.run({"file_path": "min.js"}, ctx)
    assert not result.is_error
    assert result.content.startswith("1\t" + "a" * 2000 + "... [line truncated, 5000000")
    assert len(result.content) < 2_100


async def test_past_the_token_cap_the_model_is_told_to_page(
    ctx: ToolContext, workspace: Path
) -> None:
    (workspace / "wide.txt").write_text(("w" * 1_900 + "\n") * 2000)
    result = await read.run({"file_path": "wide.txt"}, ctx)
    assert result.is_error
    assert "exceeds maximum allowed tokens (25000)" in result.content
    assert "Use offset and limit parameters" in result.content
    part = await read.run({"file_path": "wide.txt", "limit": 40}, ctx)
    assert not part.is_error


async def test_an_empty_file_is_a_reminder(ctx: ToolContext, workspace: Path) -> None:
    (workspace / "e.txt").write_text("")
    result = await read.run({"file_path": "e.txt"}, ctx)
    assert result.content == (
        "<system-reminder>Warning: the file exists but the contents are empty.</system-reminder>"
    )


@given(st.one_of(st.none(), st.integers(-5, 50)), st.one_of(st.none(), st.integers(-5, 50)))
def test_the_window_starts_at_line_1_and_defaults_to_2000(offset: object, limit: object) -> None:
    first, count = read_window(offset, limit)
    assert first == max(1, offset) if isinstance(offset, int) else first == 1
    assert count == (limit if isinstance(limit, int) and limit > 0 else DEFAULT_READ_LINES)


@given(
    st.lists(st.text(alphabet="ab \t\r", max_size=8), max_size=30),
    st.booleans(),
    st.integers(0, 35),
    st.integers(0, 35),
)
def test_offset_and_limit_show_exactly_those_lines(
    lines: list[str], trailing_newline: bool, offset: int, limit: int
) -> None:
    text = "\n".join(lines) + ("\n" if trailing_newline and lines else "")
    first, count = read_window(offset, limit)
    expected = text.split("\n")
    if text.endswith("\n") or not text:
        expected = expected[:-1]
    with tempfile.TemporaryFile() as f:
        f.write(text.encode())
        f.flush()
        f.seek(0)
        got = read_lines(f.fileno(), first, count, width=2000, budget=10**6)
    want = [line.removesuffix("\r") for line in expected[first - 1 : first - 1 + count]]
    assert [line for line, _ in got.shown] == want
    assert got.total == len(expected)
    if want:
        assert numbered(got.shown, first).split("\n")[0] == f"{first}\t{want[0]}"
        note = window_note(first, len(want), got.total, len(text))
        whole = first == 1 and len(want) == len(expected)
        assert (note == "") == whole
