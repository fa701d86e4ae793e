"""A teammate's policy rooted at its own checkout: project rules follow it, failing closed."""

from __future__ import annotations

from typing import TYPE_CHECKING

from coterie.runtime.rooting import rooted_policy
from coterie.tools import PermissionPolicy, ReadTool, ToolContext, WriteTool, parse_rule

if TYPE_CHECKING:
    from pathlib import Path


def _dirs(tmp_path: Path) -> tuple[Path, Path]:
    lead, mine = tmp_path / "ws", tmp_path / "checkout"
    for root in (lead, mine):
        (root / "secrets").mkdir(parents=True)
    return lead.resolve(), mine.resolve()


def test_a_project_deny_rule_holds_in_the_checkout_and_in_the_workspace(tmp_path: Path) -> None:
    lead, mine = _dirs(tmp_path)
    policy = PermissionPolicy(
        mode="bypassPermissions", deny=[parse_rule("Read(/secrets/**)", root=lead)]
    )
    rooted = rooted_policy(policy, lead, mine)
    ctx = ToolContext(workspace=mine)
    read = ReadTool()
    assert rooted.check(read, {"file_path": str(mine / "secrets/k")}, ctx).behavior == "deny"
    assert rooted.check(read, {"file_path": "README.md"}, ctx).behavior == "allow"
    assert len(rooted.deny) == 2  # the original anchor kept: deny rules only narrow


def test_a_project_allow_rule_moves_to_the_checkout(tmp_path: Path) -> None:
    lead, mine = _dirs(tmp_path)
    policy = PermissionPolicy(allow=[parse_rule("Edit(/src/**)", root=lead)])
    rooted = rooted_policy(policy, lead, mine)
    (rule,) = rooted.allow
    assert rule.root == mine
    ctx = ToolContext(workspace=mine)
    decision = rooted.check(WriteTool(), {"file_path": "src/a.py", "content": ""}, ctx)
    assert decision.behavior == "allow"


def test_rules_of_other_files_are_left_alone(tmp_path: Path) -> None:
    lead, mine = _dirs(tmp_path)
    user = parse_rule("Read(~/notes/**)", root=tmp_path / "home")
    policy = PermissionPolicy(deny=[user], allow=[parse_rule("Bash(ls *)")])
    rooted = rooted_policy(policy, lead, mine)
    assert rooted.deny == (user,)
    assert rooted.allow == policy.allow
    assert rooted is not policy  # a grant at this agent's prompt stays its own
