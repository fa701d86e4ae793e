"""The status line in a conversation at a pseudo-terminal.

The ``statusLine`` command of the user's settings runs before each prompt,
reads the session's JSON, and what it prints is shown under the prompt; a
project's runs only once the workspace is trusted. A skill is a ``/name``
command here too.
"""

from __future__ import annotations

import json
import os
import select
import shlex
import time
from typing import TYPE_CHECKING

import pytest

from tests.agent.conftest import coterie
from tests.interactive.test_conversation_cli import Terminal, scenario, trusted

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["trusted"]  # the fixture, used by name below

pytestmark = pytest.mark.slow


class Screen(Terminal):
    """A terminal that answers the line editor's cursor position requests, as a
    real one does (the line editor draws what is under the prompt only then)."""

    def __init__(self, *args: str, cwd: Path, home: Path) -> None:
        super().__init__(*args, cwd=cwd, home=home, env={"PROMPT_TOOLKIT_NO_CPR": "0"})

    def wait_for(self, needle: str, timeout: float = 60) -> str:
        deadline = time.monotonic() + timeout
        while needle not in self.pending:
            remaining = deadline - time.monotonic()
            assert remaining > 0, f"never saw {needle!r}; got:\n{self.pending}"
            if select.select([self.fd], [], [], remaining)[0]:
                try:
                    chunk = os.read(self.fd, 4096).decode(errors="replace")
                except OSError:
                    chunk = ""
                assert chunk, f"the terminal closed before {needle!r}; got:\n{self.pending}"
                if "\x1b[6n" in chunk:
                    os.write(self.fd, b"\x1b[1;1R")
                self.pending += chunk
        end = self.pending.index(needle) + len(needle)
        seen, self.pending = self.pending[:end], self.pending[end:]
        self.screen += seen
        return seen


def settings(folder: Path, command: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    line = {"type": "command", "command": command, "padding": 1}
    (folder / "settings.json").write_text(json.dumps({"statusLine": line}))


def test_the_user_s_status_line_is_shown_under_the_prompt(
    trusted: Path, home: Path, tmp_path: Path
) -> None:
    got = tmp_path / "payload.json"
    settings(home / ".claude", f"cat > {shlex.quote(str(got))}; echo STATUS-$((6*7))")
    scen = scenario(tmp_path / "s.json", [{"text": "Answered."}])
    term = Screen("--scenario", str(scen), cwd=trusted, home=home)
    term.prompt()
    term.wait_for("STATUS-42")  # under the prompt
    term.type("hi\r")
    term.wait_for("Answered.")
    term.prompt()
    term.wait_for("STATUS-42")  # drawn again for the next prompt
    term.type("/exit\r")
    assert term.close() == 0
    payload = json.loads(got.read_text())
    assert payload["cwd"] == str(trusted.resolve())
    assert payload["workspace"]["project_dir"] == str(trusted.resolve())
    assert payload["session_id"]
    assert payload["transcript_path"].endswith(".jsonl")


def test_an_untrusted_project_s_status_line_never_runs(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    ran = tmp_path / "ran"
    settings(workspace / ".claude", f"touch {shlex.quote(str(ran))}; echo PROJECT-LINE")
    # Declined at the first-run question: the project's settings stay untrusted.
    assert coterie("trust", "--revoke", cwd=workspace, home=home).returncode == 0
    scen = scenario(tmp_path / "s.json", [{"text": "Answered."}])
    term = Screen("--scenario", str(scen), cwd=workspace, home=home)
    term.prompt()
    term.type("hi\r")
    term.wait_for("Answered.")
    term.prompt()
    term.type("/exit\r")
    assert term.close() == 0
    assert "PROJECT-LINE" not in term.screen + term.pending
    assert not ran.exists()


def test_a_skill_is_a_slash_command_in_the_conversation(
    trusted: Path, home: Path, tmp_path: Path
) -> None:
    folder = trusted / ".claude" / "skills" / "hook-dev"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        "---\nname: Hook Development\ndescription: Writes hooks.\n---\nHook for: $ARGUMENTS\n"
    )
    assert coterie("trust", cwd=trusted, home=home).returncode == 0  # approve the new file
    scen = scenario(tmp_path / "s.json", [{"text": "Hooked.", "expect": "Hook for: Stop"}])
    term = Screen("--scenario", str(scen), cwd=trusted, home=home)
    term.prompt()
    term.type("/help\r")
    term.wait_for("Writes hooks.")
    term.prompt()
    term.type("/hook-dev Stop\r")
    term.wait_for("Hooked.")
    term.prompt()
    term.type("/exit\r")
    assert term.close() == 0
