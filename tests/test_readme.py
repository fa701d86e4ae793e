"""The README's embedding example runs as written."""

from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from coterie.cli import command_parser, routed

README = Path(__file__).parents[1] / "README.md"


EXPECTED = {
    "open_agent": ["Wrote hello.txt. 2 hi"],
    "actor_spec": ["greeter got hello", "greeter got bye"],
    "open_team": ["Both done. [('task_1', 'ana', 'completed'), ('task_2', 'ben', 'completed')]"],
}


@pytest.mark.parametrize("marker", sorted(EXPECTED))
def test_the_examples_run_as_written(tmp_path: Path, marker: str) -> None:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    (example,) = [b for b in blocks if marker in b]
    script = tmp_path / "example.py"
    script.write_text(example)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env["HOME"] = str(tmp_path)
    result = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        env=env,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == EXPECTED[marker]


def test_the_readme_opens_with_the_two_commands() -> None:
    text = README.read_text()
    head = text[: text.index("## What the demo shows")]
    assert "coterie demo" in head
    assert "pytest" in head


def test_ci_runs_the_readme_test_command() -> None:
    commands = re.findall(r"```sh\n(.*?)\n```", README.read_text(), re.S)
    (test_command,) = [c for c in commands if "pytest" in c]
    ci = (README.parent / ".ci" / "run").read_text()
    assert test_command.replace("pip install -e", "pip install -q -e") in ci


def documented_commands() -> list[tuple[str, list[str]]]:
    """Every ``coterie ...`` command in the shell blocks of the README and docs/,
    as (where, its words after ``coterie``): each command of a pipeline or a
    ``&&`` chain, comments and a ``$`` prompt left out, environment assignments
    skipped, continued lines joined."""
    found = []
    for doc in [README, *sorted((README.parent / "docs").glob("*.md"))]:
        for block in re.findall(r"```(?:sh|bash|console|shell)\n(.*?)```", doc.read_text(), re.S):
            pending = ""
            for line in block.replace("\\\n", " ").splitlines():
                pending += line.removeprefix("$ ")
                lexer = shlex.shlex(pending, posix=True, punctuation_chars=True)
                lexer.whitespace_split = True
                try:
                    tokens = list(lexer)
                except ValueError:  # a quote open across lines, as a shell reads it
                    pending += "\n"
                    continue
                pending = ""
                words: list[str] = []
                for token in [*tokens, ";"]:
                    if token and set(token) <= set("|&;<>()"):
                        while words and re.fullmatch(r"[A-Z_][A-Z0-9_]*=.*", words[0]):
                            words = words[1:]
                        if words and (words[0] == "coterie" or words[0].endswith("/coterie")):
                            found.append((f"{doc.name}: {' '.join(words)}", words[1:]))
                        words = []
                    else:
                        words.append(token)
    return found


def test_every_documented_command_line_parses() -> None:
    """The commands the README and the docs show are accepted by the real parser (a
    flag renamed or removed fails here, not in a user's terminal)."""
    parser, commands = command_parser()
    documented = documented_commands()
    assert len(documented) > 40  # the docs' examples are found at all
    refused = []
    for where, words in documented:
        err = io.StringIO()
        try:
            with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
                parser.parse_args(routed(words, commands))
        except SystemExit as exc:
            if exc.code:
                refused.append(f"{where}: {err.getvalue().strip().splitlines()[-1]}")
    assert refused == []
