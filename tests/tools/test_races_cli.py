"""Finding 7 of issue 11 through the real CLI: Writes and Edits racing a symlink swap.

``coterie run`` in ``acceptEdits`` writes many files into ``d/`` while a
thread of the test exchanges ``d`` (a real directory) with ``l`` (a symlink
to a directory outside) with ``renameat2``. The old tools put whole files
outside in 3 of 10 such runs; now none lands there, whatever the timing,
and the run itself carries on (a refused call is an error result).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from tests.agent.conftest import coterie
from tests.agent.test_resume_cli import write_scenario
from tests.tools.test_races import Swapper

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.slow

WRITES = 400
PER_TURN = 20


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """An empty HOME, so the developer's settings never leak in."""
    h = tmp_path / "home"
    h.mkdir()
    return h


def turns(count: int, per_turn: int) -> list[dict[str, Any]]:
    """*count* Writes into d/ (and Edits of d/e.txt between them), *per_turn* a turn."""
    out: list[dict[str, Any]] = []
    for start in range(0, count, per_turn):
        uses: list[dict[str, Any]] = []
        for i in range(start, min(count, start + per_turn)):
            uses.append({"name": "Write", "input": {"file_path": f"d/f{i}.txt", "content": "x"}})
            uses.append({"name": "Read", "input": {"file_path": "d/e.txt"}})
            old, new = ("a", "b") if i % 2 == 0 else ("b", "a")
            uses.append(
                {"name": "Edit", "input": {"file_path": "d/e.txt", "old_string": old,
                                           "new_string": new}}
            )  # fmt: skip
        out.append({"tool_uses": uses})
    return [*out, {"text": "wrote them"}]


def test_no_write_lands_outside_while_a_symlink_is_swapped(
    workspace: Path, outside: Path, home: Path
) -> None:
    (workspace / "d").mkdir()
    (workspace / "d" / "e.txt").write_text("a")
    (workspace / "l").symlink_to(outside)
    (outside / "e.txt").write_text("a")
    before = (outside / "e.txt").stat().st_mtime_ns
    scenario = write_scenario(workspace.parent / "s.json", {"lead": turns(WRITES, PER_TURN)})
    with Swapper(workspace / "d", workspace / "l") as swapper:
        done = coterie(
            "run", "-p", "--permission-mode", "acceptEdits", "--max-turns", "100",
            "--scenario", str(scenario), "write the files",
            cwd=workspace, home=home, timeout=300,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert swapper.swaps > WRITES  # the race really ran
    assert sorted(p.name for p in outside.iterdir()) == ["e.txt"]
    assert (outside / "e.txt").read_text() == "a"
    assert (outside / "e.txt").stat().st_mtime_ns == before
    assert any((workspace / "d").iterdir())  # and writes inside still worked
