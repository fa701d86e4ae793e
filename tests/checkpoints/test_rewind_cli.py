"""``coterie checkpoints`` and ``coterie rewind`` on real runs: files changed by any
means (Write, Edit, Bash, subagents, teammates) put back exactly, the conversation cut
back, outside changes refused unless forced, and a rewind undone by another."""

from __future__ import annotations

import hashlib
import json
import os
from typing import TYPE_CHECKING, Any

from coterie.board import read_log
from coterie.context.transcript import read_history
from coterie.runs import runs_root, transcript_path
from tests.agent.conftest import coterie, home, workspace
from tests.agent.test_resume_cli import only_run, write_scenario

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["home", "workspace"]  # the fixtures of tests/agent

BYPASS = ("--permission-mode", "bypassPermissions")
SHELL = "echo x > b; rm c; echo more >> d; mv e f; chmod +x g"


def tree(root: Path) -> str:
    """A hash over every file's path, mode and content (and every link's target)."""
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file() or p.is_symlink()):
        rel = path.relative_to(root).as_posix()
        if path.is_symlink():
            digest.update(f"{rel} -> {os.readlink(path)}\n".encode())
        else:
            digest.update(f"{rel} {path.stat().st_mode:o} ".encode() + path.read_bytes() + b"\n")
    return digest.hexdigest()


def call(name: str, **input: Any) -> dict[str, Any]:
    return {"tool_uses": [{"name": name, "input": input}]}


def two_prompts(workspace: Path, home: Path) -> tuple[str, list[str]]:
    """Prompt 1 Writes a.txt and runs SHELL; prompt 2 (a resume) Edits a.txt. The run's
    id and the tree hashes: before, after prompt 1, after prompt 2."""
    for name in "cdeg":
        (workspace / name).write_text(f"{name}\n")
    tracks = {
        "lead": [
            call("Write", file_path="a.txt", content="one\n"),
            call("Bash", command=SHELL),
            {"text": "first done"},
            call("Read", file_path="a.txt"),
            call("Edit", file_path="a.txt", old_string="one", new_string="two"),
            {"text": "second done"},
            {"expect_not": "second", "text": "third done"},
        ]
    }
    scenario = write_scenario(workspace.parent / "s.json", tracks)
    hashes = [tree(workspace)]
    done = coterie(
        "run", "-p", *BYPASS, "--scenario", str(scenario), "first", cwd=workspace, home=home
    )
    assert done.returncode == 0, done.stderr
    hashes.append(tree(workspace))
    run_id = only_run(workspace)
    done = coterie("resume", run_id, "second", "-p", cwd=workspace, home=home)
    assert done.returncode == 0, done.stderr
    hashes.append(tree(workspace))
    assert (workspace / "a.txt").read_text() == "two\n"
    return run_id, hashes


def rewind(run_id: str, *args: str, workspace: Path, home: Path) -> Any:
    return coterie("rewind", run_id, *args, cwd=workspace, home=home)


def test_rewinding_puts_back_every_change_the_run_made(workspace: Path, home: Path) -> None:
    run_id, (before, after1, _) = two_prompts(workspace, home)
    listed = coterie("checkpoints", run_id, cwd=workspace, home=home)
    assert listed.returncode == 0, listed.stderr
    assert "  1  " in listed.stdout
    assert "first" in listed.stdout
    assert "a.txt (lead)" in listed.stdout
    as_json = coterie("checkpoints", run_id, "--json", cwd=workspace, home=home)
    rows = [json.loads(line) for line in as_json.stdout.splitlines()]  # one object a line
    assert [(r["n"], r["text"]) for r in rows] == [(1, "first"), (2, "second")]
    done = rewind(run_id, "--to", "2", workspace=workspace, home=home)
    assert done.returncode == 0, done.stderr
    assert tree(workspace) == after1
    done = rewind(run_id, "--to", "1", workspace=workspace, home=home)
    assert done.returncode == 0, done.stderr
    assert tree(workspace) == before  # b, f gone; c, e back; d, g as they were
    # A rewind is a checkpoint: rewinding to it (the 4th) undoes it.
    undo = rewind(run_id, "--to", "4", workspace=workspace, home=home)
    assert undo.returncode == 0, undo.stderr
    assert tree(workspace) == after1


def test_the_conversation_is_cut_back_and_the_files_stay(workspace: Path, home: Path) -> None:
    run_id, (_, _, after2) = two_prompts(workspace, home)
    done = rewind(run_id, "--to", "2", "--conversation", workspace=workspace, home=home)
    assert done.returncode == 0, done.stderr
    assert "6 messages of the conversation dropped" in done.stdout
    assert tree(workspace) == after2
    lead = transcript_path(runs_root(workspace) / run_id, "lead")
    assert "second" not in json.dumps(read_history(lead))
    # The next request goes on as if prompt 2 had never been sent (its turn checks that).
    again = coterie("resume", run_id, "third", "-p", cwd=workspace, home=home)
    assert again.returncode == 0, again.stderr
    assert again.stdout == "third done\n"


