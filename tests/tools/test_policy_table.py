"""The policy decides every built-in tool in every mode as it did before capabilities.

``policy_table.json`` holds the old policy's decisions (name lists
``RUN_STATE_TOOLS``, ``EDIT_TOOLS``, ``READ_TOOLS``, ``_PATH_KEYS``), over
four rule sets, six modes and a spread of inputs per tool (see
``policy_cases.py``). The intended changes since, each written out in
:func:`intended` with the finding it answers:

- issue 10, bug 2: ApprovePlan changes only the run's own state, so it is
  allowed everywhere;
- issue 11, finding 5: a Read deny rule covers ``cat`` of the file and a
  Write or Edit into it, in every mode;
- issue 11, finding 10: read-only commands (``ls -la``, ``cat``) pass in every
  mode (plan and dontAsk included), and ``acceptEdits`` covers ``rm`` inside
  the workspace;
- issue 24, finding 5: ``.claude/commands`` is configuration a later run obeys,
  protected like the rest of ``.claude`` (asked in every mode);
- issue 24, finding 10: ``Write(path)`` allow rules are ignored, as Claude Code
  ignores them (``Write`` alone still allows every write);
- issue 25: a file tool's path outside the workspace is a question for a person
  (``outside-workspace``, in every mode), no longer a refusal; denied in
  dontAsk, and a write still stopped by plan mode's ceiling.
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
READ_ONLY = ("ls -la", "cat secret/k.txt")
#: Tools made after the old policy, with no old decision to keep (tested below).
NEWER = {
    "MergeTask", "WebFetch", "NotebookEdit", "TaskStop", "Monitor", "BashOutput",
    "WebSearch", "AskUserQuestion", "EnterPlanMode", "ExitPlanMode", "CronCreate", "CronList",
    "CronDelete", "EnterWorktree", "ExitWorktree", "ListAgents", "Workflow",
}  # fmt: skip


def intended(label: str, mode: str, tool: str, case: str, old: list[Any]) -> list[Any]:
    """The decision now: the old one, except where an issue changed it on purpose."""
    if tool == "ApprovePlan":
        return ["allow", None]
    if label == "reads-and-bash" and (tool, case) in (
        ("Bash", "cat secret/k.txt"),
        ("Write", "secret/k.txt"),
        ("Edit", "secret/k.txt"),
    ):
        return ["deny", "Read(./secret/**)"]
    if tool == "Bash" and case in READ_ONLY and old[0] != "allow":
        # Plan mode's ceiling no longer stops them, so an allow rule may decide.
        rule = OLD[label]["default"][tool][case][1] if mode == "plan" else None
        return ["allow", rule]
    if (tool, case, mode) == ("Bash", "ls src && rm -rf build", "acceptEdits") and old[0] == "ask":
        return ["allow", None]
    if old == ["deny", "sandbox"]:  # only a path outside the workspace was so refused
        if mode == "plan" and tool in ("Write", "Edit"):
            return ["deny", "plan-mode"]
        return ["deny" if mode == "dontAsk" else "ask", "outside-workspace"]
    if tool in ("Write", "Edit") and case == ".claude/commands/x.md" and old[1] != "plan-mode":
        return ["deny" if mode == "dontAsk" else "ask", "protected-path"]
    return old


@pytest.fixture(scope="module")
def new() -> dict[str, Any]:
    # A module fixture: one pass over ~1,000 decisions serves every case below.
    with tempfile.TemporaryDirectory() as tmp:
        workspace = Path(tmp).resolve() / "ws"
        workspace.mkdir()
        return decisions(builtin_tools(), workspace)


def test_the_table_covers_every_built_in_tool() -> None:
    names = {t.name for t in builtin_tools()} - NEWER
    for label in RULES:
        for mode in MODES:
            assert set(OLD[label][mode]) == names


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("label", list(RULES))
def test_decisions_are_unchanged(new: dict[str, Any], label: str, mode: str) -> None:
    expected = {
        tool: {case: intended(label, mode, tool, case, old) for case, old in cases.items()}
        for tool, cases in OLD[label][mode].items()
    }
    assert {k: v for k, v in new[label][mode].items() if k not in NEWER} == expected


#: MergeTask changes the workspace's files: asked like any write, never under plan.
MERGE_TASK = {
    "default": ["ask", None], "acceptEdits": ["ask", None], "plan": ["deny", "plan-mode"],
    "auto": ["ask", None], "dontAsk": ["deny", None], "bypassPermissions": ["allow", None],
}  # fmt: skip


@pytest.mark.parametrize("label", list(RULES))
def test_merge_task_goes_through_the_gate_like_a_write(new: dict[str, Any], label: str) -> None:
    assert {mode: new[label][mode]["MergeTask"]["{}"] for mode in MODES} == MERGE_TASK


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("label", list(RULES))
def test_notebook_edit_is_decided_as_edit_is(new: dict[str, Any], label: str, mode: str) -> None:
    """NotebookEdit declares what Edit declares (it writes the path it names), so every
    rule set and mode decides both alike, path by path (Edit rules, acceptEdits, the
    sandbox, the protected paths)."""
    assert new[label][mode]["NotebookEdit"] == new[label][mode]["Edit"]


@pytest.mark.parametrize("mode", ["default", "plan", "dontAsk", "auto", "acceptEdits"])
def test_approve_plan_was_refused_before_and_is_allowed_now(new: dict[str, Any], mode: str) -> None:
    """Bug 2: the old table asks or denies ApprovePlan outside bypassPermissions."""
    assert OLD["none"][mode]["ApprovePlan"]["{}"][0] != "allow"
    assert new["none"][mode]["ApprovePlan"]["{}"] == ["allow", None]


@pytest.mark.parametrize("mode", ["default", "plan", "dontAsk", "auto", "acceptEdits"])
def test_read_only_commands_asked_or_were_refused_before_and_pass_now(
    new: dict[str, Any], mode: str
) -> None:
    """Issue 11, finding 10: ``ls -la`` needed approval in every mode but bypass."""
    assert OLD["none"][mode]["Bash"]["ls -la"][0] != "allow"
    assert new["none"][mode]["Bash"]["ls -la"] == ["allow", None]


def test_a_read_deny_rule_did_not_cover_cat_and_does_now(new: dict[str, Any]) -> None:
    """Issue 11, finding 5: bypassPermissions let ``cat`` read a Read-denied file."""
    assert OLD["reads-and-bash"]["bypassPermissions"]["Bash"]["cat secret/k.txt"][0] == "allow"
    decision = new["reads-and-bash"]["bypassPermissions"]["Bash"]["cat secret/k.txt"]
    assert decision == ["deny", "Read(./secret/**)"]
