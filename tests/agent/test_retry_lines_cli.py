"""``-p`` never looks hung: every retried model call is one line on stderr (text and
json formats), a ``system/api_retry`` line on stream-json; stdout is the answer alone.

Through the real CLI and SDK against ``coterie mock-server``, whose first answer fails
once (a 529, or a reply cut off on the wire) before the reply.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

import pytest

from coterie.runs import runs_root
from tests.agent.conftest import coterie

if TYPE_CHECKING:
    from pathlib import Path

ANSWER = "Answered after a retry."
OVERLOADED = {"error": {"status": 529, "type": "overloaded_error", "message": "Overloaded"}}
FAILS_ONCE = {
    "overloaded": [OVERLOADED, {"text": ANSWER}],
    "cut": [{"text": ANSWER, "fault": {"kind": "cut", "after": 2}}],
}
#: What the one stderr line says of each failure.
REASONS = {"overloaded": "529 overloaded_error: Overloaded", "cut": ""}


def run_p(
    workspace: Path, home: Path, mock_server: Any, failure: str, output_format: str
) -> tuple[str, str]:
    scenario = workspace.parent / "s.json"
    scenario.write_text(json.dumps({"tracks": {"lead": FAILS_ONCE[failure]}}), encoding="utf-8")
    env = {
        "ANTHROPIC_BASE_URL": mock_server(scenario),
        "ANTHROPIC_API_KEY": "test-key",
        "COTERIE_MAX_RETRIES": "2",
    }
    done = coterie(
        "run", "hi", "-p", "--output-format", output_format, *(
            ["--verbose"] if output_format == "stream-json" else []
        ), cwd=workspace, home=home, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout, done.stderr


@pytest.mark.parametrize("failure", ["overloaded", "cut"])
@pytest.mark.parametrize("output_format", ["text", "json"])
def test_a_retried_call_is_one_line_on_stderr(
    workspace: Path, home: Path, mock_server: Any, failure: str, output_format: str
) -> None:
    stdout, stderr = run_p(workspace, home, mock_server, failure, output_format)
    (line,) = stderr.splitlines()
    said = re.fullmatch(
        r"note: model call attempt 1 of 3 failed \((.*)\); trying again in \d+\.\ds", line
    )
    assert said is not None, line
    assert REASONS[failure] in said[1]
    if output_format == "text":
        assert stdout == ANSWER + "\n"
    else:
        (result,) = [json.loads(text) for text in stdout.splitlines()]
        assert result["result"] == ANSWER


@pytest.mark.parametrize(
    ("failure", "status", "error"), [("overloaded", 529, "overloaded"), ("cut", None, "unknown")]
)
def test_stream_json_says_a_retry_as_claude_code_does(
    workspace: Path, home: Path, mock_server: Any, failure: str, status: int | None, error: str
) -> None:
    stdout, stderr = run_p(workspace, home, mock_server, failure, "stream-json")
    assert "attempt" not in stderr  # said on the stream, not twice
    lines = [json.loads(text) for text in stdout.splitlines()]
    retries = [line for line in lines if line.get("subtype") == "api_retry"]
    (retry,) = retries
    (run_dir,) = runs_root(workspace).iterdir()
    assert retry.keys() == {
        "type", "subtype", "attempt", "max_retries", "retry_delay_ms", "error_status", "error",
        "session_id", "uuid",
    }  # fmt: skip
    assert retry["type"] == "system"
    assert (retry["attempt"], retry["max_retries"]) == (1, 2)
    assert (retry["error_status"], retry["error"]) == (status, error)
    assert 0 < retry["retry_delay_ms"] <= 1000  # the first backoff: up to a second
    assert retry["session_id"] == run_dir.name
    assert lines.index(retry) < next(i for i, x in enumerate(lines) if x["type"] == "assistant")
    assert lines[-1]["result"] == ANSWER
