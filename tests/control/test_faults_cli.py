"""``coterie crash`` / ``stop`` / ``cancel`` on live team runs, and their refusals."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from typing import TYPE_CHECKING, Any

import trio

from coterie.board import read_log
from coterie.events import read_events
from coterie.mailbox import PostOffice, peek_mailbox
from coterie.messages import Message
from coterie.runs import runs_root
from tests.agent.conftest import clean_env, coterie, wait_for
from tests.agent.test_resume_cli import only_run, start, write_scenario
from tests.team.test_team_cli import BYPASS, create

if TYPE_CHECKING:
    from pathlib import Path


def bash(command: str) -> dict[str, Any]:
    return {"tool_uses": [{"name": "Bash", "input": {"command": command}}]}


def team_of_two(
    alice_sleeps: float, bob_does_both: bool = False
) -> dict[str, list[dict[str, Any]]]:
    """The lead gives job a to alice (one slow Bash step) and job b to bob.

    alice's step lasts *alice_sleeps* seconds, or until a file ``release`` is in the
    workspace (:func:`release`): a test whose command must land while she works
    gives her long and releases her once it has, instead of betting on a time."""
    bob = [bash("sleep 0.2"), {"text": "job b done"}]
    waits = waits_for_release(alice_sleeps)
    if bob_does_both:
        bob += [bash("echo a-by-bob > a.txt"), {"text": "job a done by bob"}]
    return {
        "lead": [
            {"tool_uses": [create("job a", "alice"), create("job b", "bob")]},
            {"text": "planned"},
            *({"text": "noted"} for _ in range(4)),
        ],
        "alice": [bash(f"touch alice-started; {waits}"), {"text": "job a done"}],
        "bob": bob,
    }


def waits_for_release(seconds: float) -> str:
    """A shell command that ends after *seconds*, or sooner once ``release`` exists."""
    rounds = round(seconds * 20)
    return f"for i in $(seq {rounds}); do [ -e release ] && break; sleep 0.05; done"


def release(workspace: Path) -> None:
    """Let alice's slow step (:func:`team_of_two`) end now."""
    (workspace / "release").touch()


#: How long alice works when a test releases her: longer than any load makes its
#: commands take.
LONG = 120


def start_team(
    tracks: dict[str, list[dict[str, Any]]], workspace: Path, home: Path, tmp_path: Path
) -> tuple[subprocess.Popen[str], str]:
    scenario = write_scenario(tmp_path / "s.json", tracks)
    proc = start(["team", "-p", *BYPASS, "--scenario", str(scenario), "go"], workspace, home)
    wait_for(workspace / "alice-started", proc, "alice never started her job", settle=0.1)
    return proc, only_run(workspace)


def events(workspace: Path) -> list[Any]:
    return list(read_events(runs_root(workspace) / only_run(workspace) / "events.jsonl"))


def trail(workspace: Path, actor: str) -> list[str]:
    """The supervision and fault events about *actor*, in order."""
    kinds = ("fault.", "actor.crashed", "actor.restarted", "actor.exited", "actor.started")
    return [
        e.type
        for e in events(workspace)
        if e.data.get("actor") == actor and e.type.startswith(kinds)
    ]


def tasks_of(workspace: Path) -> dict[str, str]:
    """Each task's last status on the board's log (both tasks are created, always)."""
    status: dict[str, str] = {}
    for entry in read_log(runs_root(workspace) / only_run(workspace) / "board"):
        status.setdefault(entry.task_id, "pending")
        if "status" in entry.fields:
            status[entry.task_id] = str(entry.fields["status"])
    assert sorted(status) == ["task_1", "task_2"]
    return status


