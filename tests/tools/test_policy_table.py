"""The policy decides every built-in tool in every mode as it did before capabilities.

``policy_table.json`` holds the old policy's decisions (name lists
``RUN_STATE_TOOLS``, ``EDIT_TOOLS``, ``READ_TOOLS``, ``_PATH_KEYS``), over
four rule sets, six modes and a spread of inputs per tool (see
``policy_cases.py``). The one intended change is bug 2 of issue 10:
ApprovePlan changes only the run's own state, so it is allowed everywhere.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest

from coterie.tools import builtin_tools
from tests.tools.policy_cases import MODES, RULES, decisions

OLD = json.loads((Path(__file__).parent / "policy_table.json").read_text())
#: Tools whose decisions were meant to change, and what they are now.
FIXED = {"ApprovePlan": ["allow", None]}


@pytest.fixture(scope="module")
def new() -> dict[str, Any]:
    # A module fixture: one pass over ~1,000 decisions serves every case below.
    with tempfile.TemporaryDirectory() as tmp:
        workspace = Path(tmp).resolve() / "ws"
        workspace.mkdir()
        return decisions(builtin_tools(), workspace)


def test_the_table_covers_every_built_in_tool() -> None:
    names = {t.name for t in builtin_tools()}
    for label in RULES:
        for mode in MODES:
            assert set(OLD[label][mode]) == names


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("label", list(RULES))
def test_decisions_are_unchanged(new: dict[str, Any], label: str, mode: str) -> None:
    expected = {
        tool: {case: FIXED.get(tool, old) for case, old in cases.items()}
        for tool, cases in OLD[label][mode].items()
    }
    assert new[label][mode] == expected


@pytest.mark.parametrize("mode", ["default", "plan", "dontAsk", "auto", "acceptEdits"])
def test_approve_plan_was_refused_before_and_is_allowed_now(new: dict[str, Any], mode: str) -> None:
    """Bug 2: the old table asks or denies ApprovePlan outside bypassPermissions."""
    assert OLD["none"][mode]["ApprovePlan"]["{}"][0] != "allow"
    assert new["none"][mode]["ApprovePlan"]["{}"] == ["allow", None]
