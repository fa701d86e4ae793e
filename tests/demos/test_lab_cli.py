"""The lab demos (docs/lab.md), each a real run at ``--pace 0``: what their event logs hold."""

from __future__ import annotations

import json
import re
import shlex
import signal
import subprocess
import sys
import time
from collections import Counter
from typing import TYPE_CHECKING

import pytest

from coterie.events import Event, read_events
from coterie.runs import read_config, run_info, runs_root
from tests.agent.conftest import clean_env, coterie, home, workspace

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["home", "workspace"]


def _demo(name: str, workspace: Path, home: Path, *extra: str) -> tuple[str, list[Event]]:
    """Run ``coterie demo NAME --pace 0``; its stdout and the events of its run."""
    done = coterie("demo", name, "--pace", "0", *extra, "--workdir", str(workspace),
                   cwd=workspace, home=home)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    (run_dir,) = runs_root(workspace).iterdir()
    first = done.stdout.splitlines()[0]
    assert run_dir.name in first  # the run id comes first, for `coterie watch`
    assert str(workspace) in done.stdout.splitlines()[1]
    assert read_config(run_dir)["demo"] == name
    assert run_info(run_dir).state == "completed"
    return done.stdout, list(read_events(run_dir / "events.jsonl"))


def _of(events: list[Event], type: str) -> list[dict[str, object]]:
    return [e.data for e in events if e.type == type]


def test_a_long_odd_workdir_is_printed_whole_and_quoted(tmp_path: Path, home: Path) -> None:
    """The workdir line and the watch command are never wrapped, nor read as markup:
    they are copied from (a piped stdout is 80 columns to rich)."""
    workspace = tmp_path / ("a [bold]long name " + "x" * 80)
    workspace.mkdir()
    done = coterie("demo", "storm", "--pace", "0", "--workdir", str(workspace),
                   cwd=workspace, home=home)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[1] == f"workdir: {workspace}"
    assert lines[2].endswith(f" --workdir {shlex.quote(str(workspace))}")


def test_storm_exceeds_the_intensity_gives_up_and_escalates(workspace: Path, home: Path) -> None:
    out, events = _demo("storm", workspace, home)
    gave_up = [d["supervisor"] for d in _of(events, "supervisor.gave_up")]
    assert gave_up == ["workers", "workers", "root"]
    escalated = [(d["supervisor"], d["actor"]) for d in _of(events, "supervisor.escalated")]
    assert escalated == [("root", "workers"), ("root", "workers")]
    crashes = Counter(d["actor"] for d in _of(events, "actor.crashed"))
    assert crashes == {"parser": 8}  # 4 per incarnation of workers: one over its 3 restarts
    assert [d["actor"] for d in _of(events, "actor.restarted")].count("workers") == 1
    assert not any(
        d.get("step") == "parsed" and d.get("job") == 3 for d in _of(events, "demo.note")
    )
    assert "8 crashes · 7 restarts · 3 give-ups · 2 escalations" in out


def test_strategies_restart_the_crashed_child_or_all_of_them(workspace: Path, home: Path) -> None:
    out, events = _demo("strategies", workspace, home)
    restarted: dict[object, set[object]] = {}
    for d in _of(events, "actor.restarted"):
        restarted.setdefault(d["supervisor"], set()).add(d["actor"])
    assert restarted == {
        "one_for_one": {"parser-1"},
        "one_for_all": {"fetcher-2", "parser-2", "writer-2"},
    }
    written = Counter(d["actor"] for d in _of(events, "demo.note") if d["step"] == "written")
    assert written == {"writer-1": 3, "writer-2": 3}
    assert "under one_for_one: restarted parser-1;" in out
    assert "under one_for_all: restarted fetcher-2, parser-2, writer-2;" in out


def _steps(events: list[Event], actor: str) -> list[object]:
    """What *actor* went through: its events' types, its demo notes' steps."""
    return [
        e.data.get("step") if e.type == "demo.note" else e.type
        for e in events
        if e.data.get("actor") == actor
    ]


def test_shielded_clean_up_finishes_before_the_actor_stops(workspace: Path, home: Path) -> None:
    out, events = _demo("shielded", workspace, home)
    user = [e.seq for e in events if e.data.get("step") == "cancel"]
    saver = _steps(events, "saver")
    assert saver.count("cleanup_step") == 3
    assert saver.index("cleanup_finished") < saver.index("actor.stopped")
    assert "actor.abandoned" not in saver
    assert "actor.crashed" not in saver
    started = next(e.seq for e in events if e.data.get("step") == "cleanup_started")
    assert user[0] < started  # the clean-ups start after the cancellation, not before
    assert "clean-up finished, then stopped: yes" in out