def test_crash_a_teammate_mid_task_then_it_restarts_and_the_run_completes(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    proc, run_id = start_team(team_of_two(LONG), workspace, home, tmp_path)
    done = coterie(
        "crash", run_id[:12], "alice", "--reason", "pulled the plug", cwd=workspace, home=home
    )
    release(workspace)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("crashed alice (InjectedCrash: pulled the plug); its supervisor")
    assert done.stdout.count("\n") == 1
    _out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert trail(workspace, "alice") == [
        "actor.started",
        "fault.injected",
        "actor.crashed",
        "actor.restarted",
        "actor.started",
        "actor.exited",  # the team shut down once every task was done
    ]
    (fault,) = [e for e in events(workspace) if e.type == "fault.injected"]
    assert fault.data["fault"] == "crash"
    assert fault.data["reason"] == "pulled the plug"
    assert fault.data["by"].startswith("cli pid ")
    (crash,) = [e for e in events(workspace) if e.type == "actor.crashed"]
    assert crash.data["reason"] == "InjectedCrash: pulled the plug"
    assert crash.seq > fault.seq
    assert set(tasks_of(workspace).values()) == {"completed"}
    mailboxes = runs_root(workspace) / run_id / "mailboxes"
    assert not [p.name for p in mailboxes.iterdir() if p.name.startswith("reply-")]


def test_stop_a_teammate_it_exits_normally_its_task_goes_to_another(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    tracks = team_of_two(LONG, bob_does_both=True)
    proc, run_id = start_team(tracks, workspace, home, tmp_path)
    done = coterie("stop", run_id, "alice", cwd=workspace, home=home)
    release(workspace)
    assert done.returncode == 0, done.stderr
    assert "does not restart it (transient: a normal exit)" in done.stdout
    _out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert trail(workspace, "alice") == ["actor.started", "fault.injected", "actor.exited"]
    assert set(tasks_of(workspace).values()) == {"completed"}
    told = [e for e in events(workspace) if e.type == "team.message"]
    assert any(e.data["kind"] == "teammate_stopped" for e in told)


def test_crash_a_teammates_supervisor_it_is_not_restarted_and_its_task_goes_to_another(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    proc, run_id = start_team(team_of_two(LONG, bob_does_both=True), workspace, home, tmp_path)
    done = coterie("crash", run_id, "alice-sup", cwd=workspace, home=home)
    release(workspace)
    assert done.returncode == 0, done.stderr
    assert "does not restart it (temporary)" in done.stdout
    _out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert trail(workspace, "alice-sup")[-2:] == ["fault.injected", "actor.crashed"]
    assert set(tasks_of(workspace).values()) == {"completed"}


def test_stop_the_lead_a_permanent_child_is_restarted_even_after_a_normal_exit(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    proc, run_id = start_team(team_of_two(LONG), workspace, home, tmp_path)
    done = coterie("stop", run_id, "lead", cwd=workspace, home=home)
    release(workspace)
    assert done.returncode == 0, done.stderr
    assert "permanent" in done.stdout
    _out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    lead = trail(workspace, "lead")
    assert lead[lead.index("fault.injected") :][:4] == [
        "fault.injected",
        "actor.exited",
        "actor.restarted",
        "actor.started",
    ]
    assert set(tasks_of(workspace).values()) == {"completed"}


def test_cancel_is_ctrl_c_exit_130_then_resume_completes_and_a_stale_fault_is_not_applied(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    proc, run_id = start_team(team_of_two(LONG), workspace, home, tmp_path)
    done = coterie("cancel", run_id, cwd=workspace, home=home)
    release(workspace)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("cancelled the run")
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    faults = [e for e in events(workspace) if e.type == "fault.injected"]
    assert [(e.data["fault"], e.data["actor"]) for e in faults] == [("cancel", None)]
    # A crash request left in the channel while the run was down (as after a
    # kill -9 mid-request) is answered on resume, never applied.
    stale = send_raw(runs_root(workspace) / run_id, {"fault": "crash", "actor": "alice", "by": "t"})
    resumed = coterie("resume", run_id, cwd=workspace, home=home)
    assert resumed.returncode == 0, resumed.stderr
    assert set(tasks_of(workspace).values()) == {"completed"}
    assert [e.data["id"] for e in events(workspace) if e.type == "fault.injected"] == [
        faults[0].data["id"]
    ]
    assert not any(e.type == "actor.crashed" for e in events(workspace))
    (answer,) = peek_mailbox(runs_root(workspace) / run_id / "mailboxes" / "tester")
    assert (answer.correlation_id, answer.body["applied"]) == (stale, False)
    assert "never applied twice" in answer.body["message"]


def send_raw(run_dir: Path, body: dict[str, Any]) -> str:
    """Append a fault request to the run's control mailbox directly; its id."""
    message = Message.new("tester", "control", "inject", body, reply_to="tester")

    async def send() -> None:
        post = PostOffice(run_dir / "mailboxes")
        post.open("tester")
        await post.send(message)
        await post.aclose()

    trio.run(send)
    return message.id


def test_refusals_one_line_each(workspace: Path, home: Path, tmp_path: Path) -> None:
    nothing = coterie("crash", "nosuchrun", "alice", cwd=workspace, home=home)
    assert nothing.returncode == 2
    assert "not found" in nothing.stderr
    assert nothing.stderr.count("\n") == 1
    proc, run_id = start_team(team_of_two(LONG), workspace, home, tmp_path)
    try:
        typo = coterie("crash", run_id, "alcie", cwd=workspace, home=home)
        assert typo.returncode == 2
        assert "no actor 'alcie' in this run" in typo.stderr
        assert "did you mean 'alice'?" in typo.stderr
        assert "bob" in typo.stderr
        carrier = coterie("crash", run_id, "control", cwd=workspace, home=home)
        assert carrier.returncode == 2
        assert "carries the control channel" in carrier.stderr
        os.kill(proc.pid, signal.SIGSTOP)
        try:
            late = coterie("crash", run_id, "bob", "--timeout", "1", cwd=workspace, home=home)
        finally:
            os.kill(proc.pid, signal.SIGCONT)
        assert late.returncode == 1
        assert "did not answer within 1 s" in late.stderr
    finally:
        release(workspace)
        _out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    # The request that timed out was delivered once the run went on: applied then.
    over = coterie("stop", run_id, "alice", cwd=workspace, home=home)
    assert over.returncode == 1
    assert over.stderr.strip() == f"coterie stop: run {run_id} is not running; nothing to stop"
    (tmp_path / "one.json").write_text(json.dumps({"tracks": {"lead": [{"text": "hi"}]}}))
    second = coterie(
        "run", "-p", "--scenario", str(tmp_path / "one.json"), "hi", cwd=workspace, home=home
    )
    assert second.returncode == 0, second.stderr
    ambiguous = coterie("cancel", run_id[:4], cwd=workspace, home=home)
    assert ambiguous.returncode == 2
    assert "ambiguous" in ambiguous.stderr


def test_crash_during_a_model_call_over_the_real_sdk_path(
    workspace: Path, home: Path, tmp_path: Path, mock_server: Any
) -> None:
    """alice's request is held by ``coterie mock-server --latency``; the crash cuts
    the HTTP call short, the restarted alice asks again and the run completes."""
    tracks = team_of_two(0)
    tracks["alice"] = [{"text": "job a done"}, {"text": "job a done"}]
    url = mock_server(write_scenario(tmp_path / "s.json", tracks), "--latency", "1.5")
    env = clean_env(HOME=str(home), ANTHROPIC_BASE_URL=url, ANTHROPIC_API_KEY="k")
    proc = subprocess.Popen(
        [sys.executable, "-m", "coterie", "team", "-p", *BYPASS, "go"],
        cwd=workspace, env=env, stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while not asked(workspace, "alice"):
        assert time.monotonic() < deadline, "alice never asked her model"
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.05)
    done = coterie("crash", only_run(workspace), "alice", cwd=workspace, home=home)
    assert done.returncode == 0, done.stderr
    _out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert trail(workspace, "alice")[:5] == [
        "actor.started",
        "fault.injected",
        "actor.crashed",
        "actor.restarted",
        "actor.started",
    ]
    assert set(tasks_of(workspace).values()) == {"completed"}


def asked(workspace: Path, actor: str) -> bool:
    """Whether *actor* has asked its model for a turn (its call is now in flight)."""
    runs = runs_root(workspace)
    logs = list(runs.glob("*/events.jsonl")) if runs.is_dir() else []
    return any(
        e.type == "model.requested" and e.data.get("actor") == actor
        for log in logs
        for e in read_events(log)
    )


def test_crash_the_lead_of_a_solo_run_it_goes_on_from_its_transcript(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    tracks = {"lead": [bash("touch alice-started; sleep 3"), {"text": "all done"}]}
    scenario = write_scenario(tmp_path / "s.json", tracks)
    proc = start(["run", "-p", *BYPASS, "--scenario", str(scenario), "go"], workspace, home)
    wait_for(workspace / "alice-started", proc, "the lead never ran its command", settle=0.1)
    done = coterie("crash", only_run(workspace), "lead", cwd=workspace, home=home)
    assert done.returncode == 0, done.stderr
    assert "its supervisor team restarts it" in done.stdout
    out, err = proc.communicate(timeout=120)
    assert (proc.returncode, out) == (0, "all done\n"), err
    assert trail(workspace, "lead")[1:4] == ["fault.injected", "actor.crashed", "actor.restarted"]
