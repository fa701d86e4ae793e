"""``--json-schema``: the final answer through StructuredOutput, as Claude Code gives it
(the real CLI in temporary workspaces, on scripted models; docs/sdk.md)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest

from tests.agent.conftest import coterie

if TYPE_CHECKING:
    from pathlib import Path

SCHEMA = {
    "type": "object",
    "properties": {
        "answer": {"type": "integer"},
        "unit": {"type": "string", "pattern": "^[a-z]+$"},
    },
    "required": ["answer"],
}


def answer(value: dict[str, Any]) -> dict[str, Any]:
    """A turn whose model calls StructuredOutput with *value*."""
    return {"tool_uses": [{"name": "StructuredOutput", "input": value}]}


def run(
    tmp_path: Path, workspace: Path, home: Path, turns: list[dict[str, Any]], *flags: str
) -> tuple[int, dict[str, Any], str]:
    """``coterie -p --output-format json --json-schema SCHEMA`` on *turns*: exit code,
    result object, standard error."""
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps({"tracks": {"lead": turns}}))
    done = coterie(
        "-p", "--output-format", "json", "--json-schema", json.dumps(SCHEMA),
        "--scenario", str(path), *flags, "How much is two and two?",
        cwd=workspace, home=home,
    )  # fmt: skip
    result: dict[str, Any] = json.loads(done.stdout) if done.stdout.strip() else {}
    return done.returncode, result, done.stderr


def test_the_answer_comes_through_the_tool(tmp_path: Path, workspace: Path, home: Path) -> None:
    """The model's StructuredOutput call ends the run: no further model call (the
    scenario has none), ``structured_output`` is the answer, ``result`` its JSON."""
    code, result, stderr = run(tmp_path, workspace, home, [answer({"answer": 4})])
    assert code == 0, stderr
    assert (result["subtype"], result["is_error"]) == ("success", False)
    assert result["structured_output"] == {"answer": 4}
    assert json.loads(result["result"]) == {"answer": 4}


def test_stream_json_carries_it_in_the_result_line(
    tmp_path: Path, workspace: Path, home: Path
) -> None:
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps({"tracks": {"lead": [answer({"answer": 4, "unit": "apples"})]}}))
    done = coterie(
        "-p", "--output-format", "stream-json", "--verbose", "--json-schema", json.dumps(SCHEMA),
        "--scenario", str(path), "How much is two and two?", cwd=workspace, home=home,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    init, last = lines[0], lines[-1]
    assert "StructuredOutput" in init["tools"]
    assert last["type"] == "result"
    assert last["structured_output"] == {"answer": 4, "unit": "apples"}


def test_a_model_that_stops_without_it_is_asked_once_more(
    tmp_path: Path, workspace: Path, home: Path
) -> None:
    turns = [{"text": "It is four."}, {"expect": "StructuredOutput", **answer({"answer": 4})}]
    code, result, stderr = run(tmp_path, workspace, home, turns)
    assert code == 0, stderr
    assert result["structured_output"] == {"answer": 4}
    assert result["num_turns"] == 2


def test_a_model_that_stops_twice_ends_with_its_text_as_claude_code_does(
    tmp_path: Path, workspace: Path, home: Path
) -> None:
    turns = [{"text": "It is four."}, {"text": "Four, really."}, {"text": "never asked for"}]
    code, result, stderr = run(tmp_path, workspace, home, turns)
    assert code == 0, stderr
    assert (result["subtype"], result["result"]) == ("success", "Four, really.")
    assert "structured_output" not in result


def test_an_answer_that_does_not_fit_is_an_error_the_model_reads(
    tmp_path: Path, workspace: Path, home: Path
) -> None:
    """The whole schema judges the answer (``pattern`` here), and the model is told
    where it failed; its next call that fits ends the run."""
    turns = [
        answer({"answer": 4, "unit": "Apples!"}),
        {"expect": "$.unit", **answer({"answer": 4, "unit": "apples"})},
    ]
    code, result, stderr = run(tmp_path, workspace, home, turns)
    assert code == 0, stderr
    assert result["structured_output"] == {"answer": 4, "unit": "apples"}


def test_five_refused_answers_end_the_run_in_error(
    tmp_path: Path, workspace: Path, home: Path
) -> None:
    turns = [answer({"answer": f"four-{i}"}) for i in range(5)] + [answer({"answer": 4})]
    code, result, stderr = run(tmp_path, workspace, home, turns)
    assert code == 1, stderr
    assert (result["subtype"], result["is_error"]) == ("error_max_structured_output_retries", True)
    assert "5 attempts" in result["result"]
    assert "four-4" in result["result"]  # the last refusal says why
    assert "structured_output" not in result


def test_the_schema_may_be_a_file(tmp_path: Path, workspace: Path, home: Path) -> None:
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps(SCHEMA))
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps({"tracks": {"lead": [answer({"answer": 4})]}}))
    done = coterie(
        "-p", "--output-format", "json", "--json-schema", str(schema), "--scenario", str(path),
        "go", cwd=workspace, home=home,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["structured_output"] == {"answer": 4}


@pytest.mark.parametrize(
    ("schema", "said"),
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "must be a JSON object"),
        ('{"type": 12}', "not a valid JSON Schema: $.type"),
        ('{"type": "string"}', '"type": "object"'),
        ("no-such-schema.json", "neither a JSON object nor a readable file"),
    ],
)
def test_a_bad_schema_is_a_usage_error(
    tmp_path: Path, workspace: Path, home: Path, schema: str, said: str
) -> None:
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps({"tracks": {"lead": [{"text": "never"}]}}))
    done = coterie(
        "-p", "--json-schema", schema, "--scenario", str(path), "go", cwd=workspace, home=home
    )  # fmt: skip
    assert done.returncode == 2
    assert said in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr


def test_a_resumed_run_keeps_its_schema(tmp_path: Path, workspace: Path, home: Path) -> None:
    turns = [answer({"answer": 4}), {"text": "five"}, answer({"answer": 5})]
    code, first, stderr = run(tmp_path, workspace, home, turns)
    assert code == 0, stderr
    done = coterie(
        "resume", first["run_id"], "And two and three?", "-p", "--output-format", "json",
        cwd=workspace, home=home,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["structured_output"] == {"answer": 5}


def test_a_team_refuses_it(tmp_path: Path, workspace: Path, home: Path) -> None:
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps({"tracks": {"lead": [{"text": "never"}]}}))
    done = coterie(
        "team", "-p", "--json-schema", json.dumps(SCHEMA), "--scenario", str(path), "go",
        cwd=workspace, home=home,
    )  # fmt: skip
    assert done.returncode == 2
    assert "--json-schema is for one agent's run" in done.stderr
