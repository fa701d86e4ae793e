"""``prompt``, ``agent`` and ``async: true`` hooks through the real CLI on scenarios.

A ``prompt`` hook's question is answered by the scenario's ``hook-prompt``
track, an ``agent`` hook's by its ``hook-agent`` track (the read-only tools
it calls run for real).
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any

from coterie.processes import group_alive
from tests.agent.conftest import coterie
from tests.agent.test_resume_cli import write_scenario
from tests.team.test_team_cli import BYPASS, write

if TYPE_CHECKING:
    import subprocess
    from pathlib import Path


def settings(home: Path, hooks: dict[str, Any]) -> None:
    (home / ".claude").mkdir(exist_ok=True)
    (home / ".claude" / "settings.json").write_text(json.dumps({"hooks": hooks}))


def judged(
    tmp_path: Path, workspace: Path, home: Path, tracks: dict[str, Any]
) -> subprocess.CompletedProcess[str]:
    scenario = write_scenario(tmp_path / "s.json", tracks)
    args = ["run", "-p", *BYPASS, "--scenario", str(scenario), "go"]
    return coterie(*args, cwd=workspace, home=home)


def bash(command: str) -> dict[str, Any]:
    return {"tool_uses": [{"name": "Bash", "input": {"command": command}}]}


def on_bash(kind: str, prompt: str) -> dict[str, Any]:
    return {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": kind, "prompt": prompt}]}]}


def test_a_prompt_hook_blocks_a_bash_call_when_the_model_says_no(
    tmp_path: Path, workspace: Path, home: Path
) -> None:
    settings(home, on_bash("prompt", "Refuse anything that touches files: $ARGUMENTS"))
    done = judged(
        tmp_path,
        workspace,
        home,
        {
            "lead": [bash("touch made.txt"), {"text": "unreachable"}],
            "hook-prompt": [
                {
                    "expect": '"tool_input": {"command": "touch made.txt"',
                    "text": '{"ok": false, "reason": "it touches a file"}',
                }
            ],
        },
    )
    assert not (workspace / "made.txt").exists()
    assert "it touches a file" in done.stdout + done.stderr


def test_a_prompt_hook_lets_a_bash_call_run_when_the_model_says_ok(
    tmp_path: Path, workspace: Path, home: Path
) -> None:
    settings(home, on_bash("prompt", "Refuse anything dangerous: $ARGUMENTS"))
    done = judged(
        tmp_path,
        workspace,
        home,
        {
            "lead": [bash("touch made.txt"), {"text": "made it"}],
            "hook-prompt": [{"text": 'Sure: ```json\n{"ok": true}\n```'}],
        },
    )
    assert done.returncode == 0, done.stderr
    assert (workspace / "made.txt").exists()
    assert done.stdout.strip() == "made it"


def test_a_malformed_answer_blocks_the_call(tmp_path: Path, workspace: Path, home: Path) -> None:
    settings(home, on_bash("prompt", "Judge $ARGUMENTS"))
    judged(
        tmp_path,
        workspace,
        home,
        {
            "lead": [bash("touch made.txt"), {"text": "after"}],
            "hook-prompt": [{"text": "I think it is fine."}],
        },
    )
    assert not (workspace / "made.txt").exists()


def test_a_stop_prompt_hook_sends_the_agent_back_to_work(
    tmp_path: Path, workspace: Path, home: Path
) -> None:
    stop = {"Stop": [{"hooks": [{"type": "prompt", "prompt": "Is the work done? $ARGUMENTS"}]}]}
    settings(home, stop)
    done = judged(
        tmp_path,
        workspace,
        home,
        {
            "lead": [
                {"text": "first answer"},
                {"expect": "write the changelog too", "text": "changelog written"},
            ],
            "hook-prompt": [
                {"expect": '"hook_event_name": "Stop"', "text": '{"ok": false, '
                 '"reason": "write the changelog too"}'},
                {"text": '{"ok": true}'},
            ],
        },
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "changelog written"


def test_an_agent_hook_reads_a_file_before_it_answers(
    tmp_path: Path, workspace: Path, home: Path
) -> None:
    (workspace / "POLICY.md").write_text("Creating marker files is allowed.\n")
    settings(home, on_bash("agent", "Allow the call only if POLICY.md allows it: $ARGUMENTS"))
    read = {"name": "Read", "input": {"file_path": "POLICY.md"}}
    done = judged(
        tmp_path,
        workspace,
        home,
        {
            "lead": [bash("touch made.txt"), {"text": "made it"}],
            "hook-agent": [
                {"tool_uses": [read]},
                {"expect": "Creating marker files is allowed.", "text": '{"ok": true}'},
            ],
        },
    )
    assert done.returncode == 0, done.stderr
    assert (workspace / "made.txt").exists()


def test_an_async_hook_does_not_delay_the_turn_and_is_reaped_at_the_run_end(
    tmp_path: Path, workspace: Path, home: Path
) -> None:
    pid_file = tmp_path / "hook.pid"
    slow = f'echo $$ >> "{pid_file}"; exec sleep 60'
    hook = {"type": "command", "command": slow, "async": True, "timeout": 120}
    settings(home, {"PostToolUse": [{"matcher": "Bash", "hooks": [hook]}]})
    started = time.monotonic()
    done = judged(
        tmp_path,
        workspace,
        home,
        {
            "lead": [
                bash("echo hi"),
                # The hook runs while the turn goes on: this call sees it started.
                bash(f"while [ ! -s '{pid_file}' ]; do sleep 0.05; done"),
                {"text": "done"},
            ]
        },
    )
    took = time.monotonic() - started
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "done"
    assert took < 45  # the hook sleeps 60s: the run did not wait for it
    for pid in map(int, pid_file.read_text().split()):  # one per Bash call's hook
        assert not group_alive(pid), f"the async hook {pid} outlived the run"


def test_an_async_hooks_context_reaches_the_model_on_a_later_turn(
    tmp_path: Path, workspace: Path, home: Path
) -> None:
    answer = {
        "hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "LINT: 0"}
    }
    marker = tmp_path / "hook-done"
    hook = {
        "type": "command",
        "command": f"echo '{json.dumps(answer)}'; touch '{marker}'",
        "async": True,
    }
    settings(home, {"PostToolUse": [{"matcher": "Write", "hooks": [hook]}]})
    wait = f"while [ ! -f '{marker}' ]; do sleep 0.05; done; sleep 1"
    done = judged(
        tmp_path,
        workspace,
        home,
        {
            "lead": [
                write("a.py", "x = 1\n"),
                {"expect_not": "LINT: 0", **bash(wait)},
                {"expect": '<hook-feedback event="PostToolUse">LINT: 0', "text": "linted"},
            ]
        },
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "linted"
