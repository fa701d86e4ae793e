"""An installed plugin in real runs: ``coterie plugin …`` then ``coterie run``, subprocesses.

A plugin from a local marketplace installed and enabled: its namespaced command
runs with a ``!`` line, its hook fires with ``${CLAUDE_PLUGIN_ROOT}``, and
``system/init`` names its marketplace; once uninstalled its command is gone. A
project's ``enabledPlugins`` loads nothing until the workspace is trusted.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from tests.agent.conftest import coterie
from tests.agent.test_resume_cli import write_scenario
from tests.commands.test_plugin_cli import marketplace
from tests.extensions.pluginfiles import put
from tests.extensions.test_extensions_cli import trust

if TYPE_CHECKING:
    import subprocess
    from pathlib import Path

BASH = {"tool_uses": [{"name": "Bash", "input": {"command": "echo hi"}}]}


def plugin(workspace: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    done = coterie("plugin", *args, cwd=workspace, home=home)
    assert done.returncode == 0, done.stderr
    return done


def run(
    workspace: Path, home: Path, prompt: str, tracks: dict[str, Any]
) -> tuple[subprocess.CompletedProcess[str], list[dict[str, Any]]]:
    scenario = write_scenario(workspace.parent / "s.json", tracks)
    done = coterie(
        "run", "-p", prompt, "--output-format", "stream-json", "--scenario", str(scenario),
        "--permission-mode", "bypassPermissions", cwd=workspace, home=home,
    )  # fmt: skip
    return done, [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


def test_installed_its_command_runs_a_bang_line_and_its_hooks_fire_uninstalled_gone(
    tmp_path: Path, workspace: Path, home: Path
) -> None:
    root = marketplace(tmp_path / "mp")
    body = "State: !`echo from-bang` in ${CLAUDE_PLUGIN_ROOT}\n"
    put(root / "plugins" / "hello" / "commands" / "status.md",
        f"---\nallowed-tools: Bash(echo:*)\n---\n{body}")  # fmt: skip
    plugin(workspace, home, "marketplace", "add", str(root))
    plugin(workspace, home, "install", "hello@demo-mp")
    cache = home / ".claude" / "plugins" / "cache" / "demo-mp" / "hello" / "1.2.0"
    tracks = {"lead": [{"expect": f"State: from-bang in {cache}", **BASH}, {"text": "done"}]}
    done, out = run(workspace, home, "/hello:status", tracks)
    assert done.returncode == 0, done.stderr
    assert out[0]["plugins"] == [
        {"name": "hello", "path": str(cache), "source": "hello@demo-mp", "version": "1.2.0"}
    ]
    assert out[-1]["result"] == "done"
    log = (workspace / "plugin-hooks.log").read_text().splitlines()
    # The ! line is a Bash call of the lead's too: the hooks see it, then the model's.
    assert log == [f"{cache} pre", f"{cache} post"] * 2
    plugin(workspace, home, "uninstall", "hello@demo-mp")
    done, _ = run(workspace, home, "/hello:status", {"lead": [{"text": "no"}]})
    assert done.returncode == 2
    assert "hello:status" in done.stderr


def test_a_projects_enabled_plugins_load_only_once_it_is_trusted(
    tmp_path: Path, workspace: Path, home: Path
) -> None:
    plugin(workspace, home, "marketplace", "add", str(marketplace(tmp_path / "mp")))
    plugin(workspace, home, "install", "hello@demo-mp", "--scope", "project")
    done, out = run(workspace, home, "hi", {"lead": [{"text": "ok"}]})
    assert done.returncode == 0, done.stderr
    assert out[0]["plugins"] == []
    said = [line for line in done.stderr.splitlines() if "enabledPlugins" in line]
    assert len(said) == 1
    assert "not trusted" in said[0]
    trust(workspace, home)
    done, out = run(workspace, home, "hi", {"lead": [{"text": "ok"}]})
    assert [p["source"] for p in out[0]["plugins"]] == ["hello@demo-mp"]
