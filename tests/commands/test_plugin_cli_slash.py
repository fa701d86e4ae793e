"""``/plugin`` in the interactive session: the installed plugins and the marketplaces."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tests.commands.test_plugin_cli import marketplace
from tests.commands.test_plugin_cli_run import plugin
from tests.interactive.test_conversation_cli import Terminal, scenario, trusted

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["trusted"]  # the fixture, used by name below


def test_slash_plugin_lists_what_is_installed(trusted: Path, home: Path, tmp_path: Path) -> None:
    plugin(trusted, home, "marketplace", "add", str(marketplace(tmp_path / "mp")))
    plugin(trusted, home, "install", "hello@demo-mp")
    term = Terminal("--scenario", str(scenario(tmp_path / "s.json", [])), cwd=trusted, home=home)
    term.prompt()
    term.type("/plugin\r")
    shown = term.wait_for("coterie plugin marketplace add")
    assert "hello@demo-mp  1.2.0  user scope  enabled" in shown
    assert "demo-mp  directory" in shown
    term.prompt()
    term.type("\x04")
    assert term.close() == 0
