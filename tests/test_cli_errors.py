"""A usage error is one line naming the command (not argparse's whole usage), and
output into a pipe is never wrapped (what a user pastes stays whole)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from tests.agent.conftest import coterie, home, workspace

__all__ = ["home", "workspace"]  # the fixtures

if TYPE_CHECKING:
    from pathlib import Path


@pytest.mark.parametrize(
    ("args", "starts"),
    [
        (("watch",), "coterie watch: error: the following arguments are required: RUN_ID"),
        (("run", "-p", "x", "--max-turns", "abc"), "coterie run: error: argument --max-turns"),
        (("runs", "--bogus"), "coterie: error: unrecognized arguments: --bogus"),
    ],
)
def test_a_usage_error_is_one_line_naming_the_command(
    workspace: Path, home: Path, args: tuple[str, ...], starts: str
) -> None:
    done = coterie(*args, cwd=workspace, home=home)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.startswith(starts)
    assert done.stderr.count("\n") == 1
    assert "--help" in done.stderr


def test_a_long_line_into_a_pipe_is_not_wrapped(workspace: Path, home: Path) -> None:
    run_id = "r" * 120  # an error naming it, and the workspace's path, is long
    done = coterie("resume", run_id, cwd=workspace, home=home)
    assert done.returncode == 2
    [line] = done.stderr.splitlines()
    assert run_id in line
