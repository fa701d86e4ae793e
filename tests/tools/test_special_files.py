"""Special and huge files (issue 11, finding 8): refused or bounded, never a hang.

Read of a FIFO used to block in ``open`` (and ignore Ctrl-C), Grep over a
tree holding one the same, a character device was read until memory ran
out, and a 3 GiB sparse file was read whole before "binary file". Now Read,
Grep and Glob refuse FIFOs, sockets and devices with a clear message
(without blocking), judge a file by its first 8 KiB and its size before
reading it, keep only the lines shown, and can be abandoned.
"""

from __future__ import annotations

import os
import socket
import threading
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import trio

from coterie.tools import GlobTool, GrepTool, ReadTool, ToolContext, WriteTool
from coterie.tools._fileio import Stopped, read_bounded, read_lines

if TYPE_CHECKING:
    from collections.abc import Iterator

read, grep, glob, write = ReadTool(), GrepTool(), GlobTool(), WriteTool()
GIB = 1 << 30
# Each call must come back promptly; the old code never came back at all.
PROMPT = 20


@pytest.fixture
def fifo(workspace: Path) -> Path:
    path = workspace / "pipe"
    os.mkfifo(path)
    return path


@pytest.fixture
def sock(workspace: Path) -> Iterator[Path]:
    path = workspace / "s.sock"
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(path))
        server.listen()
        yield path


@pytest.fixture
def sparse(workspace: Path) -> Path:
    """3 GiB of holes: costs no disk, but a whole read costs 3 GiB of memory."""
    path = workspace / "sparse.img"
    with path.open("wb") as f:
        f.truncate(3 * GIB)
    return path


async def test_read_of_a_fifo_is_refused_without_blocking(ctx: ToolContext, fifo: Path) -> None:
    with trio.fail_after(PROMPT):
        result = await read.run({"file_path": "pipe"}, ctx)
    assert result.is_error
    assert "FIFO" in result.content
    assert "not a regular file" in result.content
    assert fifo not in ctx.read_files


async def test_read_of_a_fifo_with_a_writer_is_refused_too(ctx: ToolContext, fifo: Path) -> None:
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # lets the writer open
    writer = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
    try:
        os.write(writer, b"data\n")
        result = await read.run({"file_path": "pipe"}, ctx)
    finally:
        os.close(writer)
        os.close(reader)
    assert result.is_error
    assert "FIFO" in result.content


async def test_read_of_a_socket_is_refused(ctx: ToolContext, sock: Path) -> None:
    result = await read.run({"file_path": "s.sock"}, ctx)
    assert result.is_error
    assert "socket" in result.content


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero")
async def test_read_of_a_character_device_is_refused(ctx: ToolContext) -> None:
    ctx.extra_dirs.append(Path("/dev"))
    with trio.fail_after(PROMPT):
        result = await read.run({"file_path": "/dev/zero"}, ctx)
    assert result.is_error
    assert "character device" in result.content


async def test_a_symlink_to_a_device_is_outside(ctx: ToolContext, workspace: Path) -> None:
    (workspace / "zero").symlink_to("/dev/zero")
    result = await read.run({"file_path": "zero"}, ctx)
    assert result.is_error
    assert "outside the workspace" in result.content


async def test_a_symlink_to_a_device_in_an_added_directory_is_refused(
    ctx: ToolContext, workspace: Path
) -> None:
    ctx.extra_dirs.append(Path("/dev"))
    (workspace / "zero").symlink_to("/dev/zero")
    result = await read.run({"file_path": "zero"}, ctx)
    assert result.is_error
    assert "character device" in result.content


async def test_a_sparse_3_gib_file_is_judged_by_its_head(ctx: ToolContext, sparse: Path) -> None:
    with trio.fail_after(PROMPT):
        result = await read.run({"file_path": "sparse.img"}, ctx)
    assert result.is_error
    assert "binary file" in result.content
    assert str(3 * GIB) in result.content


