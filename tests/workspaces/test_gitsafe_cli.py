"""Issue 24, findings 1 and 9, through the real CLI: a hostile ``.git/config`` runs
nothing through the runtime's own git, and the checkouts it makes are private.

The three measured attacks: ``commit.gpgSign`` + ``gpg.program`` on a teammate's
task commit; a merge driver named by ``.gitattributes`` on ``MergeTask``;
``url.<ext::…>.pushInsteadOf`` when the lead publishes to ``--repo URL``.
"""

from __future__ import annotations

import os
import stat
import subprocess
from typing import TYPE_CHECKING

import pytest

from coterie.runs import runs_root
from coterie.workspaces import Checkouts, GitError, check_repository, merge_task
from tests.agent.conftest import coterie
from tests.agent.test_resume_cli import write_scenario
from tests.workspaces.conftest import make_repo, run_git
from tests.workspaces.test_isolation_cli import ISOLATED, create, merge, same_file_scenario, team

if TYPE_CHECKING:
    from pathlib import Path

RUN = "20261201-000000-abcdef"


def _script(tmp_path: Path) -> tuple[Path, Path]:
    """A program that leaves a marker when run (and fails, as a driver would)."""
    marker = tmp_path / "ran"
    script = tmp_path / "evil.sh"
    script.write_text(f'#!/bin/sh\necho "$0 $*" >> {marker}\nexit 1\n')
    script.chmod(0o755)
    return script, marker


def _plant(repo: Path, *pairs: tuple[str, str]) -> None:
    for key, value in pairs:
        subprocess.run(["git", "config", key, value], cwd=repo, check=True)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_gpg_sign_on_a_teammates_commit_runs_no_program(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    """The commit is made (unsigned); the planted gpg never runs."""
    make_repo(workspace)
    script, marker = _script(tmp_path)
    _plant(workspace, ("commit.gpgSign", "true"), ("gpg.program", str(script)))
    scenario = write_scenario(
        tmp_path / "s.json",
        {
            "lead": [{"tool_uses": [create("notes", "alice")]}, {"text": "planned"},
                     {"text": "done"}],
            "alice": [{"tool_uses": [{"name": "Write", "input": {
                "file_path": "notes.txt", "content": "signed?\n"}}]}, {"text": "wrote"}],
        },
    )  # fmt: skip
    summary = team(scenario, workspace, home)
    run_id = summary["run_id"]
    assert not marker.exists(), marker.read_text()
    assert summary["tasks"][0]["status"] == "completed"
    assert run_git(workspace, "show", f"coterie/{run_id}/task_1:notes.txt") == "signed?\n"


def test_a_merge_driver_never_runs_and_the_run_says_why(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    """A driver the configuration names is refused before any git runs, with the
    key named (replacing it with a clean merge would lose work)."""
    make_repo(workspace, {"notes.txt": "base\n", ".gitattributes": "notes.txt merge=drv\n"})
    script, marker = _script(tmp_path)
    _plant(workspace, ("merge.drv.driver", f"{script} %O %A %B"))
    done = coterie(
        "team", "-p", "--permission-mode", "bypassPermissions", *ISOLATED,
        "--scenario", str(same_file_scenario(tmp_path)), "go", cwd=workspace, home=home,
    )  # fmt: skip
    assert not marker.exists(), marker.read_text()
    assert done.returncode == 2, done.stderr
    assert "merge.drv.driver" in done.stderr
    assert "could make git run a program" in done.stderr


async def test_a_merge_driver_planted_during_the_run_is_refused_by_merge_task(
    tmp_path: Path,
) -> None:
    """Planted after the checkouts were made: MergeTask refuses, nothing runs."""
    repo = make_repo(tmp_path / "ws", {"notes.txt": "base\n", ".gitattributes": "* merge=drv\n"})
    group = Checkouts(check_repository(repo), RUN)
    for task_id, name in (("task_1", "alice"), ("task_2", "bob")):
        mate = group.teammate(name)
        await mate.begin(task_id)
        (mate.path / "notes.txt").write_text(f"{name}\n")
        await mate.finish(task_id, name, "completed")
    assert (await merge_task(group.repo, RUN, "task_1", None, None)).kind == "fast-forward"
    script, marker = _script(tmp_path)
    _plant(repo, ("merge.drv.driver", f"{script} %O %A %B"))
    with pytest.raises(GitError, match=r"merge\.drv\.driver, which could make git run"):
        await merge_task(group.repo, RUN, "task_2", None, None)
    assert not marker.exists()


def test_push_insteadof_to_ext_never_runs_with_repo_url(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    make_repo(workspace)
    bare = tmp_path / "shared.git"
    run_git(tmp_path, "init", "-q", "--bare", str(bare))
    script, marker = _script(tmp_path)
    _plant(
        workspace,
        (f"url.ext::{script} %S .pushInsteadOf", f"file://{bare}"),
        ("protocol.ext.allow", "always"),
    )
    scenario = write_scenario(
        tmp_path / "s.json",
        {
            "lead": [{"tool_uses": [create("x", "alice")]}, {"text": "planned"},
                     merge("task_1"), {"text": "done"}],
            "alice": [{"tool_uses": [{"name": "Write", "input": {
                "file_path": "x.txt", "content": "x\n"}}]}, {"text": "wrote"}],
        },
    )  # fmt: skip
    done = coterie(
        "team", "-p", "--permission-mode", "bypassPermissions", *ISOLATED,
        "--repo", f"file://{bare}", "--scenario", str(scenario), "go",
        cwd=workspace, home=home,
    )  # fmt: skip
    assert not marker.exists(), marker.read_text()
    assert done.returncode == 2, done.stderr
    assert "pushinsteadof" in done.stderr.lower()


def test_checkouts_and_run_state_are_private_whatever_the_umask(
    workspace: Path, home: Path, tmp_path: Path, own_workspaces: Path
) -> None:
    """Finding 9: with the common umask 022 a worktree was 0755, readable by every
    local user; the worktree, the run's folder of checkouts, and the run's state are
    0700."""
    make_repo(workspace)
    previous = os.umask(0o022)
    try:
        summary = team(same_file_scenario(tmp_path), workspace, home)
    finally:
        os.umask(previous)
    run_id = summary["run_id"]
    for name in ("alice", "bob"):
        assert _mode(own_workspaces / run_id / name) == 0o700
    assert _mode(own_workspaces / run_id) == 0o700
    assert _mode(runs_root(workspace) / run_id) == 0o700
    assert _mode(runs_root(workspace) / run_id / "mailboxes") == 0o700
