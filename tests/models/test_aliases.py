"""Claude Code's model aliases (issue 14): ``--model opus`` asks for the current id.

``--model opus`` used to be sent as is. Now ``sonnet``, ``opus``, ``haiku``
(and ``default``, ``sonnet[1m]``, ``opus[1m]``) map to model ids in one table,
for ``--model``, ``ANTHROPIC_MODEL``, the settings' ``model`` and a custom
subagent's ``model``; any other name is sent unchanged.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from coterie.models import DEFAULT_MODEL, MODEL_ALIASES, Usage, resolve_model
from coterie.models.pricing import cost_usd
from tests.agent.conftest import coterie, home, mock_server, workspace
from tests.agent.test_resume_cli import write_scenario

if TYPE_CHECKING:
    from pathlib import Path


def test_the_aliases_name_current_models() -> None:
    assert resolve_model("opus") == "claude-opus-5-5"
    assert resolve_model("Sonnet") == "claude-sonnet-5-5"
    assert resolve_model("haiku") == "claude-haiku-5-5"
    assert resolve_model("default") == DEFAULT_MODEL
    assert resolve_model("sonnet[1m]") == "claude-sonnet-5-5[1m]"


@given(st.text(min_size=1).filter(lambda s: s.strip().lower() not in MODEL_ALIASES))
def test_any_other_name_is_sent_unchanged(name: str) -> None:
    assert resolve_model(name) == name


@pytest.mark.parametrize(("asked", "how"), [("opus", "flag"), ("haiku", "env")])
def test_the_cli_asks_the_api_for_the_alias_s_model(
    workspace: Path, home: Path, mock_server: Any, tmp_path: Path, asked: str, how: str
) -> None:
    """Through the real SDK: the mock server answers with the model it was asked for,
    and the run is priced at it."""
    usage = {"input_tokens": 1_000_000, "output_tokens": 0}
    scenario = write_scenario(tmp_path / "s.json", {"lead": [{"text": "hi", "usage": usage}]})
    env = {"ANTHROPIC_BASE_URL": mock_server(scenario)}
    args = ["run", "-p", "--output-format", "json", "hello"]
    if how == "flag":
        args[1:1] = ["--model", asked]
    else:
        env["ANTHROPIC_MODEL"] = asked
    done = coterie(*args, cwd=workspace, home=home, env=env)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    expected = cost_usd(MODEL_ALIASES[asked], Usage(**usage))
    assert result["total_cost_usd"] == pytest.approx(expected)
    assert expected != cost_usd("claude-sonnet-5-5", Usage(**usage))  # a real difference


__all__ = ["home", "mock_server", "workspace"]  # the CLI fixtures, used above
