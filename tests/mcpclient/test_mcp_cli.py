"""MCP servers through the real CLI: stdio and HTTP calls, a crash mid-call and the
restart, the permission gate, trust of .mcp.json, bad configs (scripted model, and
the real SDK against ``coterie mock-server``)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from coterie.runs import runs_root
from tests.agent.conftest import coterie
from tests.mcpclient.conftest import SCENARIOS, stdio_config

if TYPE_CHECKING:
    import subprocess
    from pathlib import Path

    pass

BYPASS = ("--permission-mode", "bypassPermissions")


@pytest.fixture(params=["scripted", "sdk"])
def run_scenario(request: pytest.FixtureRequest, workspace: Path, home: Path, mock_server):  # type: ignore[no-untyped-def]
    """``coterie run -p`` on a scenario offline, or through the SDK against the mock server."""

    def run(
        scenario: Path, *args: str, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        if request.param == "scripted":
            return coterie(
                "run",
                "go",
                "-p",
                "--scenario",
                str(scenario),
                *args,
                cwd=workspace,
                home=home,
                env=env,
            )
        url = mock_server(scenario)
        sdk = {"ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "test-key", **(env or {})}
        return coterie("run", "go", "-p", *args, cwd=workspace, home=home, env=sdk)

    return run


def events(workspace: Path) -> list[dict[str, object]]:
    [run] = [d for d in runs_root(workspace).iterdir() if d.is_dir()]
    lines = (run / "events.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def of_type(workspace: Path, kind: str) -> list[dict[str, object]]:
    return [e for e in events(workspace) if e["type"] == kind]


def test_a_tool_of_a_stdio_server_is_called(run_scenario, workspace: Path) -> None:  # type: ignore[no-untyped-def]
    config = stdio_config(workspace / "mcp.json")
    result = run_scenario(SCENARIOS / "stdio_call.json", "--mcp-config", str(config), *BYPASS)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "The server says 42."
    [connected] = of_type(workspace, "mcp.connected")
    assert connected["transport"] == "stdio"
    assert "mcp__tst__add" in connected["tools"]  # type: ignore[operator]


def test_a_tool_of_a_streamable_http_server_is_called(
    run_scenario,
    workspace: Path,
    http_server: str,  # type: ignore[no-untyped-def]
) -> None:
    config = workspace / "mcp.json"
    server = {"type": "http", "url": "${MCP_URL}", "headers": {"X-Token": "${TOKEN:-none}"}}
    config.write_text(json.dumps({"mcpServers": {"web": server}}))
    result = run_scenario(
        SCENARIOS / "http_call.json",
        "--mcp-config",
        str(config),
        *BYPASS,
        env={"MCP_URL": http_server},
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "The web server answered."
    assert [e["transport"] for e in of_type(workspace, "mcp.connected")] == ["http"]


def test_a_server_crashing_mid_call_is_an_error_then_restarted(
    run_scenario,
    workspace: Path,  # type: ignore[no-untyped-def]
) -> None:
    """The call in flight is an error (never retried), the tools say the server is
    restarting while it is down, and its supervisor brings it back."""
    config = stdio_config(workspace / "mcp.json")
    result = run_scenario(SCENARIOS / "crash_restart.json", "--mcp-config", str(config), *BYPASS)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "The server came back."
    assert len(list(workspace.glob("mcp-started.*"))) == 2  # the die call was not sent again
    assert [e["final"] for e in of_type(workspace, "mcp.failed")] == [False]
    assert len(of_type(workspace, "mcp.connected")) == 2
    restarted = [e for e in of_type(workspace, "actor.restarted") if e["actor"] == "mcp-tst"]
    assert len(restarted) == 1


def test_a_subagent_gets_the_runs_mcp_tools(workspace: Path, home: Path) -> None:
    config = stdio_config(workspace / "mcp.json")
    result = coterie(
        "run",
        "go",
        "-p",
        "--scenario",
        str(SCENARIOS / "subagent_call.json"),
        "--mcp-config",
        str(config),
        *BYPASS,
        cwd=workspace,
        home=home,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "The subagent got the answer."


def test_an_mcp_tool_needs_permission(workspace: Path, home: Path) -> None:
    """Headless with no rule it is denied, even though it claims readOnlyHint."""
    config = stdio_config(workspace / "mcp.json")
    result = coterie(
        "run",
        "go",
        "-p",
        "--scenario",
        str(SCENARIOS / "permission.json"),
        "--mcp-config",
        str(config),
        cwd=workspace,
        home=home,
    )
    assert result.returncode == 0, result.stderr
    [denied] = [e for e in of_type(workspace, "agent.tool_result")]
    assert denied["is_error"]
    assert "denied" in str(denied["content"])


@pytest.mark.parametrize("rule", ["mcp__tst", "mcp__tst__*", "mcp__tst__shout"])
def test_an_allow_rule_for_the_server_or_tool_lets_it_run(
    workspace: Path, home: Path, rule: str
) -> None:
    (home / ".claude").mkdir()
    (home / ".claude" / "settings.json").write_text(json.dumps({"permissions": {"allow": [rule]}}))
    config = stdio_config(workspace / "mcp.json")
    result = coterie(
        "run",
        "go",
        "-p",
        "--scenario",
        str(SCENARIOS / "permission.json"),
        "--mcp-config",
        str(config),
        cwd=workspace,
        home=home,
    )
    assert result.returncode == 0, result.stderr
    [answer] = of_type(workspace, "agent.tool_result")
    assert answer == {**answer, "is_error": False, "content": "HI"}


def test_an_untrusted_workspaces_mcp_json_is_ignored_and_said_once(
    workspace: Path, home: Path
) -> None:
    stdio_config(workspace / ".mcp.json")
    result = coterie(
        "run",
        "go",
        "-p",
        "--scenario",
        str(SCENARIOS / "stdio_call.json"),
        *BYPASS,
        cwd=workspace,
        home=home,
    )
    assert result.returncode == 1  # the scenario expected the answer; the tool was not there
    assert result.stderr.count(".mcp.json servers were ignored") == 1
    assert of_type(workspace, "mcp.connected") == []


def test_a_trusted_workspaces_mcp_json_is_used(workspace: Path, home: Path) -> None:
    stdio_config(workspace / ".mcp.json")
    assert coterie("trust", cwd=workspace, home=home).returncode == 0
    result = coterie(
        "run",
        "go",
        "-p",
        "--scenario",
        str(SCENARIOS / "stdio_call.json"),
        *BYPASS,
        cwd=workspace,
        home=home,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "The server says 42."


def test_the_users_servers_come_from_claude_json(workspace: Path, home: Path) -> None:
    stdio_config(home / ".claude.json")
    result = coterie(
        "run",
        "go",
        "-p",
        "--scenario",
        str(SCENARIOS / "stdio_call.json"),
        *BYPASS,
        cwd=workspace,
        home=home,
    )
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("{nope", "not valid JSON"),
        ('{"mcpServers": {"a": {"type": "ftp"}}}', "type must be 'stdio' or 'http'"),
        ('{"mcpServers": {"a": {"command": "${UNSET_VAR_X}"}}}', "UNSET_VAR_X is not set"),
    ],
)
def test_a_bad_mcp_config_is_a_one_line_usage_error(
    workspace: Path, home: Path, text: str, says: str
) -> None:
    config = workspace / "bad.json"
    config.write_text(text)
    result = coterie(
        "run",
        "go",
        "-p",
        "--scenario",
        str(SCENARIOS / "stdio_call.json"),
        "--mcp-config",
        str(config),
        cwd=workspace,
        home=home,
    )
    assert result.returncode == 2
    [line] = result.stderr.strip().splitlines()
    assert "bad.json" in line
    assert says in line


def test_output_is_capped_and_slow_calls_time_out(workspace: Path, home: Path) -> None:
    """MAX_MCP_OUTPUT_TOKENS cuts a long answer; MCP_TOOL_TIMEOUT (ms) bounds a call."""
    config = stdio_config(workspace / "mcp.json")
    result = coterie(
        "run",
        "go",
        "-p",
        "--scenario",
        str(SCENARIOS / "limits.json"),
        "--mcp-config",
        str(config),
        *BYPASS,
        cwd=workspace,
        home=home,
        env={"MAX_MCP_OUTPUT_TOKENS": "10", "MCP_TOOL_TIMEOUT": "500"},
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "Limits held, and the server still answers."


def test_a_teammate_gets_the_runs_mcp_tools(workspace: Path, home: Path) -> None:
    config = stdio_config(workspace / "mcp.json")
    result = coterie(
        "team",
        "-p",
        "--teammate",
        "alice",
        "--scenario",
        str(SCENARIOS / "team_call.json"),
        "--mcp-config",
        str(config),
        *BYPASS,
        "go",
        cwd=workspace,
        home=home,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "alice got the answer"
    calls = [e for e in of_type(workspace, "agent.tool_result") if e["actor"] == "alice"]
    assert [(c["name"], c["is_error"]) for c in calls] == [("mcp__tst__echo", False)]


def test_an_mcp_config_given_as_json_text_is_used(workspace: Path, home: Path) -> None:
    """The Agent SDK passes --mcp-config '{"mcpServers": ...}' as text, not a file."""
    text = stdio_config(workspace / "mcp.json").read_text()
    (workspace / "mcp.json").unlink()
    done = coterie(
        "run", "go", "-p", "--scenario", str(SCENARIOS / "stdio_call.json"),
        "--mcp-config", text, *BYPASS, cwd=workspace, home=home,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "The server says 42."


def test_strict_mcp_config_leaves_the_users_own_servers_out(workspace: Path, home: Path) -> None:
    stdio_config(home / ".claude.json", name="mine")
    config = stdio_config(workspace / "mcp.json")
    done = coterie(
        "run", "go", "-p", "--scenario", str(SCENARIOS / "stdio_call.json"),
        "--mcp-config", str(config), "--strict-mcp-config", *BYPASS, cwd=workspace, home=home,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    [connected] = of_type(workspace, "mcp.connected")
    assert connected["server"] == "tst"


def test_mcp_config_text_that_is_not_json_is_a_usage_error(workspace: Path, home: Path) -> None:
    done = coterie("run", "go", "-p", "--mcp-config", "{oops", cwd=workspace, home=home)
    assert done.returncode == 2
    assert "--mcp-config: not valid JSON" in done.stderr
