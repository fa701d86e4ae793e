"""``coterie`` at a terminal: a conversation, driven through a pseudo-terminal."""

from __future__ import annotations

import json
import os
import pty
import select
import signal
import subprocess
import sys
import time
from typing import TYPE_CHECKING

import pytest

from tests.agent.conftest import clean_env, coterie, mock_server, wait_for

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

__all__ = ["mock_server"]  # the fixture, used by name below

pytestmark = pytest.mark.slow


class Terminal:
    """A ``coterie`` process at a pseudo-terminal: what it shows, what is typed."""

    def __init__(
        self, *args: str, cwd: Path, home: Path, env: dict[str, str] | None = None
    ) -> None:
        master, slave = pty.openpty()
        self.fd = master
        terminal = {"COLUMNS": "200", "TERM": "xterm", "PROMPT_TOOLKIT_NO_CPR": "1"}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "coterie", *args],
            cwd=cwd,
            env={**clean_env(HOME=str(home), **terminal), **(env or {})},
            stdin=slave,
            stdout=slave,
            stderr=slave,
            close_fds=True,
            start_new_session=True,  # its own terminal: Ctrl-C reaches it alone
        )
        os.close(slave)
        self.screen = ""
        self.pending = ""

    def wait_for(self, needle: str, timeout: float = 60) -> str:
        """What the terminal shows up to and including *needle* (the rest is kept
        for the next wait)."""
        deadline = time.monotonic() + timeout
        while needle not in self.pending:
            remaining = deadline - time.monotonic()
            assert remaining > 0, f"never saw {needle!r}; got:\n{self.pending}"
            ready, _, _ = select.select([self.fd], [], [], remaining)
            if ready:
                try:
                    chunk = os.read(self.fd, 4096).decode(errors="replace")
                except OSError:  # the child closed the terminal
                    chunk = ""
                assert chunk, f"the terminal closed before {needle!r}; got:\n{self.pending}"
                self.pending += chunk
        end = self.pending.index(needle) + len(needle)
        seen, self.pending = self.pending[:end], self.pending[end:]
        self.screen += seen
        return seen

    def prompt(self) -> str:
        """Until the line editor waits for a line (it turns bracketed paste on)."""
        return self.wait_for("\x1b[?2004h")

    def type(self, text: str) -> None:
        os.write(self.fd, text.encode())

    def ctrl_c(self) -> None:
        os.write(self.fd, b"\x03")

    def close(self) -> int:
        try:
            return self.proc.wait(timeout=60)
        finally:
            self.proc.kill()
            self.proc.wait()
            os.close(self.fd)


def scenario(path: Path, lead: list[dict[str, object]]) -> Path:
    path.write_text(json.dumps({"name": "conversation", "tracks": {"lead": lead}}))
    return path


@pytest.fixture
def trusted(workspace: Path, home: Path) -> Path:
    """The workspace, trusted already (so no first-run question comes first)."""
    result = coterie("trust", cwd=workspace, home=home)
    assert result.returncode == 0, result.stderr
    return workspace


def test_a_two_turn_conversation_then_exit(trusted: Path, home: Path, tmp_path: Path) -> None:
    scen = scenario(
        tmp_path / "s.json",
        [
            {"text": "Hello there.", "expect": "hi"},
            {"text": "Still here.", "expect": "and again\non two lines"},
        ],
    )
    term = Terminal("--scenario", str(scen), cwd=trusted, home=home)
    term.prompt()
    term.type("hi\r")
    term.wait_for("Hello there.")
    term.prompt()
    term.type("and again\\\ron two lines\r")  # \ then Enter: a new line
    term.wait_for("Still here.")
    term.prompt()
    term.type("/exit\r")
    assert term.close() == 0
    from coterie.interactive import history_path

    assert "+and again" in history_path(trusted).read_text()  # the history, kept


