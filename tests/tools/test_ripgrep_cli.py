"""Glob and Grep through the real CLI, with ripgrep finding the files and without.

The model sees the same tool results either way (issue 14: Glob/Grep through
ripgrep when an ``rg`` binary is available, the pure-Python walk kept).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import pytest

from coterie.events import read_events
from coterie.runs import runs_root
from coterie.tools._ripgrep import find_rg
from tests.agent.conftest import coterie, home, workspace
from tests.agent.test_resume_cli import write_scenario

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.slow

CALLS = [
    {"name": "Grep", "input": {"pattern": "needle", "output_mode": "content", "-C": 1}},
    {"name": "Grep", "input": {"pattern": "needle", "type": "py"}},
    {"name": "Glob", "input": {"pattern": "**/*.py"}},
]


def results(run_dir: Path) -> list[str]:
    """The tool results the lead's model was given, in order."""
    return [
        str(e.data["content"])
        for e in read_events(run_dir / "events.jsonl")
        if e.type == "agent.tool_result"
    ]


def test_the_model_is_shown_the_same_with_ripgrep_and_without(workspace: Path, home: Path) -> None:
    if find_rg() is None and os.environ.get("CI") != "true":
        pytest.skip("no rg binary (pip install ripgrep)")
    for name, text in {
        "src/a.py": "x = 1\nneedle = 2\ny = 3\n",
        "src/b.md": "a needle here\n",
        "docs/c.py": "no\n",
        ".hidden/d.py": "needle\n",
    }.items():
        (workspace / name).parent.mkdir(parents=True, exist_ok=True)
        (workspace / name).write_text(text)
    scenario = write_scenario(
        workspace.parent / "s.json", {"lead": [{"tool_uses": CALLS}, {"text": "done"}]}
    )
    shown = []
    for finder in (None, "off"):
        env = {"COTERIE_RG": finder} if finder else {}
        done = coterie("run", "-p", "--scenario", str(scenario), "look", cwd=workspace,
                       home=home, env=env)  # fmt: skip
        assert done.returncode == 0, done.stderr
        newest = max(runs_root(workspace).iterdir(), key=lambda p: p.name)
        shown.append(results(newest))
    assert shown[0] == shown[1]
    grep_content, grep_files, glob = shown[0]
    assert f"{workspace}/src/a.py:2:needle = 2" in grep_content
    assert f"{workspace}/.hidden/d.py:1:needle" in grep_content
    assert grep_files.splitlines()[0] == "Found 2 files"
    assert sorted(glob.splitlines()) == sorted(
        f"{workspace}/{n}" for n in ("src/a.py", "docs/c.py", ".hidden/d.py")
    )


__all__ = ["home", "workspace"]  # the CLI fixtures, used above
