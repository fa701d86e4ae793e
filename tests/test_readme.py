"""The README's embedding example runs as written."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

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