def test_a_conversation_through_the_real_sdk(
    trusted: Path, home: Path, tmp_path: Path, mock_server: Callable[..., str]
) -> None:
    """The same conversation against ``coterie mock-server``: two turns streamed
    through the anthropic SDK, with a /model switch between them."""
    scen = scenario(
        tmp_path / "s.json",
        [{"text": "Hello there.", "expect": "hi"}, {"text": "Still here.", "expect": "again"}],
    )
    url = mock_server(scen)
    env = {"ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "test-key"}
    term = Terminal(cwd=trusted, home=home, env=env)
    term.prompt()
    term.type("hi\r")
    term.wait_for("Hello there.")
    term.prompt()
    term.type("/model haiku\r")
    term.wait_for("claude-haiku")
    term.prompt()
    term.type("again\r")
    term.wait_for("Still here.")
    term.prompt()
    term.type("/exit\r")
    assert term.close() == 0


def test_slash_commands_help_cost_model_and_an_unknown_one(
    trusted: Path, home: Path, tmp_path: Path
) -> None:
    delegate = {"name": "Task", "input": {"description": "d", "prompt": "look"}}
    tracks = {
        "lead": [{"tool_uses": [delegate], "usage": {"input_tokens": 1000}},
                 {"text": "Done.", "usage": {"input_tokens": 234}}],
        "subagent": [{"text": "looked",
                      "usage": {"input_tokens": 5, "cache_read_input_tokens": 77}}],
    }  # fmt: skip
    scen = tmp_path / "s.json"
    scen.write_text(json.dumps({"name": "conversation", "tracks": tracks}))
    term = Terminal("--scenario", str(scen), cwd=trusted, home=home)
    term.prompt()
    term.type("/help\r")
    term.wait_for("/permissions")
    term.type("go\r")  # typed ahead, while /help still prints: sent all the same
    term.wait_for("Done.")
    term.type("/cost\r")
    shown = term.wait_for("77 cache read")  # the subagent's line: who spent what
    assert "1,234 input" in shown
    assert "lead: 2 turns, 1,234 input" in shown
    term.type("/model opus\r")
    assert "claude-opus" in term.wait_for("claude-opus")  # the alias, resolved
    term.prompt()
    term.type("/model\r")
    assert "claude-opus" in term.wait_for("claude-opus")
    term.type("/cots\r")
    term.wait_for("did you mean /cost?")
    term.prompt()
    term.type("\x04")  # Ctrl-D leaves
    assert term.close() == 0


def test_ctrl_c_stops_the_turn_and_the_conversation_goes_on(
    trusted: Path, home: Path, tmp_path: Path
) -> None:
    scen = scenario(
        tmp_path / "s.json",
        [
            {"tool_uses": [{"name": "Bash", "input": {"command": "touch started; sleep 300"}}]},
            {"text": "Understood, no more sleeping.", "expect": "interrupted by user"},
        ],
    )
    term = Terminal(
        "--scenario", str(scen), "--permission-mode", "bypassPermissions", cwd=trusted, home=home
    )
    term.prompt()
    term.type("sleep a while\r")
    term.wait_for("Bash(")
    wait_for(trusted / "started", term.proc, "the tool never started")
    os.killpg(term.proc.pid, signal.SIGINT)  # Ctrl-C, as the terminal sends it
    term.wait_for("[Request interrupted by user for tool use]")
    term.prompt()
    term.type("stop sleeping\r")
    term.wait_for("Understood, no more sleeping.")
    term.prompt()
    term.type("/exit\r")
    assert term.close() == 0
    runs = coterie("runs", "--json", cwd=trusted, home=home)
    (run,) = [json.loads(line) for line in runs.stdout.splitlines()]
    assert run["state"] == "completed", run
    # A resume does not work on the cancelled request again: nothing is pending.
    again = coterie("resume", run["run_id"], cwd=trusted, home=home)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "nothing to resume" in again.stderr


def test_leaving_right_after_an_interrupted_turn_is_exit_0(
    trusted: Path, home: Path, tmp_path: Path
) -> None:
    """The interrupted turn was answered: leaving then is no failure, and the run is
    not marked failed (it was, and the exit code was 1)."""
    sleep = {"tool_uses": [{"name": "Bash", "input": {"command": "touch started; sleep 300"}}]}
    scen = scenario(tmp_path / "s.json", [sleep])
    term = Terminal(
        "--scenario", str(scen), "--permission-mode", "bypassPermissions", cwd=trusted, home=home
    )
    term.prompt()
    term.type("sleep a while\r")
    term.wait_for("Bash(")
    wait_for(trusted / "started", term.proc, "the tool never started")
    os.killpg(term.proc.pid, signal.SIGINT)
    term.wait_for("[Request interrupted by user for tool use]")
    term.prompt()
    term.type("/exit\r")
    assert term.close() == 0
    runs = coterie("runs", "--json", cwd=trusted, home=home)
    (run,) = [json.loads(line) for line in runs.stdout.splitlines()]
    assert run["state"] == "completed", run


@pytest.mark.parametrize("second", [{"text": "second look"}, {"expect": "never said", "text": "x"}])
def test_a_loop_says_when_its_next_tick_comes_and_ends_once(
    trusted: Path, home: Path, tmp_path: Path, second: dict[str, object]
) -> None:
    """Whether the loop ends well or with an error, its end is shown once."""
    scen = scenario(tmp_path / "s.json", [{"text": "first look"}, second])
    term = Terminal("--scenario", str(scen), "--max-ticks", "2", cwd=trusted, home=home)
    term.prompt()
    term.type("/loop 1s check the build\r")
    term.wait_for("▶ tick 1")
    waiting = term.wait_for("Ctrl-C stops the loop")
    assert "⏲ tick 2 at" in waiting
    assert "(in 1s)" in waiting
    term.wait_for("▶ tick 2")
    shown = term.wait_for("\x1b[?2004h")  # the prompt again: the loop is over
    assert shown.count("Loop ended after 2 tick(s)") == 1, shown
    term.type("/exit\r")
    assert term.close() == 0


@pytest.mark.parametrize("how", ["-c", "-r"])
def test_continue_or_resume_reopens_a_run_as_a_conversation(
    trusted: Path, home: Path, tmp_path: Path, how: str
) -> None:
    """``-c`` reopens the latest run; ``-r RUN_ID``, as ``claude -r``, that run even when
    another one came after it."""
    scen = scenario(
        tmp_path / "s.json",
        [{"text": "First answer."}, {"text": "I remember.", "expect": "what did you say"}],
    )
    first = coterie("-p", "remember this", "--scenario", str(scen), cwd=trusted, home=home)
    assert first.returncode == 0, first.stderr
    assert first.stdout.strip() == "First answer."
    runs = coterie("runs", "--json", cwd=trusted, home=home)
    (run,) = [json.loads(line) for line in runs.stdout.splitlines()]
    args = ["-c"]
    if how == "-r":
        other = scenario(tmp_path / "other.json", [{"text": "Other."}])
        assert coterie("-p", "x", "--scenario", str(other), cwd=trusted, home=home).returncode == 0
        args = ["-r", run["run_id"]]
    term = Terminal(*args, cwd=trusted, home=home)
    shown = term.prompt()
    # It recaps where the conversation stands before the person types.
    assert "exchange(s) of run" in shown
    assert "remember this" in shown
    assert "First answer." in shown
    term.type("what did you say?\r")
    term.wait_for("I remember.")
    term.prompt()
    term.type("/exit\r")
    assert term.close() == 0
    runs = coterie("runs", "--json", cwd=trusted, home=home)
    assert len(runs.stdout.splitlines()) == len(args)  # the same run, not a new one


def test_continue_headless_goes_on_with_the_prompt(
    trusted: Path, home: Path, tmp_path: Path
) -> None:
    scen = scenario(tmp_path / "s.json", [{"text": "One."}, {"text": "Two.", "expect": "b"}])
    assert coterie("-p", "a", "--scenario", str(scen), cwd=trusted, home=home).returncode == 0
    second = coterie("-c", "-p", "b", cwd=trusted, home=home)
    assert second.returncode == 0, second.stderr
    assert second.stdout.strip() == "Two."


def test_version(workspace: Path, home: Path) -> None:
    from coterie import __version__

    result = coterie("--version", cwd=workspace, home=home)
    assert result.returncode == 0
    assert result.stdout.startswith(f"coterie {__version__} ")
    # -v, as the Agent SDKs probe it: a version they parse (at least 2.0.0) first.
    probe = coterie("-v", cwd=workspace, home=home)
    assert probe.returncode == 0
    first = probe.stdout.split()[0]
    assert tuple(int(n) for n in first.split(".")) >= (2, 0, 0)
    assert f"coterie {__version__}" in probe.stdout


def test_print_without_a_subcommand_is_a_headless_run(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    scen = scenario(tmp_path / "s.json", [{"text": "Answered.", "expect": "the question"}])
    result = coterie("-p", "the question", "--scenario", str(scen), cwd=workspace, home=home)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "Answered."


@pytest.mark.parametrize("args", [[], ["run"], ["--permission-mode", "plan"]])
def test_no_terminal_and_no_prompt_is_a_usage_error(
    workspace: Path, home: Path, args: list[str]
) -> None:
    result = coterie(*args, cwd=workspace, home=home)
    assert result.returncode == 2
    assert "no prompt" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_subcommands_still_route(workspace: Path, home: Path) -> None:
    result = coterie("runs", cwd=workspace, home=home)
    assert result.returncode == 0, result.stderr
    helped = coterie("--help", cwd=workspace, home=home)
    assert "coterie [OPTIONS] [PROMPT]" in helped.stdout
    assert "conversation" in helped.stdout


def test_ctrl_c_twice_at_an_empty_prompt_leaves(trusted: Path, home: Path) -> None:
    (trusted.parent / "none.json").write_text('{"tracks": {"lead": []}}')
    term = Terminal("--scenario", str(trusted.parent / "none.json"), cwd=trusted, home=home)
    term.prompt()
    term.type("half a line")
    term.wait_for("half a line")
    term.ctrl_c()  # clears the line
    term.ctrl_c()
    term.wait_for("press Ctrl-C again to exit")
    term.prompt()
    term.ctrl_c()
    assert term.close() == 0


def test_ctrl_c_twice_in_a_turn_leaves_the_run_resumable(
    trusted: Path, home: Path, tmp_path: Path
) -> None:
    scen = scenario(
        tmp_path / "s.json",
        [{"tool_uses": [{"name": "Bash", "input": {"command": "touch started; sleep 300"}}]}],
    )
    term = Terminal(
        "--scenario", str(scen), "--permission-mode", "bypassPermissions", cwd=trusted, home=home
    )
    term.prompt()
    term.type("sleep\r")
    wait_for(trusted / "started", term.proc, "the tool never started")
    os.killpg(term.proc.pid, signal.SIGINT)
    term.wait_for("interrupting")
    os.killpg(term.proc.pid, signal.SIGINT)
    assert term.close() == 130


def test_clear_starts_a_new_run_and_resume_switches_back(
    trusted: Path, home: Path, tmp_path: Path
) -> None:
    scen = scenario(
        tmp_path / "s.json",
        [{"text": "In the first run."}, {"text": "Back in it.", "expect": "again"}],
    )
    term = Terminal("--scenario", str(scen), cwd=trusted, home=home)
    term.prompt()
    term.type("first\r")
    term.wait_for("In the first run.")
    term.prompt()
    term.type("/permissions\r")
    term.wait_for("mode:")
    term.prompt()
    term.type("/agents\r")
    term.wait_for("Explore")
    term.prompt()
    term.type("/clear\r")
    term.wait_for("a new conversation starts")
    term.prompt()
    runs = [
        json.loads(line)
        for line in coterie("runs", "--json", cwd=trusted, home=home).stdout.splitlines()
    ]
    assert len(runs) == 2
    (first,) = [run["run_id"] for run in runs if run["request"] == "first"]
    term.type(f"/resume {first[:-2]}\r")  # a unique prefix is enough
    term.wait_for(first)
    term.prompt()
    term.type("again\r")
    term.wait_for("Back in it.")
    term.prompt()
    term.type("/exit\r")
    assert term.close() == 0