async def test_a_huge_text_file_shows_a_page_without_counting_it_all(
    ctx: ToolContext, workspace: Path
) -> None:
    """Text up front, then 3 GiB of holes: only the page asked for is kept."""
    path = workspace / "log.txt"
    with path.open("wb") as f:
        f.write(b"".join(b"line %d\n" % i for i in range(1, 5001)))
        f.truncate(3 * GIB)
    with trio.fail_after(PROMPT):
        result = await read.run({"file_path": "log.txt", "offset": 10, "limit": 3}, ctx)
    assert not result.is_error, result.content
    assert result.content.startswith("10\tline 10\n11\tline 11\n12\tline 12")
    assert f"of a {3 * GIB}-byte file" in result.content
    assert path in ctx.read_files


async def test_grep_over_a_tree_holding_special_files_finishes(
    ctx: ToolContext, workspace: Path, fifo: Path, sock: Path, sparse: Path
) -> None:
    (workspace / "a.txt").write_text("needle\n")
    with trio.fail_after(PROMPT):
        result = await grep.run({"pattern": "needle"}, ctx)
    assert result.content.splitlines() == ["Found 1 file", str(workspace / "a.txt")]


async def test_grep_of_a_fifo_itself_is_refused(ctx: ToolContext, fifo: Path) -> None:
    with trio.fail_after(PROMPT):
        result = await grep.run({"pattern": "x", "path": "pipe"}, ctx)
    assert result.is_error
    assert "FIFO" in result.content


async def test_grep_skips_a_symlink_to_a_fifo(
    ctx: ToolContext, workspace: Path, fifo: Path
) -> None:
    (workspace / "alias").symlink_to(fifo)
    with trio.fail_after(PROMPT):
        result = await grep.run({"pattern": "x"}, ctx)
    assert result.content == "No files found"


async def test_glob_lists_no_special_files(
    ctx: ToolContext, workspace: Path, fifo: Path, sock: Path
) -> None:
    (workspace / "a.txt").write_text("x")
    result = await glob.run({"pattern": "*"}, ctx)
    assert result.content == str(workspace / "a.txt")


async def test_write_over_a_fifo_is_refused(ctx: ToolContext, fifo: Path) -> None:
    with trio.fail_after(PROMPT):
        result = await write.run({"file_path": "pipe", "content": "x"}, ctx)
    assert result.is_error
    assert "FIFO" in result.content
    assert fifo.is_fifo()


async def test_a_cancelled_read_records_nothing(ctx: ToolContext, workspace: Path) -> None:
    (workspace / "a.txt").write_text("x\n")
    with trio.CancelScope() as scope:
        scope.cancel()
        await read.run({"file_path": "a.txt"}, ctx)
    assert scope.cancelled_caught
    assert ctx.read_files == {}


def feeding(data: bytes, *, repeat: bool, then: threading.Event | None = None) -> int:
    """A pipe's read end, fed *data* (over and over if *repeat*) by a thread.

    The feeder stops when the reader closes its end; it sets *then* once it
    has written 1 MiB (and goes on writing).
    """
    r, w = os.pipe()

    def feed() -> None:
        sent = 0
        try:
            while True:
                view = memoryview(data)
                while view:
                    view = view[os.write(w, view) :]
                sent += len(data)
                if then is not None and sent >= 1 << 20:
                    then.set()
                if not repeat:
                    return
        except BrokenPipeError:
            pass  # the reader is done
        finally:
            os.close(w)

    threading.Thread(target=feed, daemon=True).start()
    return r


def test_read_lines_keeps_only_the_page_of_an_endless_stream() -> None:
    r = feeding(b"more text\n" * 1000, repeat=True)
    try:
        got = read_lines(r, 2, 3, width=100, budget=10_000)
    finally:
        os.close(r)
    assert got.shown == [("more text", 9)] * 3
    assert got.total is None  # too much to count: left unknown


def test_read_lines_cuts_a_huge_line_as_it_reads() -> None:
    r = feeding(b"y" * 3_000_000 + b"\r\nz\n", repeat=False)
    try:
        got = read_lines(r, 1, 2, width=10, budget=100)
    finally:
        os.close(r)
    assert got.shown == [("y" * 11, 3_000_000), ("z", 1)]
    assert got.total == 2


def test_a_stopped_read_ends_at_its_next_chunk() -> None:
    """The checkpoint an abandoned Read or Grep thread stops at."""
    stop = threading.Event()
    r = feeding(b"x" * 65536, repeat=True, then=stop)
    try:
        with pytest.raises(Stopped):
            read_bounded(r, 1 << 40, stop)
    finally:
        os.close(r)
