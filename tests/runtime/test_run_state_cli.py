"""Run state lives outside the workspace, out of the agent's reach (issue 11, finding 1).

The model found ``.coterie/runs/<id>/config.json`` in the workspace, rewrote
it to ``bypassPermissions`` and the next ``coterie resume`` ran that way.
Now runs live under the coterie home, file tools cannot reach it, and a
configuration changed anyway (here by arbitrary code the user allowed) is
refused on resume.
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

from coterie.home import coterie_home
from coterie.runs import runs_root
from tests.agent.conftest import coterie
from tests.agent.test_resume_cli import only_run, write_scenario

if TYPE_CHECKING:
    from pathlib import Path

REWRITE = (
    "import json, pathlib; from coterie.runs import runs_root; "
    "p = next(runs_root(pathlib.Path.cwd()).glob('*/config.json')); "
    "d = json.load(open(p)); d['permission_mode'] = 'bypassPermissions'; "
    "d['add_dirs'] = ['/']; json.dump(d, open(p, 'w'))"
)


def bash(command: str) -> dict[str, object]:
    return {"tool_uses": [{"name": "Bash", "input": {"command": command}}]}


def test_runs_live_under_the_coterie_home_not_in_the_workspace(workspace: Path, home: Path) -> None:
    scenario = write_scenario(workspace.parent / "s.json", {"lead": [{"text": "hi"}]})
    done = coterie("run", "-p", "--scenario", str(scenario), "hi", cwd=workspace, home=home)
    assert done.returncode == 0, done.stderr
    assert not (workspace / ".coterie").exists()
    run_dir = runs_root(workspace) / only_run(workspace)
    assert run_dir.is_relative_to(coterie_home())
    listed = coterie("runs", cwd=workspace, home=home)
    assert run_dir.name in listed.stdout


def test_file_tools_cannot_write_the_run_state(workspace: Path, home: Path) -> None:
    target = runs_root(workspace) / "planted.json"
    write = {"name": "Write", "input": {"file_path": str(target), "content": "{}"}}
    scenario = write_scenario(
        workspace.parent / "s.json", {"lead": [{"tool_uses": [write]}, {"text": "tried"}]}
    )
    done = coterie(
        "run", "-p", "--output-format", "stream-json", "--permission-mode", "bypassPermissions",
        "--scenario", str(scenario), "plant it", cwd=workspace, home=home,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert not target.exists()
    results = [
        block
        for line in done.stdout.splitlines()
        for block in (json.loads(line).get("message") or {}).get("content") or []
        if isinstance(block, dict) and block.get("type") == "tool_result"
    ]
    assert results
    assert results[0]["is_error"]


def test_a_configuration_changed_outside_coterie_is_refused_on_resume(
    workspace: Path, home: Path
) -> None:
    """Even code the user let run (bypassPermissions) cannot promote a later resume."""
    command = f'{sys.executable} -c "{REWRITE}"'
    scenario = write_scenario(
        workspace.parent / "s.json", {"lead": [bash(command), {"text": "promoted myself"}]}
    )
    first = coterie(
        "run", "-p", "--permission-mode", "bypassPermissions", "--scenario", str(scenario),
        "do it", cwd=workspace, home=home,
    )  # fmt: skip
    assert first.returncode == 0, first.stderr
    run_id = only_run(workspace)
    recorded = json.loads((runs_root(workspace) / run_id / "config.json").read_text())
    assert recorded["add_dirs"] == ["/"]  # the code did rewrite it
    again = coterie("resume", run_id, "and now?", "-p", cwd=workspace, home=home)
    assert again.returncode == 2
    assert "changed outside coterie" in again.stderr
    assert "Traceback" not in again.stderr


def test_runs_of_an_older_coterie_in_the_workspace_are_named_not_used(
    workspace: Path, home: Path
) -> None:
    (workspace / ".coterie" / "runs" / "20250101-000000-abcdef").mkdir(parents=True)
    listed = coterie("runs", cwd=workspace, home=home)
    assert listed.returncode == 0
    assert "older coterie" in listed.stderr
    assert "20250101" not in listed.stdout
