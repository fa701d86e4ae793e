"""A command's ``!`` lines and ``@`` files through the real CLI, on the scripted model.

The lines run as the lead's own Bash calls before the prompt is sent (the
permission gate, under the command's ``allowed-tools``), their output in
their place; a line not allowed stops the command, headless, with one line
and no model request; ``@`` attaches a file that exists and leaves any other
``@`` (decorators, at-rules, scopes, mentions, missing files) as text.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from tests.agent.conftest import coterie
from tests.agent.test_resume_cli import write_scenario
from tests.extensions.test_extensions_cli import put, trust
from tests.team.test_team_cli import events_of

if TYPE_CHECKING:
    import subprocess
    from pathlib import Path


def run_command(
    workspace: Path, home: Path, body: str, expect: str, *, line: str = "/c"
) -> subprocess.CompletedProcess[str]:
    put(workspace / ".claude" / "commands" / "c.md", body)
    trust(workspace, home)
    scenario = write_scenario(
        workspace.parent / "s.json", {"lead": [{"expect": expect, "text": "answered"}]}
    )
    return coterie(
        "run", "-p", "--output-format", "json", "--scenario", str(scenario), line,
        cwd=workspace, home=home,
    )  # fmt: skip


def model_requests(workspace: Path) -> int:
    return sum(1 for e in events_of(workspace) if e.type == "model.requested")


def test_an_allowed_line_s_output_takes_its_place(workspace: Path, home: Path) -> None:
    body = "---\nallowed-tools: Bash(echo:*)\n---\nStatus: !`echo hi` for $1.\n"
    done = run_command(workspace, home, body, "Status: hi for you.", line="/c you")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["result"] == "answered"
    ran = [e.data for e in events_of(workspace) if e.type == "command.ran"]
    assert [(r["actor"], r["tool"], r["input"], r["is_error"]) for r in ran] == [
        ("lead", "Bash", {"command": "echo hi"}, False)
    ]


def test_a_bang_block_runs_whole(workspace: Path, home: Path) -> None:
    body = "---\nallowed-tools: Bash(echo:*)\n---\nBefore\n```!\necho one\necho two\n```\nAfter\n"
    done = run_command(workspace, home, body, "Before\none\ntwo\nAfter")
    assert done.returncode == 0, done.stderr


def test_a_line_not_allowed_stops_the_command_headless(workspace: Path, home: Path) -> None:
    body = "---\nallowed-tools: Bash(echo:*)\n---\nMade: !`touch made.txt`\n"
    done = run_command(workspace, home, body, "never")
    assert done.returncode != 0
    result = json.loads(done.stdout)
    assert result["is_error"] is True
    said = result["result"]
    assert said.startswith("/c stopped at !`touch made.txt`: Permission to use Bash was denied")
    assert "\n" not in said
    assert not (workspace / "made.txt").exists()
    assert model_requests(workspace) == 0


def test_a_line_not_allowed_is_one_line_on_stderr_in_text_mode(workspace: Path, home: Path) -> None:
    put(workspace / ".claude" / "commands" / "c.md", "Made: !`touch made.txt`\n")
    trust(workspace, home)
    scenario = write_scenario(workspace.parent / "s.json", {"lead": [{"text": "never"}]})
    done = coterie("run", "-p", "--scenario", str(scenario), "/c", cwd=workspace, home=home)
    assert done.returncode == 1
    assert done.stdout == ""
    said = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(said) == 1, done.stderr
    assert said[0].startswith("/c stopped at !`touch made.txt`")


def test_a_failing_line_stops_the_command(workspace: Path, home: Path) -> None:
    body = "---\nallowed-tools: Bash(ls:*)\n---\nList: !`ls no-such-dir`\n"
    done = run_command(workspace, home, body, "never")
    assert done.returncode != 0
    said = json.loads(done.stdout)["result"]
    assert said.startswith("/c stopped at !`ls no-such-dir`: ls: cannot access"), said
    assert model_requests(workspace) == 0


def test_a_file_is_attached_and_the_text_left_as_it_is(workspace: Path, home: Path) -> None:
    put(workspace / "README.md", "# The project readme\n")
    done = run_command(workspace, home, "Summarise @README.md.\n", "The project readme")
    assert done.returncode == 0, done.stderr
    reads = [e.data["input"] for e in events_of(workspace) if e.type == "command.ran"]
    assert reads == [{"file_path": str(workspace.resolve() / "README.md")}]
    scenario = write_scenario(
        workspace.parent / "s2.json", {"lead": [{"expect": "Summarise @README.md.", "text": "x"}]}
    )
    again = coterie("run", "-p", "--scenario", str(scenario), "/c", cwd=workspace, home=home)
    assert again.returncode == 0, again.stderr


CODE = """\
Check this:
```python
@dataclass
class A: ...

@pytest.fixture
def f(): ...

@app.get("/x")
def g(): ...
```
```css
@media screen { a { color: red } }
```
Install @scope/pkg, ask @john, see `@README.md` and @missing.txt.
"""


def test_other_ats_are_text(workspace: Path, home: Path) -> None:
    done = run_command(workspace, home, CODE, CODE.strip())
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["result"] == "answered"
    assert [e for e in events_of(workspace) if e.type == "command.ran"] == []


def test_in_a_conversation_lines_run_and_a_refused_one_stops(workspace: Path, home: Path) -> None:
    from tests.interactive.test_conversation_cli import Terminal

    put(workspace / ".claude" / "commands" / "c.md", "Status: !`echo hi` for $1\n")
    put(workspace / ".claude" / "commands" / "t.md", "Made: !`touch made.txt`\n")
    put(
        workspace / ".claude" / "commands" / "u.md",
        "---\nallowed-tools: Bash(touch:*)\n---\nMade: !`touch ok.txt`.\n",
    )
    trust(workspace, home)
    tracks = {
        "lead": [
            {"expect": "Status: hi for you", "text": "Seen."},
            {"expect": "Made: .", "text": "Seen too."},
        ]
    }
    scenario = write_scenario(workspace.parent / "s.json", tracks)
    term = Terminal("--scenario", str(scenario), cwd=workspace, home=home)
    term.prompt()
    term.type("/c you\r")
    term.wait_for("Seen.")
    term.prompt()
    term.type("/u\r")  # its allowed-tools cover the line: nobody is asked
    assert "choose 1-3" not in term.wait_for("Seen too.")
    assert (workspace / "ok.txt").exists()
    term.prompt()
    term.type("/t\r")
    term.wait_for("choose 1-3")  # not covered by a rule: the person is asked
    term.type("3\r")
    term.wait_for("(Enter to skip)")
    term.type("\r")
    term.wait_for("/t stopped at !`touch made.txt`")
    term.prompt()
    term.type("/exit\r")
    assert term.close() == 0
    assert not (workspace / "made.txt").exists()
