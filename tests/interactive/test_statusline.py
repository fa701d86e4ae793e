"""The status line: its setting, the JSON its command reads, and running it once.

The command runs through :func:`coterie.processes.open_group` (real processes
here): recorded in the run's ``procgroups/`` before it runs, its whole group
ended when it is done or its time is up. A command that fails or times out
shows nothing, as in Claude Code (measured: an exit status of 3 showed
nothing); every line it prints is shown, indented by two columns plus
``padding`` (measured: column 2 at padding 0, column 5 at padding 3).
"""

from __future__ import annotations

import json
import os
import shlex
from typing import TYPE_CHECKING

import pytest
from hypothesis import given
from hypothesis import strategies as st

from coterie.procgroups import records_dir
from coterie.ui.statusline import (
    MAX_LINES,
    StatusLineConfig,
    StatusLineError,
    display_name,
    parse_status_line,
    run_status_line,
    shown_lines,
    status_payload,
)

if TYPE_CHECKING:
    from pathlib import Path


def test_the_setting_s_shape() -> None:
    value = {"type": "command", "command": "~/bin/line.sh", "padding": 2}
    assert parse_status_line(value, "s.json") == StatusLineConfig("~/bin/line.sh", 2, "s.json")
    assert parse_status_line({"type": "command", "command": "x"}).padding == 0


@pytest.mark.parametrize(
    "value",
    [
        "echo hi",
        {"command": "echo hi"},
        {"type": "static", "command": "echo hi"},
        {"type": "command", "command": "  "},
        {"type": "command", "command": "x", "padding": -1},
        {"type": "command", "command": "x", "padding": True},
        {"type": "command", "command": "x", "padding": "2"},
    ],
)
def test_a_setting_of_the_wrong_shape_names_its_file(value: object) -> None:
    with pytest.raises(StatusLineError, match=r"^s\.json: "):
        parse_status_line(value, "s.json")


@given(st.text(max_size=300), st.integers(min_value=0, max_value=12))
def test_what_is_shown_of_any_output(stdout: str, padding: int) -> None:
    lines = shown_lines(stdout, padding)
    assert len(lines) <= MAX_LINES
    for line in lines:
        assert "\n" not in line
        assert "\r" not in line
        assert not any(ord(c) < 32 and c != "\x1b" for c in line)
        assert line == "" or line.startswith(" " * (2 + padding))
    assert not lines or lines[-1]


def test_colours_are_kept_and_each_line_indented() -> None:
    out = "\x1b[32mgreen\x1b[0m\nsecond\n\n"
    assert shown_lines(out, 3) == ("     \x1b[32mgreen\x1b[0m", "     second")


def test_the_payload_has_claude_code_s_keys(tmp_path: Path) -> None:
    payload = status_payload(
        session_id="r1", transcript_path=tmp_path / "t.jsonl", cwd=tmp_path,
        project_dir=tmp_path, model_id="claude-opus-5-5", version="0.1.0",
        input_tokens=13880, output_tokens=9, context_window=1_000_000,
        current_usage={"input_tokens": 13880, "output_tokens": 9},
    )  # fmt: skip
    # The keys Claude Code 2.1 gave its command (measured), less its own extras.
    assert set(payload) >= {"session_id", "transcript_path", "cwd", "model", "workspace",
                            "version", "output_style", "cost", "context_window",
                            "exceeds_200k_tokens"}  # fmt: skip
    assert payload["model"] == {"id": "claude-opus-5-5", "display_name": "Opus 5.5"}
    assert payload["workspace"] == {
        "current_dir": str(tmp_path),
        "project_dir": str(tmp_path),
        "added_dirs": [],
    }
    assert payload["context_window"]["used_percentage"] == 1
    assert payload["context_window"]["remaining_percentage"] == 99
    assert payload["output_style"] == {"name": "default"}


@pytest.mark.parametrize(
    ("model", "name"),
    [("claude-opus-5-5", "Opus 5.5"), ("claude-sonnet-4-5-20250929", "Sonnet 4.5"),
     ("claude-opus-4-20250514", "Opus 4"), ("gpt-x", "gpt-x")],
)  # fmt: skip
def test_display_names(model: str, name: str) -> None:
    assert display_name(model) == name


def payload(tmp_path: Path) -> dict[str, object]:
    return status_payload(
        session_id="r1", transcript_path=None, cwd=tmp_path, project_dir=tmp_path,
        model_id="claude-opus-5-5", version="0.1.0",
    )  # fmt: skip


async def test_the_command_reads_the_payload_and_its_lines_are_shown(tmp_path: Path) -> None:
    command = "cat > got.json; printf 'FIRST\\nsecond\\n'"
    lines = await run_status_line(
        StatusLineConfig(command, 1), payload(tmp_path), cwd=tmp_path, records=None
    )
    assert lines == ("   FIRST", "   second")
    assert json.loads((tmp_path / "got.json").read_text())["session_id"] == "r1"


async def test_a_failing_command_shows_nothing(tmp_path: Path) -> None:
    config = StatusLineConfig("echo shown; exit 3")
    assert await run_status_line(config, payload(tmp_path), cwd=tmp_path, records=None) == ()


async def test_it_is_recorded_before_it_runs_and_forgotten_after(tmp_path: Path) -> None:
    records = records_dir(tmp_path / "run")
    command = f"ls {shlex.quote(str(records))} | wc -l"
    lines = await run_status_line(
        StatusLineConfig(command), payload(tmp_path), cwd=tmp_path, records=records
    )
    assert lines == ("  1",)  # its own record, there while it ran
    assert list(records.iterdir()) == []


async def test_past_its_time_its_whole_group_is_ended(tmp_path: Path) -> None:
    command = "sleep 30 & echo $! > child; echo $$ > leader; echo late; wait"
    config = StatusLineConfig(command, timeout=0.5)
    records = records_dir(tmp_path / "run")
    assert await run_status_line(config, payload(tmp_path), cwd=tmp_path, records=records) == ()
    for name in ("leader", "child"):
        pid = int((tmp_path / name).read_text())
        assert not alive(pid), name
    assert list(records.iterdir()) == []


async def test_what_it_leaves_running_is_ended_when_it_is_done(tmp_path: Path) -> None:
    command = "sleep 30 >/dev/null 2>&1 & echo $! > child; echo done"
    lines = await run_status_line(
        StatusLineConfig(command), payload(tmp_path), cwd=tmp_path, records=None
    )
    assert lines == ("  done",)
    assert not alive(int((tmp_path / "child").read_text()))


def alive(pid: int) -> bool:
    """Whether *pid* runs (a zombie waiting for its reaper counts as ended)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False
