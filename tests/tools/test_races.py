"""The file tools against a symlink swapped in while they work (issue 11, finding 7).

A thread keeps exchanging a real directory of the workspace and a symlink to
a directory outside it (``renameat2(RENAME_EXCHANGE)``, atomic; two renames
where that is missing), while the tools are called on paths through the
directory, many times. The old tools checked with ``realpath`` and then
wrote by path, and put whole files outside. Now nothing outside is ever
created, changed or read, and the race is shown to have happened.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import platform
import tempfile
import threading
from typing import TYPE_CHECKING

import pytest

from coterie.tools import EditTool, GlobTool, GrepTool, ReadTool, ToolContext, WriteTool
from coterie.tools._base import FileStamp
from coterie.tools.sandbox import SandboxViolation, resolve_path

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path

ROUNDS = 300
_AT_FDCWD = -100
_RENAME_EXCHANGE = 2
_SYS_RENAMEAT2 = {"x86_64": 316, "aarch64": 276}


def exchanger() -> Callable[[str, str], None]:
    """An atomic exchange of two paths: renameat2 via libc, the raw syscall, or two renames."""
    libc = ctypes.CDLL(None, use_errno=True)
    renameat2 = getattr(libc, "renameat2", None)
    number = _SYS_RENAMEAT2.get(platform.machine())

    def call(a: str, b: str) -> int:
        args = (_AT_FDCWD, a.encode(), _AT_FDCWD, b.encode(), _RENAME_EXCHANGE)
        if renameat2 is not None:
            return int(renameat2(*args))
        assert number is not None
        return int(libc.syscall(number, *args))

    with tempfile.TemporaryDirectory() as probe:
        probe_a, probe_b = os.path.join(probe, "a"), os.path.join(probe, "b")
        os.mkdir(probe_a)
        os.symlink(probe_a, probe_b)
        works = (renameat2 is not None or number is not None) and call(probe_a, probe_b) == 0
    if works:

        def exchange(a: str, b: str) -> None:
            if call(a, b) != 0:
                raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))

        return exchange

    def two_renames(a: str, b: str) -> None:  # not atomic, still a race for the tools
        spare = a + ".swap"
        os.rename(a, spare)
        os.rename(b, a)
        os.rename(spare, b)

    return two_renames


class Swapper:
    """A thread exchanging *a* (a directory) and *b* (a symlink) until stopped."""

    def __init__(self, a: Path, b: Path) -> None:
        self.a, self.b = str(a), str(b)
        self.swaps = 0
        self._stop = threading.Event()
        self._exchange = exchanger()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self._exchange(self.a, self.b)
            except OSError as exc:  # a tool's directory creation raced with us: go on
                if exc.errno not in (errno.ENOENT, errno.EEXIST, errno.ENOTEMPTY):
                    raise
            self.swaps += 1

    def __enter__(self) -> Swapper:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        # Leave the real directory at *a* again, for the checks that follow.
        if os.path.islink(self.a):
            self._exchange(self.a, self.b)


@pytest.fixture
def race(workspace: Path, outside: Path) -> Path:
    """ws/d, a real directory, to be exchanged with ws/l, a symlink to *outside*."""
    (workspace / "d").mkdir()
    (workspace / "l").symlink_to(outside)
    return workspace / "d"


@contextlib.contextmanager
def swapping(race: Path) -> Iterator[Swapper]:
    with Swapper(race, race.with_name("l")) as swapper:
        yield swapper
    assert swapper.swaps > ROUNDS  # the race really ran


def outside_state(outside: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in outside.iterdir()}


async def test_writes_through_a_swapped_directory_never_land_outside(
    ctx: ToolContext, race: Path, outside: Path
) -> None:
    written = 0
    with swapping(race):
        for i in range(ROUNDS):
            result = await WriteTool().run({"file_path": f"d/f{i}.txt", "content": "x"}, ctx)
            written += not result.is_error
    assert outside_state(outside) == {}
    assert written > 0


async def test_edits_through_a_swapped_directory_never_change_outside(
    ctx: ToolContext, race: Path, outside: Path
) -> None:
    (race / "e.txt").write_text("a")
    (outside / "e.txt").write_text("a")
    st = (outside / "e.txt").stat()
    # Even a stamp the agent should not have cannot open the way out.
    ctx.read_files[outside / "e.txt"] = FileStamp(st.st_mtime_ns, st.st_size)
    edited = 0
    with swapping(race):
        for i in range(ROUNDS):
            await ReadTool().run({"file_path": "d/e.txt"}, ctx)
            old, new = ("a", "b") if i % 2 == 0 else ("b", "a")
            result = await EditTool().run(
                {"file_path": "d/e.txt", "old_string": old, "new_string": new}, ctx
            )
            edited += not result.is_error
    assert outside_state(outside) == {"e.txt": b"a"}
    assert (outside / "e.txt").stat().st_mtime_ns == st.st_mtime_ns
    assert edited > 0


async def test_reads_through_a_swapped_directory_never_show_outside(
    ctx: ToolContext, race: Path, outside: Path
) -> None:
    (outside / "s.txt").write_text("SECRET\n")
    (race / "s.txt").write_text("public\n")
    shown = 0
    with swapping(race):
        for _ in range(ROUNDS):
            result = await ReadTool().run({"file_path": "d/s.txt"}, ctx)
            assert "SECRET" not in result.content
            shown += "public" in result.content
    assert shown > 0
    assert outside / "s.txt" not in ctx.read_files


async def test_searches_through_a_swapped_directory_never_show_outside(
    ctx: ToolContext, race: Path, outside: Path
) -> None:
    (outside / "secret-name.txt").write_text("SECRET\n")
    with swapping(race):
        for _ in range(ROUNDS // 3):
            found = await GrepTool().run({"pattern": "SECRET", "output_mode": "content"}, ctx)
            assert "SECRET" not in found.content
            listed = await GlobTool().run({"pattern": "**/*"}, ctx)
            assert "secret-name" not in listed.content
            rooted = await GrepTool().run({"pattern": "SECRET", "path": "d"}, ctx)
            assert "secret-name" not in rooted.content


def test_the_policy_s_resolution_fails_closed_under_a_swap(race: Path) -> None:
    """realpath meets a component changing kind (EINVAL): a refusal, never a crash."""
    outcomes = set()
    with swapping(race):
        for _ in range(ROUNDS * 10):
            try:
                resolve_path("d/x.txt", race.parent)
                outcomes.add("resolved")
            except SandboxViolation:
                outcomes.add("refused")
    assert "resolved" in outcomes


def test_the_exchange_is_atomic_where_the_kernel_allows(tmp_path: Path) -> None:
    """The race is the one of the issue (renameat2) on Linux, not a weaker stand-in."""
    if platform.system() != "Linux":
        pytest.skip("renameat2 is Linux's")
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.symlink_to(tmp_path)
    exchange = exchanger()
    exchange(str(a), str(b))
    assert a.is_symlink()
    assert b.is_dir()
    assert not b.is_symlink()
    assert exchange.__name__ == "exchange"
