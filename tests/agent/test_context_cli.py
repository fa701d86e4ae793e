"""The compaction funnel on real CLI runs: long runs stay in budget, too-long prompts
are compacted and retried, ``coterie compact`` keeps the user's words."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest

from coterie.events import read_events
from coterie.runs import runs_root
from tests.agent.conftest import coterie
from tests.agent.test_resume_cli import only_run, transcript_messages, write_scenario

if TYPE_CHECKING:
    from pathlib import Path

WINDOW = 30_000
TOO_LONG = {
    "status": 400,
    "type": "invalid_request_error",
    "message": "prompt is too long: 250000 tokens > 200000 maximum",
}


def long_run(turns: int) -> list[dict[str, Any]]:
    """*turns* Bash calls printing 8-60 KB each (some past the spill size), then an answer."""
    calls: list[dict[str, Any]] = []
    for i in range(turns):
        size = 12_000 if i % 5 else 12_000 + 200 * (i % 50)  # `seq` prints ~5-6 chars a line
        calls.append({"tool_uses": [{"name": "Bash", "input": {"command": f"seq {i} {size}"}}]})
    return [*calls, {"text": "long run done"}]


@pytest.mark.slow
def test_a_long_run_stays_in_budget_through_the_real_api_path(
    workspace: Path, home: Path, tmp_path: Path, mock_server: Any
) -> None:
    """300 turns of large outputs: the mock server refuses any prompt over the window
    (as the API does) and validates every request, tool pairs included."""
    scenario = write_scenario(
        tmp_path / "long.json",
        {"lead": long_run(300), "summarizer": [{"text": "summary"}] * 20},
    )
    url = mock_server(scenario, "--context-window", str(WINDOW))
    done = coterie(
        "run",
        "-p",
        "--permission-mode",
        "bypassPermissions",
        "--context-window",
        str(WINDOW),
        "make a long run",
        cwd=workspace,
        home=home,
        env={"ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "test-key"},
        timeout=300,
    )
    assert (done.returncode, done.stdout) == (0, "long run done\n"), done.stderr[-2000:]
    events = list(read_events(runs_root(workspace) / only_run(workspace) / "events.jsonl"))
    sent = [e.data["usage"]["input_tokens"] for e in events if e.type == "agent.message"]
    assert len(sent) == 301
    assert max(sent) <= WINDOW
    kinds = {e.type for e in events}
    assert {"context.spilled", "context.cleared"} <= kinds
    assert "context.reactive" not in kinds  # the proactive checks kept every prompt in budget


def test_a_prompt_too_long_is_compacted_and_retried_once(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    scenario = write_scenario(
        tmp_path / "s.json",
        {
            "lead": [
                {"tool_uses": [{"name": "Bash", "input": {"command": "seq 1 20000"}}]},
                {"error": TOO_LONG},
                {"text": "fine after compaction"},
            ],
            "summarizer": [{"text": "the user asked for numbers; seq ran"}],
        },
    )
    done = coterie(
        "run", "-p", "--permission-mode", "bypassPermissions", "--scenario", str(scenario),
        "count", cwd=workspace, home=home,
    )  # fmt: skip
    assert (done.returncode, done.stdout) == (0, "fine after compaction\n"), done.stderr
    events = list(read_events(runs_root(workspace) / only_run(workspace) / "events.jsonl"))
    (reactive,) = [e for e in events if e.type == "context.reactive"]
    assert reactive.data["reported"] == 250_000


def test_a_second_prompt_too_long_is_a_clear_error(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    scenario = write_scenario(
        tmp_path / "s.json",
        {
            "lead": [
                {"tool_uses": [{"name": "Bash", "input": {"command": "seq 1 20000"}}]},
                {"error": TOO_LONG},
                {"error": TOO_LONG},
            ],
            "summarizer": [{"text": "summary"}],
        },
    )
    done = coterie(
        "run", "-p", "--output-format", "json", "--permission-mode", "bypassPermissions",
        "--scenario", str(scenario), "count", cwd=workspace, home=home,
    )  # fmt: skip
    assert done.returncode == 1
    result = json.loads(done.stdout)
    # Claude Code's shape of an API error's result (coterie's own subtype is error_model).
    assert (result["subtype"], result["is_error"], result["terminal_reason"]) == (
        "success",
        True,
        "api_error",
    )
    assert result["api_error_status"] == 400
    assert "even after compacting the conversation" in result["result"]


def test_compact_keeps_the_users_instructions_verbatim(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    """Stage 4 through ``coterie compact``: the summary replaces the history, the user's
    own words (and the limit they set) survive it word for word."""
    instruction = "Refactor the parser. Don't push to main, and keep the public API!"
    scenario = write_scenario(
        tmp_path / "s.json",
        {
            "lead": [
                {"tool_uses": [{"name": "Bash", "input": {"command": "seq 1 3000"}}]},
                {"text": "first pass done"},
                {"expect": "go on", "text": "resumed from the summary"},
            ],
            "summarizer": [{"expect": "focus on the parser", "text": "SUMMARY: seq ran."}],
        },
    )
    args = ("-p", "--permission-mode", "bypassPermissions", "--scenario", str(scenario))
    first = coterie("run", *args, instruction, cwd=workspace, home=home)
    assert first.returncode == 0, first.stderr
    run_id = only_run(workspace)
    compacted = coterie("compact", run_id, "focus on the parser", cwd=workspace, home=home)
    assert compacted.returncode == 0, compacted.stderr
    assert "compacted run" in compacted.stdout
    history = transcript_messages(runs_root(workspace) / run_id)
    texts = [b.get("text", "") for m in history for b in m["content"] if isinstance(b, dict)]
    assert any(instruction in t for t in texts)
    assert any("SUMMARY: seq ran." in t for t in texts)
    assert not any(b.get("type") == "tool_use" for m in history for b in m["content"])
    resumed = coterie("resume", run_id, "go on", "-p", cwd=workspace, home=home)
    assert (resumed.returncode, resumed.stdout) == (0, "resumed from the summary\n"), resumed.stderr


def test_compact_refuses_an_unknown_run(workspace: Path, home: Path) -> None:
    done = coterie("compact", "nope", cwd=workspace, home=home)
    assert done.returncode == 2
    assert "not found" in done.stderr
