"""``/output-style`` in a conversation at a pseudo-terminal: it lists the styles, and
switches the conversation's from the next turn (the settings left as they are)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from tests.agent.conftest import coterie
from tests.interactive.test_conversation_cli import Terminal, scenario, trusted

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["trusted"]  # the fixture, used by name below

pytestmark = pytest.mark.slow


def test_output_style_lists_then_switches_from_the_next_turn(
    trusted: Path, home: Path, tmp_path: Path
) -> None:
    styles = trusted / ".claude" / "output-styles"
    styles.mkdir(parents=True)
    (styles / "poet.md").write_text("---\ndescription: rhymes\n---\nPOET-STYLE: rhyme.\n")
    # A file made after `coterie trust` is left out until trusted again: trust it now.
    assert coterie("trust", cwd=trusted, home=home).returncode == 0
    scen = scenario(
        tmp_path / "s.json",
        [
            {"text": "Plain answer.", "expect": "hi"},
            {"text": "Styled answer.", "expect": "# Output style: Explanatory"},
        ],
    )
    term = Terminal("--scenario", str(scen), cwd=trusted, home=home)
    term.prompt()
    term.type("hi\r")
    term.wait_for("Plain answer.")
    term.prompt()
    term.type("/output-style\r")
    listing = term.wait_for("switches from the next turn")
    assert "output style: " in listing
    assert "default" in listing
    assert "(current)" in listing
    assert "poet" in listing
    assert "rhymes" in listing
    term.prompt()
    term.type("/output-style nope\r")
    assert "unknown output style" in term.wait_for("known:")
    term.prompt()
    term.type("/output-style explanatory\r")  # any case, as a person types it
    assert "Explanatory" in term.wait_for("for this conversation")
    term.prompt()
    term.type("explain this\r")
    term.wait_for("Styled answer.")
    term.prompt()
    term.type("/exit\r")
    assert term.close() == 0
    assert not (trusted / ".claude" / "settings.local.json").exists()  # nothing persisted
