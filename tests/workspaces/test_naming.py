"""Branch names and commit messages of a teammate's workspace."""

from __future__ import annotations

import subprocess

import pytest
from hypothesis import given
from hypothesis import strategies as st

from coterie.workspaces import BadName, base_branch, commit_message, task_branch, task_of_branch
from tests.strategies import run_ids, task_ids


@given(run_ids, task_ids)
def test_a_task_branch_names_its_run_and_task(run_id: str, task_id: str) -> None:
    assert task_of_branch(task_branch(run_id, task_id)) == (run_id, task_id)


@given(run_ids)
def test_the_base_branch_is_no_task_branch(run_id: str) -> None:
    assert task_of_branch(base_branch(run_id)) is None


@given(st.text(max_size=12))
def test_a_part_git_would_misread_is_refused(part: str) -> None:
    """Whatever is accepted is a valid component for git's check-ref-format."""
    try:
        branch = task_branch(part, "task_1")
    except BadName:
        return
    assert ".." not in branch
    assert not part.startswith(("-", "."))
    assert part


@pytest.mark.parametrize("part", ["..", "-x", ".x", "a.lock", "a/b", "a b", "", "a..b", "x."])
def test_names_git_refuses_are_refused_here(part: str) -> None:
    with pytest.raises(BadName):
        task_branch(part, "task_1")


def test_git_accepts_the_branches_made() -> None:
    for branch in (task_branch("20261201-172344-89741f", "task_12"), base_branch("r_1")):
        done = subprocess.run(["git", "check-ref-format", "--branch", branch], check=False)
        assert done.returncode == 0, branch


def test_the_commit_message_names_the_task_and_teammate() -> None:
    message = commit_message("task_3", "Add the   parser\nnow", "alice", "completed")
    head, _, trailers = message.partition("\n\n")
    assert head == "task_3: Add the parser now"
    assert "Coterie-Task: task_3" in trailers
    assert "Coterie-Teammate: alice" in trailers


@given(st.text(max_size=300))
def test_the_summary_line_is_one_short_line(subject: str) -> None:
    head = commit_message("task_1", subject, "bob", "failed").split("\n", 1)[0]
    assert len(head) <= 72
    assert "\n" not in head
    assert "\r" not in head