def test_a_file_changed_outside_the_run_refuses_unless_forced(workspace: Path, home: Path) -> None:
    run_id, (before, _, _) = two_prompts(workspace, home)
    (workspace / "a.txt").write_text("mine now\n")
    refused = rewind(run_id, "--to", "1", workspace=workspace, home=home)
    assert refused.returncode == 1
    assert refused.stderr.count("\n") == 1
    assert "a.txt was changed outside the run" in refused.stderr
    assert (workspace / "a.txt").read_text() == "mine now\n"  # nothing changed
    forced = rewind(run_id, "--to", "1", "--force", workspace=workspace, home=home)
    assert forced.returncode == 0, forced.stderr
    assert tree(workspace) == before


def test_files_the_run_never_touched_are_left_alone(workspace: Path, home: Path) -> None:
    run_id, _ = two_prompts(workspace, home)
    (workspace / "notes.txt").write_text("written by hand after the run\n")
    done = rewind(run_id, "--to", "1", workspace=workspace, home=home)
    assert done.returncode == 0, done.stderr
    assert (workspace / "notes.txt").read_text() == "written by hand after the run\n"


def test_a_subagents_and_a_teammates_changes_are_rewound(workspace: Path, home: Path) -> None:
    tracks = {
        "lead": [
            {
                "tool_uses": [
                    {
                        "name": "TaskCreate",
                        "input": {"subject": "w", "description": "w", "owner": "alice"},
                    }
                ]
            },
            {"text": "planned"},
            call("Agent", description="d", prompt="write sub.txt"),
            {"text": "all done"},
            {"text": "all done"},
        ],
        "alice": [call("Bash", command="echo hi > mate.txt; rm keep.txt"), {"text": "did it"}],
        "subagent": [call("Write", file_path="sub.txt", content="s\n"), {"text": "written"}],
    }
    (workspace / "keep.txt").write_text("keep\n")
    before = tree(workspace)
    scenario = write_scenario(workspace.parent / "s.json", tracks)
    done = coterie(
        "team", "-p", *BYPASS, "--teammates", "1", "--teammate", "alice",
        "--scenario", str(scenario), "go", cwd=workspace, home=home,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert (workspace / "mate.txt").exists()
    run_id = only_run(workspace)
    done = rewind(run_id, "--to", "1", "--code", workspace=workspace, home=home)
    assert done.returncode == 0, done.stderr
    assert tree(workspace) == before


def test_a_team_runs_rewind_cuts_the_teammates_and_the_board_back_too(
    workspace: Path, home: Path
) -> None:
    """Prompt 2's task, and alice's work on it, go with the rewind: prompt 3's requests
    (the lead's and alice's) hold nothing of it, and the board only prompt 1's task."""

    def create(subject: str) -> dict[str, Any]:
        task = {"subject": subject, "description": f"Do: {subject}", "owner": "alice"}
        return {"tool_uses": [{"name": "TaskCreate", "input": task}]}

    tracks = {
        "lead": [
            create("job one"), {"text": "planned one"}, {"text": "done one"},
            create("job two"), {"text": "planned two"}, {"text": "done two"},
            create("job three"), {"expect_not": "job two", "text": "planned three"},
            {"expect_not": "job two", "text": "done three"},
        ],
        "alice": [
            {"text": "did one"},
            {"text": "did two"},
            {"expect_not": "job two", "text": "did three"},
        ],
    }  # fmt: skip
    scenario = write_scenario(workspace.parent / "s.json", tracks)
    team = ("--teammates", "1", "--teammate", "alice", "--scenario", str(scenario))
    done = coterie("team", "-p", *BYPASS, *team, "goal one", cwd=workspace, home=home)
    assert (done.returncode, done.stdout) == (0, "done one\n"), done.stderr
    run_id = only_run(workspace)
    done = coterie("resume", run_id, "goal two", "-p", cwd=workspace, home=home)
    assert (done.returncode, done.stdout) == (0, "done two\n"), done.stderr
    done = rewind(run_id, "--to", "2", "--conversation", workspace=workspace, home=home)
    assert done.returncode == 0, done.stderr
    assert "the conversations of alice cut back; 1 task of the board dropped" in done.stdout
    board = [e for e in read_log(runs_root(workspace) / run_id / "board") if e.op == "create"]
    assert [e.fields["subject"] for e in board] == ["job one"]
    done = coterie("resume", run_id, "goal three", "-p", cwd=workspace, home=home)
    assert (done.returncode, done.stdout) == (0, "done three\n"), done.stderr
    mate = transcript_path(runs_root(workspace) / run_id, "alice")
    said = json.dumps(read_history(mate))
    assert "did one" in said
    assert "job two" not in said


def test_bad_input_is_one_line_and_exit_2(workspace: Path, home: Path) -> None:
    run_id, _ = two_prompts(workspace, home)
    for args in (["nope", "--to", "1"], [run_id, "--to", "9"], [run_id, "--to", "0"]):
        done = coterie("rewind", *args, cwd=workspace, home=home)
        assert done.returncode == 2, (args, done.stderr)
        assert done.stderr.count("\n") == 1, done.stderr
    done = coterie("checkpoints", "nope", cwd=workspace, home=home)
    assert done.returncode == 2
