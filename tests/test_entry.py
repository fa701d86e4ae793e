"""The console script's entry (coterie.entry): ``--version`` costs no imports, and
Ctrl-C while the command line is still loading exits 130 without a traceback
(the console script, as users start it)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

from tests.agent.conftest import clean_env, home, mock_server, workspace

__all__ = ["home", "mock_server", "workspace"]  # the fixtures

HEAVY = ("anthropic", "trio", "rich", "coterie.cli", "coterie.runtime")


def test_version_imports_neither_the_runtime_nor_the_sdk() -> None:
    code = (
        "import json, sys\n"
        "from coterie.entry import main\n"
        "for words in (['--version'], ['-v']):\n"
        "    main(words)\n"
        f"print(json.dumps(sorted(m for m in sys.modules if m.startswith({HEAVY!r}))))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=clean_env(), timeout=60)  # fmt: skip
    lines = done.stdout.splitlines()
    assert lines[0].startswith("coterie ")
    assert lines[1].split()[0].count(".") == 2  # the Claude Code release the SDKs parse
    assert json.loads(lines[2]) == []


def test_ctrl_c_while_the_command_line_loads_exits_130_without_a_traceback() -> None:
    with subprocess.Popen(
        [str(Path(sys.executable).parent / "coterie"), "runs"],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, env=clean_env(PYTHONPROFILEIMPORTTIME="1"),
    ) as proc:  # fmt: skip
        assert proc.stderr is not None
        # PYTHONPROFILEIMPORTTIME: Python writes a line as each import ends: one of rich's means the
        # command line is being imported, after the entry's handler is in place.
        for line in proc.stderr:
            if line.split("|")[-1].strip() == "rich":
                proc.send_signal(signal.SIGINT)
                break
        else:
            raise AssertionError("rich was never imported")
        rest = proc.stderr.read()
        assert proc.wait(timeout=60) == 130
    assert "Traceback" not in rest


def test_a_finished_run_leaves_at_once_with_its_output_whole(
    tmp_path: Path, workspace: Path, home: Path, mock_server: Callable[[Path], str]
) -> None:
    """Through the real SDK path (the interpreter's teardown of it took seconds):
    the process is gone soon after its result line, and nothing it wrote is lost."""
    long = "word " * 20_000  # more than a pipe holds: the flush before leaving matters
    scen = tmp_path / "s.json"
    scen.write_text(json.dumps({"name": "exit", "tracks": {"lead": [{"text": long.strip()}]}}))
    url = mock_server(scen)
    env = clean_env(HOME=str(home), ANTHROPIC_BASE_URL=url, ANTHROPIC_API_KEY="k")
    with subprocess.Popen(
        [str(Path(sys.executable).parent / "coterie"), "-p", "hi", "--output-format", "json"],
        cwd=workspace, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, env=env,
    ) as proc:  # fmt: skip
        out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert json.loads(out)["result"] == long.strip()
