"""Workflow through the real CLI: agents fanned out as subagents (scripted, and through
the real SDK against ``coterie mock-server``), and a run killed mid-workflow resumed
with no finished agent run again."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest

from coterie.runs import runs_root
from tests.agent.conftest import coterie, home, mock_server, wait_for, workspace
from tests.agent.test_resume_cli import start, write_scenario
from tests.team.test_team_cli import events_of

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["home", "mock_server", "workspace"]  # the fixtures of tests/agent

BYPASS = ("--permission-mode", "bypassPermissions")
META = (
    "export const meta = {name: 'fan', description: 'two then a check', phases: [{title: 'Ask'}]}\n"
)
FAN = META + (
    "phase('Ask')\n"
    "const answers = await parallel(['a', 'b'].map((x) => () => agent('say ' + x, {label: x})))\n"
    "const checked = await agent('check ' + answers.sort().join(','),"
    " {schema: {type: 'object', properties: {ok: {type: 'boolean'}}, required: ['ok']}})\n"
    "log('checked ' + answers.length)\n"
    "return {answers, checked}"
)


def journals(workspace: Path) -> list[list[dict[str, Any]]]:
    (run_dir,) = runs_root(workspace).iterdir()
    found = sorted((run_dir / "workflows").glob("*/journal.jsonl"), key=lambda p: p.stat().st_mtime)
    return [[json.loads(line) for line in p.read_text().splitlines()] for p in found]


@pytest.mark.parametrize("via", ["scripted", "sdk"])
def test_a_workflow_fans_out_to_subagents_and_returns_its_value(
    workspace: Path, home: Path, mock_server: Any, via: str
) -> None:
    tracks = {
        "lead": [
            {"tool_uses": [{"name": "Workflow", "input": {"script": FAN, "description": "fan"}}]},
            {"expect": "completed (3 agents ran)", "text": "all done"},
        ],
        "subagent": [
            {"text": "one"},
            {"text": "two"},
            {
                "expect": "check one,two",
                "tool_uses": [{"name": "StructuredOutput", "input": {"ok": True}}],
            },
            {"text": "recorded"},
        ],
    }
    scenario = write_scenario(workspace.parent / "s.json", tracks)
    if via == "sdk":
        source: tuple[str, ...] = ()
        env = {"ANTHROPIC_BASE_URL": mock_server(scenario)}
    else:
        source, env = ("--scenario", str(scenario)), {}
    done = coterie(
        "run", "-p", "--output-format", "json", *source, "go", cwd=workspace, home=home, env=env
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["result"] == "all done"
    (journal,) = journals(workspace)
    assert journal[-1] == {
        "type": "end",
        "status": "completed",
        "result": {"answers": ["one", "two"], "checked": {"ok": True}},
    }
    steps = [
        (e.data["step"], e.data["text"])
        for e in events_of(workspace)
        if e.type == "workflow.progress"
    ]
    assert ("phase", "Ask") in steps
    assert ("log", "checked 2") in steps
    assert sorted(t for s, t in steps if s == "agent.finished") == ["a", "b", "check one,two"]
    started = [e for e in events_of(workspace) if e.type == "subagent.started"]
    assert len(started) == 3  # each agent() a subagent of the lead


def test_a_run_killed_mid_workflow_resumes_without_running_a_finished_agent_again(
    workspace: Path, home: Path
) -> None:
    script = META + "const a = await agent('first')\nconst b = await agent('second')\nreturn [a, b]"
    call = {"name": "Workflow", "input": {"script": script}}
    tracks = {
        "lead": [
            {"tool_uses": [call]},
            # After the resume: the call was cut short; the model calls it again.
            {"expect": "interrupted", "tool_uses": [call]},
            {"expect": "1 answer reused", "text": "both done"},
        ],
        "subagent": [
            {"text": "A"},
            {
                "tool_uses": [
                    {"name": "Bash", "input": {"command": "touch second.started; sleep 60"}}
                ]
            },
            {"text": "B"},
        ],
    }
    scenario = write_scenario(workspace.parent / "s.json", tracks)
    proc = start(["run", "-p", *BYPASS, "--scenario", str(scenario), "go"], workspace, home)
    try:
        wait_for(workspace / "second.started", proc, "the second agent never started")
    finally:
        proc.kill()
        proc.communicate(timeout=30)
    (first,) = journals(workspace)
    assert [line["type"] for line in first] == ["start", "result"]  # cut short after 'first'
    (run_dir,) = runs_root(workspace).iterdir()
    resumed = coterie("resume", run_dir.name, "-p", cwd=workspace, home=home)
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stdout.strip() == "both done"
    _, second = journals(workspace)
    assert second[-1]["result"] == ["A", "B"]
    prompts = [
        e.data["text"]
        for e in events_of(workspace)
        if e.type == "workflow.progress" and e.data["step"] == "agent.started"
    ]
    assert prompts == ["first", "second", "second"]  # 'first' ran once, before the kill
