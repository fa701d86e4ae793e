"""Reading a typed line without a thread: a cancelled read takes nothing."""

from __future__ import annotations

import contextlib
import os
from typing import TYPE_CHECKING

import pytest
import trio

from coterie.ui.lineinput import read_line

if TYPE_CHECKING:
    from collections.abc import Iterator


@pytest.fixture
def pipe() -> Iterator[tuple[int, int]]:
    read, write = os.pipe()
    os.set_blocking(read, False)
    yield read, write
    for fd in (read, write):
        with contextlib.suppress(OSError):
            os.close(fd)


async def test_one_line_is_read_and_the_next_stays(pipe: tuple[int, int]) -> None:
    read, write = pipe
    os.write(write, b"2\nnext prompt\n")
    assert await read_line(read) == "2"
    assert os.read(read, 100) == b"next prompt\n"


async def test_a_cancelled_read_leaves_the_next_line_to_the_next_reader(
    pipe: tuple[int, int],
) -> None:
    read, write = pipe
    with trio.move_on_after(1):
        await read_line(read)  # nobody answers: the question is cancelled
    os.write(write, b"for the REPL\n")
    assert await read_line(read) == "for the REPL"


async def test_end_of_input_is_none(pipe: tuple[int, int]) -> None:
    read, write = pipe
    os.close(write)
    assert await read_line(read) is None


async def test_a_last_line_without_newline_is_read(pipe: tuple[int, int]) -> None:
    read, write = pipe
    os.write(write, "3 use pytest ✓".encode())
    os.close(write)
    assert await read_line(read) == "3 use pytest ✓"
