"""``--setting-sources`` naming the workspace's files: the person's word for one run.

An SDK program asking for the project's settings (``setting_sources=["project"]``)
passes ``--setting-sources project``: the untrusted workspace's settings and
``.claude`` files then load for that run, with one notice, and nothing is
recorded; without the flag they stay unread (docs/sdk.md, docs/permissions.md).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from tests.agent.conftest import coterie

if TYPE_CHECKING:
    from pathlib import Path


def _project(workspace: Path) -> None:
    claude = workspace / ".claude"
    (claude / "agents").mkdir(parents=True)
    (claude / "commands").mkdir()
    (claude / "settings.local.json").write_text(json.dumps({"outputStyle": "Explanatory"}))
    (claude / "agents" / "fs-agent.md").write_text(
        "---\nname: fs-agent\ndescription: a project agent\ntools: Read\n---\nBe brief.\n"
    )
    (claude / "commands" / "testcmd.md").write_text("---\ndescription: x\n---\nSay hi.\n")


def _init(tmp_path: Path, workspace: Path, home: Path, *flags: str) -> tuple[dict[str, Any], str]:
    """The ``system/init`` line of a one-turn run with *flags*, and its stderr."""
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"tracks": {"lead": [{"text": "hi"}]}}))
    done = coterie(
        "-p", "go", "--scenario", str(path), "--output-format", "stream-json", "--verbose",
        *flags, cwd=workspace, home=home,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    init: dict[str, Any] = json.loads(done.stdout.splitlines()[0])
    assert init["subtype"] == "init"
    return init, done.stderr


def test_naming_the_project_loads_an_untrusted_workspace_for_that_run(
    tmp_path: Path, workspace: Path, home: Path
) -> None:
    _project(workspace)
    init, stderr = _init(tmp_path, workspace, home, "--setting-sources", "user,project,local")
    assert "fs-agent" in init["agents"]
    assert init["output_style"] == "Explanatory"
    assert "testcmd" in init["slash_commands"]
    assert stderr.count("load for this run because --setting-sources names them") == 1
    # Nothing was recorded: the next run without the flag reads none of it.
    init, stderr = _init(tmp_path, workspace, home)
    assert "fs-agent" not in init["agents"]
    assert init["output_style"] == "default"
    assert "is not trusted" in stderr


def test_a_recorded_no_beats_the_flag(tmp_path: Path, workspace: Path, home: Path) -> None:
    _project(workspace)
    assert coterie("trust", "--revoke", str(workspace), cwd=workspace, home=home).returncode == 0
    init, _ = _init(tmp_path, workspace, home, "--setting-sources", "project,local")
    assert "fs-agent" not in init["agents"]
    assert init["output_style"] == "default"


def test_sources_without_project_leave_a_trusted_workspace_s_files_unread(
    tmp_path: Path, workspace: Path, home: Path
) -> None:
    _project(workspace)
    assert coterie("trust", str(workspace), cwd=workspace, home=home).returncode == 0
    init, _ = _init(tmp_path, workspace, home)
    assert "testcmd" in init["slash_commands"]
    assert "fs-agent" in init["agents"]
    init, _ = _init(tmp_path, workspace, home, "--setting-sources", "user")
    assert "testcmd" not in init["slash_commands"]
    assert "fs-agent" not in init["agents"]
