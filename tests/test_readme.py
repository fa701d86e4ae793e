"""The README's embedding example runs as written."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).parents[1] / "README.md"


def test_the_embedding_example_runs(tmp_path: Path) -> None:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    (example,) = [b for b in blocks if "trio.run(main)" in b]
    script = tmp_path / "example.py"
    script.write_text(example)
    result = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=60, cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["greeter got hello", "greeter got bye"]


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
