"""``/rewind`` in a live conversation: the checkpoints listed, files and the
conversation put back, and the next message goes on as if the rewound one was never
sent (in a pseudo-terminal, as a person types)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tests.agent.conftest import home, workspace
from tests.interactive.test_conversation_cli import Terminal, scenario, trusted

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["home", "trusted", "workspace"]  # fixtures


def test_rewind_lists_then_puts_files_and_conversation_back(
    trusted: Path, home: Path, tmp_path: Path
) -> None:
    (trusted / "keep.txt").write_text("as it was\n")
    write = {"name": "Write", "input": {"file_path": "made.txt", "content": "new\n"}}
    shell = {"name": "Bash", "input": {"command": "echo changed > keep.txt"}}
    lead = [
        {"text": "Noted."},
        {"tool_uses": [write, shell]},
        {"text": "Changed two files."},
        {"expect_not": "change them", "text": "Fresh start."},
    ]
    term = Terminal(
        "--scenario", str(scenario(tmp_path / "s.json", lead)),
        "--permission-mode", "bypassPermissions", cwd=trusted, home=home,
    )  # fmt: skip
    term.prompt()
    term.type("hello\r")
    term.wait_for("Noted.")
    term.prompt()
    term.type("change them\r")
    term.wait_for("Changed two files.")
    assert (trusted / "made.txt").exists()
    term.prompt()
    term.type("/rewind\r")
    listing = term.wait_for("/rewind N puts")
    assert "change them" in listing
    term.prompt()
    term.type("/rewind 2\r")
    term.wait_for("rewound to checkpoint 2")
    assert not (trusted / "made.txt").exists()
    assert (trusted / "keep.txt").read_text() == "as it was\n"
    term.prompt()
    term.type("again\r")  # its request no longer holds "change them" (expect_not)
    term.wait_for("Fresh start.")
    term.prompt()
    term.type("/exit\r")
    assert term.close() == 0
