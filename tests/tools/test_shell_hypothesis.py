"""Properties of the shell reader under the policy (issue 11).

- No command line holding a command whose word is not a literal is ever
  allowed by an allow rule short of a whole-tool ``Bash``.
- No write to a path outside the workspace passes: whatever the policy
  allows in bypassPermissions, run for real, leaves everything outside the
  workspace as it was.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from coterie.tools import PermissionPolicy, ToolContext, default_registry
from coterie.tools.permissions import MODES
from tests.strategies import narrow_allow_rules, non_literal_commands, write_commands

if TYPE_CHECKING:
    from coterie.tools.permissions import Mode

BASH = next(t for t in default_registry() if t.name == "Bash")


@settings(max_examples=400, deadline=None)
@given(data=st.data(), mode=st.sampled_from([m for m in MODES if m != "bypassPermissions"]))
def test_no_non_literal_command_word_is_allowed_by_an_allow_rule(
    data: st.DataObject, mode: Mode
) -> None:
    command, word = data.draw(non_literal_commands())
    allow = data.draw(narrow_allow_rules(word))
    policy = PermissionPolicy.from_rules(mode=mode, allow=allow)
    decision = policy.check(BASH, {"command": command}, ToolContext(workspace=Path("/nowhere")))
    assert decision.behavior != "allow", (command, allow, decision)


@settings(max_examples=200, deadline=None)
@given(data=st.data(), mode=st.sampled_from(MODES))
def test_a_non_literal_command_word_is_refused_under_any_bash_deny_rule(
    data: st.DataObject, mode: Mode
) -> None:
    command, _ = data.draw(non_literal_commands())
    policy = PermissionPolicy.from_rules(mode=mode, allow=["Bash"], deny=["Bash(rm:*)"])
    decision = policy.check(BASH, {"command": command}, ToolContext(workspace=Path("/nowhere")))
    assert (decision.behavior, decision.rule) == ("deny", "Bash(rm:*)"), (command, decision)


def _outside_state(base: Path) -> list[tuple[str, bytes | str]]:
    state: list[tuple[str, bytes | str]] = []
    for dirpath, dirnames, filenames in os.walk(base):
        if Path(dirpath) == base:
            dirnames.remove("ws")
        state.append((dirpath, "dir"))
        for name in filenames:
            path = Path(dirpath, name)
            state.append((str(path), path.read_bytes()))
    return sorted(state)


def _reset(ws: Path) -> None:
    for name in ("x.txt", "ok.txt"):
        (ws / name).write_text("data\n")


def _run_if_allowed(base: Path, ws: Path, command: str) -> bool:
    """Decide *command* in bypassPermissions with ``allow Bash``; run it if allowed."""
    policy = PermissionPolicy.from_rules(mode="bypassPermissions", allow=["Bash"])
    decision = policy.check(BASH, {"command": command}, ToolContext(workspace=ws))
    if decision.behavior != "allow":
        return False
    _reset(ws)
    subprocess.run(
        ["bash", "-c", command], cwd=ws, capture_output=True, timeout=10, check=False,
        env={**os.environ, "HOME": str(base / "home")},
    )  # fmt: skip
    return True


@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(data=st.data())
def test_no_write_outside_the_workspace_passes(
    tree: tuple[Path, Path, Path], data: st.DataObject
) -> None:
    """Whatever is allowed in bypassPermissions, run for real, changes nothing outside."""
    base, ws, _ = tree
    command = data.draw(write_commands(str(ws), str(base)))
    before = _outside_state(base)
    _run_if_allowed(base, ws, command)
    assert _outside_state(base) == before, command


@pytest.mark.parametrize(
    "command",
    [
        "echo pwned > ../outside/f",
        "cd .. && echo pwned > outside/g",
        "echo pwned > link_out/h",
        "echo pwned >> ~/.bashrc",
        "cp x.txt link_up/outside/i",
        "echo pwned | tee dangling_out",
    ],
)
def test_outside_writes_are_refused_even_in_bypass(
    tree: tuple[Path, Path, Path], command: str
) -> None:
    base, ws, _ = tree
    assert not _run_if_allowed(base, ws, command)
