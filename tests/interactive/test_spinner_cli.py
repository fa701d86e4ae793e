"""The live line of a conversation at a terminal: a long tool shows what runs, for
how long, and how to stop it; the line goes when the tool ends (issue 26)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import pytest

from tests.interactive.test_conversation_cli import Terminal, scenario, trusted
from tests.ui.terminal import screen

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["trusted"]  # the fixture, used by name below

pytestmark = pytest.mark.slow

LIVE = re.compile(r"Bash\(sleep 3\) · (\d)s · Ctrl-C to stop")


def test_a_long_tool_shows_a_live_line_with_its_seconds_that_goes_when_it_ends(
    trusted: Path, home: Path, tmp_path: Path
) -> None:
    scen = scenario(
        tmp_path / "s.json",
        [{"tool_uses": [{"name": "Bash", "input": {"command": "sleep 3"}}]}, {"text": "Slept."}],
    )
    term = Terminal(
        "--scenario", str(scen), "--allowedTools", "Bash(sleep:*)", cwd=trusted, home=home
    )
    term.prompt()
    term.type("nap\r")
    term.wait_for("Slept.")
    term.wait_for("this request: 2 turns")
    term.prompt()
    term.type("/exit\r")
    assert term.close() == 0
    seconds = {int(s) for s in LIVE.findall(term.screen)}
    assert seconds >= {1, 2}, term.screen  # drawn after a second, counting up
    shown = screen(term.screen)
    assert not [line for line in shown if "Ctrl-C to stop" in line], "\n".join(shown)
    done = next(i for i, line in enumerate(shown) if line.startswith("  ⎿"))
    assert shown[done - 1] == "⏺ Bash(sleep 3)"  # the result right below its call


def test_a_quick_tool_shows_no_live_line(trusted: Path, home: Path, tmp_path: Path) -> None:
    scen = scenario(
        tmp_path / "s.json",
        [{"tool_uses": [{"name": "Bash", "input": {"command": "sleep 0"}}]}, {"text": "Done."}],
    )
    term = Terminal(
        "--scenario", str(scen), "--allowedTools", "Bash(sleep:*)", cwd=trusted, home=home
    )
    term.prompt()
    term.type("go\r")
    term.wait_for("Done.")
    term.prompt()
    term.type("/exit\r")
    assert term.close() == 0
    assert "Ctrl-C to stop" not in term.screen


def test_coterie_run_at_a_terminal_shows_the_live_line_too(
    trusted: Path, home: Path, tmp_path: Path
) -> None:
    from tests.ui.terminal import run_in_pty

    scen = scenario(
        tmp_path / "s.json",
        [{"tool_uses": [{"name": "Bash", "input": {"command": "sleep 3"}}]}, {"text": "Slept."}],
    )
    args = ["run", "nap", "--scenario", str(scen), "--allowedTools", "Bash(sleep:*)"]
    code, raw = run_in_pty(args, trusted, home, [])
    lines = screen(raw)
    assert code == 0, "\n".join(lines)
    assert {int(s) for s in LIVE.findall(raw)} >= {1, 2}, raw
    assert not [line for line in lines if "Ctrl-C to stop" in line]
    assert any(line.startswith("● this request: 2 turns") for line in lines)
