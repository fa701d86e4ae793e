"""Claude Code's CLI flags and output fields on ``coterie run`` / ``coterie team``:
the real CLI in temporary workspaces, on scripted models (docs/cli.md)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from coterie.runs import runs_root
from tests.agent.conftest import clean_env, coterie

TOUCH = {"tool_uses": [{"id": "toolu_touch", "name": "Bash", "input": {"command": "touch x"}}]}


def scenario(tmp_path: Path, tracks: dict[str, list[dict[str, Any]]], name: str = "s") -> str:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps({"tracks": tracks}))
    return str(path)


def piped(
    stdin: str, *args: str, cwd: Path, home: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``coterie ARGS`` with *stdin* on its standard input (a pipe, not a terminal)."""
    return subprocess.run(
        [sys.executable, "-m", "coterie", *args],
        cwd=cwd,
        env={**clean_env(HOME=str(home)), **(env or {})},
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
    )


def lines(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines() if line.strip()]


def touch_run(tmp_path: Path, workspace: Path, home: Path, *flags: str) -> dict[str, Any]:
    """A run whose model asks for ``touch x``; its json result."""
    path = scenario(tmp_path, {"lead": [TOUCH, {"text": "ok"}]})
    done = coterie(
        "run", "go", "-p", "--output-format", "json", "--scenario", path, *flags,
        cwd=workspace, home=home,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


# -- the prompt from standard input ---------------------------------------------


def test_the_prompt_comes_from_standard_input(tmp_path: Path, workspace: Path, home: Path) -> None:
    path = scenario(tmp_path, {"lead": [{"expect": "what is two and two", "text": "four"}]})
    done = piped("what is two and two\n", "run", "-p", "--scenario", path, cwd=workspace, home=home)
    assert (done.returncode, done.stdout) == (0, "four\n"), done.stderr


def test_standard_input_is_appended_to_the_prompt(
    tmp_path: Path, workspace: Path, home: Path
) -> None:
    path = scenario(tmp_path, {"lead": [{"expect": "explain\n\ndef f(): pass", "text": "a stub"}]})
    done = piped(
        "def f(): pass\n", "run", "-p", "explain", "--scenario", path, cwd=workspace, home=home
    )
    assert (done.returncode, done.stdout) == (0, "a stub\n"), done.stderr


def test_no_prompt_at_all_is_a_usage_error(tmp_path: Path, workspace: Path, home: Path) -> None:
    path = scenario(tmp_path, {"lead": [{"text": "never"}]})
    done = piped("", "run", "-p", "--scenario", path, cwd=workspace, home=home)
    assert done.returncode == 2
    assert "give a PROMPT" in done.stderr
    assert "not both" not in done.stderr


def test_a_loop_takes_no_prompt(workspace: Path, home: Path) -> None:
    done = coterie("run", "x", "--loop", "5m check", cwd=workspace, home=home)
    assert done.returncode == 2
    assert "--loop" in done.stderr


# -- --allowedTools / --disallowedTools -------------------------------------------


@pytest.mark.parametrize("flag", ["--allowedTools", "--allowed-tools"])
def test_allowed_tools_allow_a_command_headless(
    tmp_path: Path, workspace: Path, home: Path, flag: str
) -> None:
    result = touch_run(tmp_path, workspace, home, flag, "Read,Bash(touch *)", "Edit")
    assert (workspace / "x").exists()
    assert result["permission_denials"] == []


def test_without_allowed_tools_the_call_is_denied_and_reported(
    tmp_path: Path, workspace: Path, home: Path
) -> None:
    result = touch_run(tmp_path, workspace, home)
    assert not (workspace / "x").exists()
    assert result["permission_denials"] == [
        {"tool_name": "Bash", "tool_use_id": "toolu_touch", "tool_input": {"command": "touch x"}}
    ]


@pytest.mark.parametrize("flag", ["--disallowedTools", "--disallowed-tools"])
def test_disallowed_tools_win_over_allow_and_bypass(
    tmp_path: Path, workspace: Path, home: Path, flag: str
) -> None:
    result = touch_run(
        tmp_path, workspace, home,
        "--permission-mode", "bypassPermissions",
        "--allowedTools", "Bash",
        flag, "Bash(touch *)",
    )  # fmt: skip
    assert not (workspace / "x").exists()
    assert [d["tool_use_id"] for d in result["permission_denials"]] == ["toolu_touch"]


@pytest.mark.parametrize("rule", ["Bash(touch", "9lives", "Bash)", "Read(/a) Edit()"])
def test_a_malformed_rule_is_a_one_line_usage_error(
    tmp_path: Path, workspace: Path, home: Path, rule: str
) -> None:
    path = scenario(tmp_path, {"lead": [{"text": "never"}]})
    done = coterie(
        "run", "go", "-p", "--scenario", path, "--allowedTools", rule, cwd=workspace, home=home
    )
    assert done.returncode == 2
    assert done.stderr.startswith("error:")
    assert len(done.stderr.strip().splitlines()) == 1


# -- --tools ------------------------------------------------------------------------


def init_line(tmp_path: Path, workspace: Path, home: Path, *flags: str) -> dict[str, Any]:
    path = scenario(tmp_path, {"lead": [{"text": "hello"}]})
    done = coterie(
        "run", "go", "-p", "--output-format", "stream-json", "--scenario", path, *flags,
        cwd=workspace, home=home,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    first = lines(done.stdout)[0]
    assert (first["type"], first["subtype"]) == ("system", "init")
    return first


def test_tools_chooses_the_built_in_tools(tmp_path: Path, workspace: Path, home: Path) -> None:
    assert init_line(tmp_path, workspace, home, "--tools", "Bash,Read")["tools"] == [
        "Bash",
        "Read",
    ]
    assert init_line(tmp_path, workspace, home, "--tools", "")["tools"] == []
    everything = init_line(tmp_path, workspace, home, "--tools", "default")["tools"]
    assert {"Bash", "Edit", "Agent"} <= set(everything)
    assert init_line(tmp_path, workspace, home, "--tools", "Task Grep")["tools"] == [
        "Grep",
        "Agent",
    ]


def test_a_tool_left_out_cannot_be_called(tmp_path: Path, workspace: Path, home: Path) -> None:
    write = {"tool_uses": [{"name": "Write", "input": {"file_path": "f", "content": "x"}}]}
    path = scenario(tmp_path, {"lead": [write, {"expect": "No such tool", "text": "no Write"}]})
    done = coterie(
        "run", "go", "-p", "--scenario", path, "--tools", "Read",
        "--permission-mode", "bypassPermissions", cwd=workspace, home=home,
    )  # fmt: skip
    assert (done.returncode, done.stdout) == (0, "no Write\n"), done.stderr
    assert not (workspace / "f").exists()


def test_an_unknown_tool_name_exits_2_with_the_close_match(
    tmp_path: Path, workspace: Path, home: Path
) -> None:
    path = scenario(tmp_path, {"lead": [{"text": "never"}]})
    done = coterie(
        "run", "go", "-p", "--scenario", path, "--tools", "Bsh", cwd=workspace, home=home
    )
    assert done.returncode == 2
    assert "'Bsh'" in done.stderr
    assert "did you mean 'Bash'" in done.stderr


# -- --settings / --setting-sources -------------------------------------------------


def test_settings_as_json_are_a_layer(tmp_path: Path, workspace: Path, home: Path) -> None:
    layer = json.dumps({"permissions": {"allow": ["Bash(touch *)"]}})
    touch_run(tmp_path, workspace, home, "--settings", layer)
    assert (workspace / "x").exists()


def test_settings_from_a_file_deny_over_the_user_file(
    tmp_path: Path, workspace: Path, home: Path
) -> None:
    (home / ".claude").mkdir()
    (home / ".claude" / "settings.json").write_text(
        json.dumps({"permissions": {"allow": ["Bash(touch *)"]}})
    )
    extra = tmp_path / "extra.json"
    extra.write_text(json.dumps({"permissions": {"deny": ["Bash(touch *)"]}}))
    result = touch_run(tmp_path, workspace, home, "--settings", str(extra))
    assert not (workspace / "x").exists()
    assert len(result["permission_denials"]) == 1


@pytest.mark.parametrize("value", ["{not json", "/nonexistent/settings.json"])
def test_bad_settings_are_a_usage_error(
    tmp_path: Path, workspace: Path, home: Path, value: str
) -> None:
    path = scenario(tmp_path, {"lead": [{"text": "never"}]})
    done = coterie(
        "run", "go", "-p", "--scenario", path, "--settings", value, cwd=workspace, home=home
    )
    assert done.returncode == 2
    assert "error:" in done.stderr


def test_setting_sources_choose_the_files_read(tmp_path: Path, workspace: Path, home: Path) -> None:
    (home / ".claude").mkdir()
    (home / ".claude" / "settings.json").write_text(
        json.dumps({"permissions": {"allow": ["Bash(touch *)"]}})
    )
    result = touch_run(tmp_path, workspace, home, "--setting-sources", "project,local")
    assert not (workspace / "x").exists()
    assert len(result["permission_denials"]) == 1
    touch_run(tmp_path, workspace, home, "--setting-sources", "user")
    assert (workspace / "x").exists()


def test_an_unknown_setting_source_exits_2(workspace: Path, home: Path) -> None:
    done = coterie("run", "go", "--setting-sources", "user,policy", cwd=workspace, home=home)
    assert done.returncode == 2
    assert "'policy'" in done.stderr


# -- --fallback-model ---------------------------------------------------------------

OVERLOADED = {"error": {"status": 529, "type": "overloaded_error", "message": "busy"}}


def test_the_fallback_model_takes_over_an_overloaded_call(
    tmp_path: Path, workspace: Path, home: Path
) -> None:
    path = scenario(tmp_path, {"lead": [OVERLOADED, {"text": "answered by the fallback"}]})
    done = coterie(
        "run", "go", "-p", "--output-format", "json", "--scenario", path,
        "--fallback-model", "haiku", cwd=workspace, home=home,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["result"] == "answered by the fallback"
    assert "fallback model claude-haiku" in done.stderr


def test_without_a_fallback_an_overloaded_call_fails(
    tmp_path: Path, workspace: Path, home: Path
) -> None:
    path = scenario(tmp_path, {"lead": [OVERLOADED, {"text": "never"}]})
    done = coterie("run", "go", "-p", "--scenario", path, cwd=workspace, home=home)
    assert done.returncode == 1
    # No answer came: the failure is an error on stderr, nothing on stdout.
    assert "529" in done.stderr
    assert done.stdout == ""


# -- --input-format stream-json -----------------------------------------------------


def user_line(content: Any) -> str:
    return json.dumps({"type": "user", "message": {"role": "user", "content": content}}) + "\n"


def test_stream_json_input_is_one_conversation_of_many_turns(
    tmp_path: Path, workspace: Path, home: Path
) -> None:
    path = scenario(
        tmp_path,
        {"lead": [{"expect": "first", "text": "one"}, {"expect": "second", "text": "two"}]},
    )
    stdin = user_line("first") + "\n" + user_line([{"type": "text", "text": "second"}])
    done = piped(
        stdin, "run", "-p", "--input-format", "stream-json", "--output-format", "stream-json",
        "--scenario", path, cwd=workspace, home=home,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    results = [o for o in lines(done.stdout) if o["type"] == "result"]
    assert [r["result"] for r in results] == ["one", "two"]
    assert len({r["session_id"] for r in results}) == 1


def test_a_bad_input_line_is_one_line_and_the_run_goes_on(
    tmp_path: Path, workspace: Path, home: Path
) -> None:
    """A host's malformed line is said once on stderr; the prompts around it are run."""
    path = scenario(tmp_path, {"lead": [{"text": "one"}, {"text": "three"}]})
    done = piped(
        user_line("first") + "{oops\n" + user_line({"not": "content"}) + user_line("third"),
        "run", "-p", "--input-format", "stream-json", "--output-format", "stream-json",
        "--scenario", path, cwd=workspace, home=home,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "standard input, line 2: not JSON" in done.stderr
    assert "user message 2: 'content' must be a string or a list of blocks" in done.stderr
    assert [o["result"] for o in lines(done.stdout) if o["type"] == "result"] == ["one", "three"]


def control(request_id: str, subtype: str, **fields: Any) -> str:
    request = {"subtype": subtype, **fields}
    return json.dumps({"type": "control_request", "request_id": request_id,
                       "request": request}) + "\n"  # fmt: skip


def test_a_host_is_answered_initialize_then_its_prompt_runs(
    tmp_path: Path, workspace: Path, home: Path
) -> None:
    """What the Agent SDK sends first (no -p: stream-json input implies it)."""
    path = scenario(tmp_path, {"lead": [{"expect": "hi", "text": "hello"}]})
    done = piped(
        control("req_1_ab", "initialize", hooks=None) + user_line("hi"),
        "--output-format", "stream-json", "--verbose", "--input-format", "stream-json",
        "--scenario", path, cwd=workspace, home=home,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = lines(done.stdout)
    answer = next(o for o in out if o["type"] == "control_response")
    assert answer["response"]["subtype"] == "success"
    assert answer["response"]["request_id"] == "req_1_ab"
    assert "commands" in answer["response"]["response"]
    init = next(o for o in out if o.get("subtype") == "init")
    assert int(init["claude_code_version"].split(".")[0]) >= 2
    message = next(o for o in out if o["type"] == "assistant")["message"]
    assert message["model"]
    assert message["id"].startswith("msg_")
    assert [o["result"] for o in out if o["type"] == "result"] == ["hello"]


def test_an_unknown_control_request_is_an_error_answer_and_the_run_goes_on(
    tmp_path: Path, workspace: Path, home: Path
) -> None:
    path = scenario(tmp_path, {"lead": [{"text": "fine"}]})
    done = piped(
        control("r1", "teleport") + user_line("hi"),
        "-p", "--input-format", "stream-json", "--output-format", "stream-json",
        "--scenario", path, cwd=workspace, home=home,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = lines(done.stdout)
    [answer] = [o for o in out if o["type"] == "control_response"]
    assert answer["response"]["subtype"] == "error"
    assert "teleport" in answer["response"]["error"]
    assert [o["result"] for o in out if o["type"] == "result"] == ["fine"]


@pytest.mark.parametrize(
    "flags",
    [["--input-format", "stream-json"], ["--input-format", "stream-json", "-p"]],
)
def test_stream_json_input_needs_stream_json_output(
    workspace: Path, home: Path, flags: list[str]
) -> None:
    done = piped(user_line("hi"), "run", *flags, cwd=workspace, home=home)
    assert done.returncode == 2
    assert "--output-format stream-json" in done.stderr


def test_a_team_driven_by_a_program_takes_no_goal_argument(workspace: Path, home: Path) -> None:
    done = coterie(
        "team", "goal", "-p", "--input-format", "stream-json", "--output-format", "stream-json",
        cwd=workspace, home=home,
    )  # fmt: skip
    assert done.returncode == 2
    assert "the goals come on standard input" in done.stderr


# -- --verbose ------------------------------------------------------------------------


def test_verbose_text_shows_tool_calls_on_stderr(
    tmp_path: Path, workspace: Path, home: Path
) -> None:
    path = scenario(tmp_path, {"lead": [TOUCH, {"text": "ok"}]})
    done = coterie(
        "run", "go", "-p", "--verbose", "--scenario", path, "--allowedTools", "Bash",
        cwd=workspace, home=home,
    )  # fmt: skip
    assert (done.returncode, done.stdout) == (0, "ok\n"), done.stderr
    assert "⏺ Bash(touch x)" in done.stderr
    quiet = coterie(
        "run", "go", "-p", "--scenario", path, "--allowedTools", "Bash", cwd=workspace, home=home
    )
    assert "⏺" not in quiet.stderr


def test_stream_json_needs_no_verbose_and_accepts_it(
    tmp_path: Path, workspace: Path, home: Path
) -> None:
    assert init_line(tmp_path, workspace, home)["type"] == "system"
    assert init_line(tmp_path, workspace, home, "--verbose")["type"] == "system"


# -- the fields of the output ---------------------------------------------------------


def test_the_json_result_has_claude_codes_fields(
    tmp_path: Path, workspace: Path, home: Path
) -> None:
    result = touch_run(tmp_path, workspace, home)
    assert result["type"] == "result"
    assert result["session_id"] == result["run_id"]
    assert (result["subtype"], result["is_error"], result["num_turns"]) == ("success", False, 2)
    assert isinstance(result["duration_ms"], int)
    assert isinstance(result["duration_api_ms"], int)
    assert 0 <= result["duration_api_ms"] <= result["duration_ms"]
    assert result["total_cost_usd"] > 0
    assert result["usage"]["output_tokens"] > 0


def test_the_init_line_describes_the_run(tmp_path: Path, workspace: Path, home: Path) -> None:
    (home / ".claude" / "commands").mkdir(parents=True)
    (home / ".claude" / "commands" / "review.md").write_text("Review the code.\n")
    mcp = tmp_path / "mcp.json"
    mcp.write_text(json.dumps({"mcpServers": {"broken": {"command": "/nonexistent/server"}}}))
    agents = json.dumps({"reviewer": {"description": "reviews", "prompt": "Review."}})
    init = init_line(
        tmp_path, workspace, home, "--mcp-config", str(mcp), "--agents", agents,
        "--permission-mode", "acceptEdits",
    )  # fmt: skip
    assert init["session_id"] == init["run_id"]
    assert init["cwd"] == str(workspace.resolve())
    assert init["model"] == "scripted"
    assert init["permissionMode"] == "acceptEdits"
    assert "Bash" in init["tools"]
    assert [s["name"] for s in init["mcp_servers"]] == ["broken"]
    assert init["mcp_servers"][0]["status"] in ("starting", "restarting", "failed")
    assert init["slash_commands"] == ["review"]
    assert init["agents"][-1] == "reviewer"
    assert "general-purpose" in init["agents"]


def test_a_subagents_messages_name_the_call_that_started_it(
    tmp_path: Path, workspace: Path, home: Path
) -> None:
    agent = {
        "id": "toolu_agent",
        "name": "Agent",
        "input": {"description": "look", "prompt": "look", "subagent_type": "general-purpose"},
    }
    glob = {"name": "Glob", "input": {"pattern": "*"}}
    path = scenario(
        tmp_path,
        {
            "lead": [{"tool_uses": [agent]}, {"text": "done"}],
            "subagent": [{"tool_uses": [glob]}, {"text": "nothing"}],
        },
    )
    done = coterie(
        "run", "go", "-p", "--output-format", "stream-json", "--scenario", path,
        cwd=workspace, home=home,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = lines(done.stdout)
    messages = [o for o in out if o["type"] in ("assistant", "user")]
    run_id = out[0]["session_id"]
    assert all(m["session_id"] == run_id for m in messages)
    parents = [m["parent_tool_use_id"] for m in messages]
    # lead's Agent call, the subagent's prompt, its Glob call and result (as Claude
    # Code's task lines; its closing text is not forwarded unless the host asks), the
    # Agent result, the lead's answer
    assert parents == [
        None, "toolu_agent", "toolu_agent", "toolu_agent", None, None
    ]  # fmt: skip
    assert out[-1]["type"] == "result"
    assert out[-1]["session_id"] == run_id


def test_a_team_takes_the_same_flags(workspace: Path, home: Path) -> None:
    done = coterie("team", "goal", "--tools", "Bsh", cwd=workspace, home=home)
    assert done.returncode == 2
    assert "did you mean 'Bash'" in done.stderr
    done = coterie("team", "goal", "--allowedTools", "Bash(", cwd=workspace, home=home)
    assert done.returncode == 2
    assert "--allowedTools" in done.stderr


# -- the real SDK path, against coterie mock-server -----------------------------------


def sdk_env(url: str) -> dict[str, str]:
    # No retries: the 529 goes to the fallback at once (a real run retries 8 times first).
    return {"ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "test-key", "COTERIE_MAX_RETRIES": "0"}


def test_stream_json_input_through_the_sdk(
    tmp_path: Path, workspace: Path, home: Path, mock_server: Any
) -> None:
    url = mock_server(
        Path(
            scenario(
                tmp_path,
                {"lead": [{"expect": "first", "text": "one"}, {"expect": "second", "text": "two"}]},
            )
        )
    )
    done = piped(
        user_line("first") + user_line([{"type": "text", "text": "second"}]),
        "run", "-p", "--input-format", "stream-json", "--output-format", "stream-json",
        cwd=workspace, home=home, env=sdk_env(url),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = lines(done.stdout)
    assert [o["result"] for o in out if o["type"] == "result"] == ["one", "two"]
    assert out[0]["model"] != "scripted"


def test_the_fallback_model_through_the_sdk(
    tmp_path: Path, workspace: Path, home: Path, mock_server: Any
) -> None:
    url = mock_server(Path(scenario(tmp_path, {"lead": [OVERLOADED, {"text": "fell back"}]})))
    done = coterie(
        "run", "go", "-p", "--output-format", "stream-json", "--fallback-model", "haiku",
        cwd=workspace, home=home, env=sdk_env(url),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = lines(done.stdout)
    fallback = [o for o in out if o.get("subtype") == "fallback_model"]
    assert len(fallback) == 1
    assert fallback[0]["model"].startswith("claude-haiku")
    assert "529" in fallback[0]["reason"]
    assert out[-1]["result"] == "fell back"
    assert not out[-1]["is_error"]


def test_a_silent_pipe_does_not_hold_a_prompt_up(
    tmp_path: Path, workspace: Path, home: Path
) -> None:
    """A pipe that stays open and silent (a parent that never writes) is no input."""
    path = scenario(tmp_path, {"lead": [{"expect_not": "\n\n", "text": "alone"}]})
    with subprocess.Popen(
        [sys.executable, "-m", "coterie", "run", "-p", "hello", "--scenario", path],
        cwd=workspace,
        env=clean_env(HOME=str(home)),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as proc:
        assert proc.stdout is not None
        assert proc.stderr is not None
        try:
            proc.wait(timeout=60)  # its stdin open all along (communicate() would close it)
        finally:
            proc.kill()
        out, err = proc.stdout.read(), proc.stderr.read()
    assert (proc.returncode, out) == (0, "alone\n"), err


def test_allowed_tools_end_at_a_double_dash(tmp_path: Path, workspace: Path, home: Path) -> None:
    path = scenario(tmp_path, {"lead": [{"expect": "fix it", "text": "fixed"}]})
    done = coterie(
        "run", "-p", "--scenario", path, "--allowedTools", "Edit", "Read", "--", "fix it",
        cwd=workspace, home=home,
    )  # fmt: skip
    assert (done.returncode, done.stdout) == (0, "fixed\n"), done.stderr


def test_a_resume_keeps_the_flags_of_the_run(tmp_path: Path, workspace: Path, home: Path) -> None:
    path = scenario(tmp_path, {"lead": [{"text": "first"}, TOUCH, {"text": "ok"}]})
    first = coterie(
        "run", "go", "-p", "--output-format", "json", "--scenario", path,
        "--permission-mode", "bypassPermissions", "--disallowedTools", "Bash(touch *)",
        cwd=workspace, home=home,
    )  # fmt: skip
    assert first.returncode == 0, first.stderr
    run_id = json.loads(first.stdout)["session_id"]
    again = coterie(
        "resume", run_id, "again", "-p", "--output-format", "json", cwd=workspace, home=home
    )
    assert again.returncode == 0, again.stderr
    assert not (workspace / "x").exists()
    assert json.loads(again.stdout)["permission_denials"][0]["tool_use_id"] == "toolu_touch"


def test_a_team_reads_its_goal_from_stdin_and_keeps_its_team_tools(
    tmp_path: Path, workspace: Path, home: Path
) -> None:
    create = {
        "name": "TaskCreate",
        "input": {"subject": "one", "description": "write one.txt", "owner": "alice"},
    }
    write = {"name": "Write", "input": {"file_path": "one.txt", "content": "1"}}
    path = scenario(
        tmp_path,
        {
            "lead": [
                {"expect": "go\n\nthe details", "tool_uses": [create]},
                {"text": "planned"},
                {"text": "done"},
            ],
            "alice": [{"tool_uses": [write]}, {"text": "written"}],
        },
    )
    done = piped(
        "the details\n",
        "team", "go", "-p", "--output-format", "stream-json", "--scenario", path,
        "--teammate", "alice", "--tools", "Read,Write", "--permission-mode", "acceptEdits",
        cwd=workspace, home=home,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    init = lines(done.stdout)[0]
    assert {"Read", "Write", "TaskCreate", "SendMessage"} <= set(init["tools"])
    assert "Bash" not in init["tools"]
    assert (workspace / "one.txt").read_text() == "1"
    assert lines(done.stdout)[-1]["session_id"] == init["session_id"]


def test_every_claude_code_flag_a_host_passes_is_taken_with_one_notice(
    tmp_path: Path, workspace: Path, home: Path
) -> None:
    """A flag coterie does not act on yet never refuses the host's run: one line each."""
    from coterie.commands.options import UNHONOURED

    args: list[str] = []
    for flag, (takes_value, _) in UNHONOURED.items():
        args += [flag, "1"] if takes_value else [flag]
    path = scenario(tmp_path, {"lead": [{"text": "fine"}]})
    done = coterie("run", "go", "-p", "--scenario", path, *args, cwd=workspace, home=home)
    assert (done.returncode, done.stdout) == (0, "fine\n"), done.stderr
    for flag in UNHONOURED:
        assert done.stderr.count(f"note: {flag} is taken for Claude Code compatibility") == 1


def test_a_system_prompt_file_replaces_the_system_prompt(
    tmp_path: Path, workspace: Path, home: Path
) -> None:
    (tmp_path / "prompt.txt").write_text("You are a terse pirate.")
    path = scenario(tmp_path, {"lead": [{"text": "arr"}]})
    done = coterie(
        "run", "go", "-p", "--scenario", path, "--system-prompt-file", str(tmp_path / "prompt.txt"),
        cwd=workspace, home=home,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    config = json.loads(next(runs_root(workspace).glob("*/config.json")).read_text())
    assert config["system_prompt"] == "You are a terse pirate."
    both = coterie(
        "run", "go", "-p", "--scenario", path, "--system-prompt", "x",
        "--system-prompt-file", str(tmp_path / "prompt.txt"), cwd=workspace, home=home,
    )  # fmt: skip
    assert both.returncode == 2
    assert "one or the other" in both.stderr


def test_dangerously_skip_permissions_is_bypass_mode(
    tmp_path: Path, workspace: Path, home: Path
) -> None:
    touch = {"tool_uses": [{"name": "Bash", "input": {"command": "touch made.txt"}}]}
    path = scenario(tmp_path, {"lead": [touch, {"text": "done"}]})
    done = coterie(
        "run", "go", "-p", "--scenario", path, "--dangerously-skip-permissions",
        cwd=workspace, home=home,
    )  # fmt: skip
    assert (done.returncode, done.stdout) == (0, "done\n"), done.stderr
    assert (workspace / "made.txt").exists()


def test_resume_headless_without_stream_json_points_to_coterie_resume(
    workspace: Path, home: Path
) -> None:
    done = coterie("run", "go", "-p", "-r", "20260101-000000-abcdef", cwd=workspace, home=home)
    assert done.returncode == 2
    assert "coterie resume 20260101-000000-abcdef" in done.stderr
    team = coterie("team", "go", "-p", "--resume", "x", cwd=workspace, home=home)
    assert team.returncode == 2
    assert "coterie resume x" in team.stderr
