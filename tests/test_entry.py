"""The console script's entry (coterie.entry): ``--version`` costs no imports, and
Ctrl-C while the command line is still loading exits 130 without a traceback
(the console script, as users start it)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

from tests.agent.conftest import clean_env

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