def test_a_clean_up_longer_than_its_timeout_is_abandoned_and_finishes_anyway(
    workspace: Path, home: Path
) -> None:
    out, events = _demo("shielded", workspace, home)
    hasty = _steps(events, "hasty")
    assert hasty.index("cleanup_started") < hasty.index("actor.abandoned")
    assert hasty.index("actor.abandoned") < hasty.index("cleanup_finished")
    assert "actor.stopped" not in hasty
    assert "its clean-up finished in the background: yes" in out


def test_kill9_loses_nothing_and_does_nothing_twice(workspace: Path, home: Path) -> None:
    out, events = _demo("kill9", workspace, home)
    (ledger_file,) = workspace.glob("ledger-*.jsonl")
    lines = ledger_file.read_text().splitlines()
    ledger = [json.loads(line)["job"] for line in lines]
    assert sorted(ledger) == list(range(1, 9))  # each job exactly once
    notes = _of(events, "demo.note")
    assert [d["job"] for d in notes if d["step"] == "done"] == list(range(1, 9))
    assert [d["job"] for d in notes if d["step"] == "skipped"] == [4]  # delivered again
    starts = [d["attempt"] for d in _of(events, "actor.started") if d["actor"] == "worker"]
    assert starts == [0, 0]  # two processes, one incarnation each: no crash, a kill
    assert re.search(r"8 sent · 8 done · done twice: 0 · lost: 0 · delivered again and "
                     r"skipped: 1 · exit codes: -9 \(killed\), 0", out)  # fmt: skip


@pytest.mark.parametrize("name", ["storm", "strategies", "shielded", "kill9", "runtime"])
def test_pace_slows_every_demo(name: str, workspace: Path, home: Path) -> None:
    """--pace is honoured: a paced demo takes longer than its steps at pace 0 would."""
    started = time.monotonic()
    done = coterie("demo", name, "--pace", "0.05", "--workdir", str(workspace), cwd=workspace,
                   home=home)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert time.monotonic() - started >= 0.15


def test_a_negative_pace_is_a_usage_error(workspace: Path, home: Path) -> None:
    done = coterie("demo", "storm", "--pace", "-1", cwd=workspace, home=home)
    assert done.returncode == 2
    assert "--pace" in done.stderr


def test_kill9_again_in_the_same_workspace_starts_from_nothing(workspace: Path, home: Path) -> None:
    """Each run has its own ledger: an earlier run's work does not count for the next."""
    for _ in range(2):
        done = coterie("demo", "kill9", "--pace", "0", "--workdir", str(workspace),
                       cwd=workspace, home=home)  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        assert "8 done · done twice: 0 · lost: 0" in done.stdout
    assert len(list(workspace.glob("ledger-*.jsonl"))) == 2


@pytest.mark.parametrize("name", ["runtime", "team"])
def test_a_finished_demo_leaves_a_finished_run_and_runs_advises_no_resume(
    name: str, workspace: Path, home: Path
) -> None:
    """A demo run cannot be resumed: left `interrupted`, `coterie runs` would advise
    a resume that `coterie resume` then refuses."""
    done = coterie("demo", name, "--pace", "0", "--workdir", str(workspace), cwd=workspace,
                   home=home)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    (run_dir,) = runs_root(workspace).iterdir()
    assert run_info(run_dir).state == "completed"
    listed = coterie("runs", "--workdir", str(workspace), cwd=workspace, home=home)
    assert listed.returncode == 0, listed.stderr
    assert "completed" in listed.stdout
    assert "resume" not in listed.stdout


def test_a_cancel_ends_the_paced_team_demo_as_ctrl_c_would(workspace: Path, home: Path) -> None:
    """``coterie cancel`` delivers Ctrl-C to the run's process: the team demo, driven
    as ``coterie team`` is, stops at once (exit 130) and its run is left interrupted,
    even started as a script's background job (``&``), which inherits SIGINT ignored.
    The demo relied on Python's own Ctrl-C handling, which an ignored SIGINT turns
    off: the cancel was lost and the team went on to its end."""
    team = subprocess.Popen(
        [sys.executable, "-m", "coterie", "demo", "team", "--pace", "3", "--workdir",
         str(workspace)],
        cwd=workspace, env=clean_env(HOME=str(home)), stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),  # as `&` does
    )  # fmt: skip
    try:
        assert team.stdout is not None
        run_id = None
        while run_id is None:
            line = team.stdout.readline()
            assert line, team.communicate()
            found = re.search(r"\d{8}-\d{6}-[0-9a-f]{6}", line)
            run_id = found.group() if found else None
        cancel = coterie("cancel", run_id, "--workdir", str(workspace), cwd=workspace, home=home)
        assert cancel.returncode == 0, cancel.stderr
        _out, err = team.communicate(timeout=60)
        assert team.returncode == 130, err
    finally:
        if team.poll() is None:
            team.kill()
            team.communicate()
    assert run_info(runs_root(workspace) / run_id).state == "interrupted"
