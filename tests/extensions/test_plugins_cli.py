"""Plugins through the real CLI (``--plugin-dir``), on the scripted model.

A plugin's namespaced command run headless, its hooks fired with
``CLAUDE_PLUGIN_ROOT``, its skill and agent used, its MCP server's tool
called, ``system/init``'s ``plugins``, a bad plugin said in one line while the
other loads, a resume that loads the plugins again, and a workspace that
cannot add a plugin by itself.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

from coterie.runs import runs_root
from tests.agent.conftest import coterie
from tests.agent.test_resume_cli import only_run, write_scenario
from tests.extensions.pluginfiles import hooks_json, put, write_plugin

BASH = {"tool_uses": [{"name": "Bash", "input": {"command": "echo hi"}}]}
SERVER = Path(__file__).parents[1] / "mcpclient" / "mcp_server.py"


def lines(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines() if line.strip()]


def run(
    workspace: Path, home: Path, prompt: str, tracks: dict[str, Any], *flags: str
) -> tuple[Any, list[dict[str, Any]]]:
    """``coterie run -p PROMPT --output-format stream-json`` on *tracks*: the process
    and its lines."""
    path = write_scenario(workspace.parent / "s.json", tracks)
    done = coterie(
        "run", "-p", prompt, "--output-format", "stream-json", "--scenario", str(path),
        "--permission-mode", "bypassPermissions", *flags, cwd=workspace, home=home,
    )  # fmt: skip
    return done, lines(done.stdout)


def hook_log(workspace: Path) -> list[str]:
    path = workspace / "plugin-hooks.log"
    return path.read_text().splitlines() if path.exists() else []


def test_a_plugins_command_runs_and_its_hooks_fire_with_its_root(
    tmp_path: Path, workspace: Path, home: Path
) -> None:
    root = write_plugin(tmp_path / "plugins" / "myplugin", hooks=hooks_json()).resolve()
    tracks = {"lead": [{"expect": f"Greet world using {root}/greeting.txt.", **BASH},
                       {"text": "greeted"}]}  # fmt: skip
    done, out = run(workspace, home, "/myplugin:hello world", tracks, "--plugin-dir", str(root))
    assert done.returncode == 0, done.stderr
    assert out[-1]["result"] == "greeted"
    assert hook_log(workspace) == [f"{root} pre", f"{root} post"]


def test_system_init_lists_the_plugins_and_their_parts(
    tmp_path: Path, workspace: Path, home: Path
) -> None:
    root = write_plugin(tmp_path / "myplugin").resolve()
    done, out = run(workspace, home, "hi", {"lead": [{"text": "ok"}]}, "--plugin-dir", str(root))
    assert done.returncode == 0, done.stderr
    init = out[0]
    assert init["plugins"] == [
        {"name": "myplugin", "path": str(root), "source": "myplugin@inline", "version": "1.2.0"}
    ]
    assert {"myplugin:hello", "myplugin:git:status"} <= set(init["slash_commands"])
    assert "myplugin:helper" in init["agents"]


def test_a_plugins_skill_and_agent_are_used(tmp_path: Path, workspace: Path, home: Path) -> None:
    root = write_plugin(tmp_path / "myplugin").resolve()
    agent = {"subagent_type": "myplugin:helper", "description": "help", "prompt": "help me"}
    tracks = {
        "lead": [
            {"tool_uses": [{"name": "Skill", "input": {"skill": "myplugin:greet"}}]},
            {"expect": f"Read {root}/skills/greet/phrases.txt first.",
             "tool_uses": [{"name": "Agent", "input": agent}]},
            {"expect": "helped you", "text": "done"},
        ],
        "subagent": [{"expect": "help me", "text": "helped you"}],
    }  # fmt: skip
    done, out = run(workspace, home, "go", tracks, "--plugin-dir", str(root))
    assert done.returncode == 0, done.stderr
    assert out[-1]["result"] == "done"


def test_a_plugins_mcp_server_runs_with_its_root(
    tmp_path: Path, workspace: Path, home: Path
) -> None:
    root = write_plugin(tmp_path / "tools", "tools").resolve()
    shutil.copy(SERVER, root / "server.py")
    server = {"command": sys.executable, "args": ["${CLAUDE_PLUGIN_ROOT}/server.py"]}
    put(root / ".mcp.json", json.dumps({"mcpServers": {"srv": server}}))
    call = {"name": "mcp__plugin_tools_srv__echo", "input": {"text": "hi"}}
    tracks = {"lead": [{"tool_uses": [call]}, {"expect": "echo: hi", "text": "called"}]}
    done, out = run(workspace, home, "go", tracks, "--plugin-dir", str(root))
    assert done.returncode == 0, done.stderr
    assert out[-1]["result"] == "called"
    assert {"name": "plugin_tools_srv", "status": "connected"}.items() <= next(
        s for s in out[0]["mcp_servers"] if s["name"] == "plugin_tools_srv"
    ).items()


def test_a_bad_plugin_is_one_line_and_the_other_loads(
    tmp_path: Path, workspace: Path, home: Path
) -> None:
    bad = write_plugin(tmp_path / "bad", manifest="{not json", hooks=hooks_json()).resolve()
    good = write_plugin(tmp_path / "good", "good", hooks=hooks_json()).resolve()
    tracks = {"lead": [BASH, {"text": "ok"}]}
    done, out = run(workspace, home, "go", tracks, "--plugin-dir", str(bad), "--plugin-dir",
                    str(good))  # fmt: skip
    assert done.returncode == 0, done.stderr
    said = [line for line in done.stderr.splitlines() if "plugin" in line]
    assert len(said) == 1
    assert str(bad / ".claude-plugin" / "plugin.json") in said[0]
    assert [p["name"] for p in out[0]["plugins"]] == ["good"]
    assert hook_log(workspace) == [f"{good} pre", f"{good} post"]


def test_a_missing_plugin_dir_is_a_usage_error(tmp_path: Path, workspace: Path, home: Path) -> None:
    done = coterie("run", "-p", "go", "--plugin-dir", str(tmp_path / "gone"), cwd=workspace,
                   home=home)  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0
    assert "--plugin-dir" in done.stderr
    assert "no such directory" in done.stderr


def test_a_resumed_run_loads_its_plugins_again(tmp_path: Path, workspace: Path, home: Path) -> None:
    root = write_plugin(tmp_path / "myplugin", hooks=hooks_json()).resolve()
    tracks = {"lead": [BASH, {"text": "first"}, BASH, {"text": "second"}]}
    done, _ = run(workspace, home, "go", tracks, "--plugin-dir", str(root))
    assert done.returncode == 0, done.stderr
    run_id = only_run(workspace)
    config = json.loads((runs_root(workspace) / run_id / "config.json").read_text())
    assert config["plugin_dirs"] == [str(root)]
    (workspace / "plugin-hooks.log").unlink()
    again = coterie("resume", run_id, "again", "-p", cwd=workspace, home=home)
    assert (again.returncode, again.stdout) == (0, "second\n"), again.stderr
    assert hook_log(workspace) == [f"{root} pre", f"{root} post"]


def test_a_workspace_cannot_add_a_plugin(tmp_path: Path, workspace: Path, home: Path) -> None:
    """A plugin checked into the workspace, even a trusted one, loads only by --plugin-dir."""
    write_plugin(workspace, "sneaky", hooks=hooks_json())
    write_plugin(workspace / ".claude" / "plugins" / "sneaky2", "sneaky2", hooks=hooks_json())
    put(workspace / ".claude" / "settings.json", json.dumps({"enabledPlugins": {"sneaky": True}}))
    assert coterie("trust", str(workspace), cwd=workspace, home=home).returncode == 0
    done, out = run(workspace, home, "go", {"lead": [BASH, {"text": "ok"}]})
    assert done.returncode == 0, done.stderr
    assert out[0]["plugins"] == []
    assert not any(c.startswith("sneaky") for c in out[0]["slash_commands"])
    assert hook_log(workspace) == []


def test_a_plugins_files_may_be_read(tmp_path: Path, workspace: Path, home: Path) -> None:
    """Its commands and skills point at ${CLAUDE_PLUGIN_ROOT}/..., outside the workspace."""
    root = write_plugin(tmp_path / "myplugin").resolve()
    put(root / "greeting.txt", "Ahoy\n")
    read = {"name": "Read", "input": {"file_path": str(root / "greeting.txt")}}
    tracks = {"lead": [{"tool_uses": [read]}, {"expect": "Ahoy", "text": "read"}]}
    done, out = run(workspace, home, "go", tracks, "--plugin-dir", str(root))
    assert done.returncode == 0, done.stderr
    assert out[-1]["result"] == "read"


def test_a_plugins_files_are_not_written_even_in_the_workspace(workspace: Path, home: Path) -> None:
    """Its hooks run as the user's (in this run and on resume): they stay as chosen."""
    root = write_plugin(workspace / "tools" / "myplugin", hooks=hooks_json()).resolve()
    hooks = str(root / "hooks" / "hooks.json")
    read = {"name": "Read", "input": {"file_path": hooks}}
    write = {"name": "Write", "input": {"file_path": hooks, "content": "{}"}}
    tracks = {"lead": [{"tool_uses": [read]}, {"tool_uses": [write]}, {"text": "tried"}]}
    done, _ = run(workspace, home, "go", tracks, "--plugin-dir", "tools/myplugin")
    assert done.returncode == 0, done.stderr
    assert json.loads(Path(hooks).read_text()) == hooks_json()
