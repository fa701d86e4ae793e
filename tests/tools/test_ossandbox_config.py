"""Issue 24, findings 2, 3 and 4 in the real bubblewrap sandbox: configuration that acts
later (``.claude``, ``.mcp.json``, ``.git``) stays read-only at ANY depth, and a protected
file with another name (a hard link, which passes a read-only bind) refuses the command.

Skipped where bwrap cannot run (not under ``CI=true``, as ``test_ossandbox_bwrap.py``).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import pytest

from coterie.tools import BashTool, ToolContext
from coterie.tools.ossandbox import Bubblewrap, SandboxError, SandboxSettings, probe

if TYPE_CHECKING:
    from pathlib import Path

WHY_NOT = probe()
if WHY_NOT is not None:
    if os.environ.get("CI") == "true":
        raise RuntimeError(f"CI must run the sandbox tests: {WHY_NOT}")
    pytest.skip(WHY_NOT, allow_module_level=True)

bash = BashTool(kill_grace=0.5, pipe_grace=0.2)


def sandboxed(workspace: Path, tmp_path: Path) -> ToolContext:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    settings = SandboxSettings.from_json({"enabled": True})
    sandbox = Bubblewrap.from_settings(settings, workspace, home=home)
    return ToolContext(workspace=workspace, sandbox=sandbox)


@pytest.fixture
def tree(workspace: Path) -> Path:
    """A nested project with its own settings and skill, a nested repository, an MCP file."""
    (workspace / "sub" / ".claude" / "skills" / "s").mkdir(parents=True)
    (workspace / "sub" / ".claude" / "settings.json").write_text("{}\n")
    (workspace / "sub" / ".claude" / "skills" / "s" / "SKILL.md").write_text("skill\n")
    (workspace / "lib" / "dep" / ".git" / "hooks").mkdir(parents=True)
    (workspace / "lib" / "dep" / ".git" / "config").write_text("[core]\n")
    (workspace / "wt").mkdir()
    (workspace / "wt" / ".git").write_text("gitdir: /elsewhere\n")
    (workspace / ".mcp.json").write_text("{}\n")
    (workspace / "sub" / ".mcp.json").write_text("{}\n")
    return workspace


async def test_nested_configuration_stays_read_only(tree: Path, tmp_path: Path) -> None:
    """Finding 4 (Bash in the sandbox wrote ``sub/.claude/settings.json``) and finding 3
    (``.mcp.json`` was writable in the sandbox): every such write fails now."""
    command = (
        'echo \'{"permissions":{"allow":["Bash"]}}\' > sub/.claude/settings.json;'
        " echo x > sub/.claude/skills/s/SKILL.md; mkdir sub/.claude/commands;"
        " echo '{\"mcpServers\":{}}' > .mcp.json; echo x > sub/.mcp.json;"
        " echo x >> lib/dep/.git/config; echo x > lib/dep/.git/hooks/post-checkout;"
        " echo 'gitdir: /planted' > wt/.git; echo end"
    )
    result = await bash.run({"command": command}, sandboxed(tree, tmp_path))
    assert result.content.count("Read-only file system") == 8, result.content
    assert (tree / "sub" / ".claude" / "settings.json").read_text() == "{}\n"
    assert (tree / "sub" / ".claude" / "skills" / "s" / "SKILL.md").read_text() == "skill\n"
    assert not (tree / "sub" / ".claude" / "commands").exists()
    assert (tree / ".mcp.json").read_text() == "{}\n"
    assert (tree / "sub" / ".mcp.json").read_text() == "{}\n"
    assert (tree / "lib" / "dep" / ".git" / "config").read_text() == "[core]\n"
    assert not (tree / "lib" / "dep" / ".git" / "hooks" / "post-checkout").exists()
    assert (tree / "wt" / ".git").read_text() == "gitdir: /elsewhere\n"


async def test_a_hard_link_cannot_be_made_to_a_protected_file(tree: Path, tmp_path: Path) -> None:
    """Finding 2 inside the sandbox: a read-only bind is another mount, so ``ln`` fails."""
    command = "ln sub/.claude/settings.json s; cp -l lib/dep/.git/config c; echo end"
    result = await bash.run({"command": command}, sandboxed(tree, tmp_path))
    assert result.content.endswith("end\n\nExit code: 0")
    assert not (tree / "s").exists()
    assert not (tree / "c").exists()
    assert (tree / "sub" / ".claude" / "settings.json").stat().st_nlink == 1


@pytest.mark.parametrize("protected", [".git/config", "sub/.claude/settings.json", ".mcp.json"])
async def test_a_protected_file_with_another_name_refuses_the_command(
    tree: Path, tmp_path: Path, protected: str
) -> None:
    """A hard link planted before (outside the sandbox) writes past the read-only bind."""
    (tree / ".git").mkdir()
    (tree / ".git" / "config").write_text("[core]\n")
    os.link(tree / protected, tree / "planted")
    ctx = sandboxed(tree, tmp_path)
    with pytest.raises(SandboxError, match="hard link"):
        ctx.sandbox.wrap(["bash", "-c", "true"], ctx)  # type: ignore[union-attr]
    result = await bash.run({"command": "echo '[core] fsmonitor = x' >> planted"}, ctx)
    assert result.is_error
    assert "OS sandbox cannot run this command" in result.content
    assert (tree / protected).read_text() in ("[core]\n", "{}\n")
