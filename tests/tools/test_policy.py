"""The permission policy: the mode matrix, rule precedence, and its properties."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from coterie.tools import PermissionPolicy, ToolContext, default_registry
from coterie.tools.permissions import MODES, Mode
from tests.strategies import hard_denied_commands, modes, safe_commands, smuggled

TOOLS = {t.name: t for t in default_registry()}
WS = Path("/nonexistent/coterie-ws")  # pure logic: nothing is touched on disk


def check(
    policy: PermissionPolicy, tool: str, input: dict[str, Any], workspace: Path = WS
) -> tuple[str, str]:
    decision = policy.check(TOOLS[tool], input, ToolContext(workspace=workspace))
    return decision.behavior, decision.reason


def behavior(policy: PermissionPolicy, tool: str, input: dict[str, Any]) -> str:
    return check(policy, tool, input)[0]


# -- the mode matrix, with no rules -------------------------------------------

CALLS: dict[str, tuple[str, dict[str, Any]]] = {
    "read": ("Read", {"file_path": "src/a.py"}),
    "glob": ("Glob", {"pattern": "**/*.py"}),
    "grep": ("Grep", {"pattern": "x", "path": "src"}),
    "todo": ("TodoWrite", {"todos": []}),
    "write": ("Write", {"file_path": "src/a.py", "content": ""}),
    "edit": ("Edit", {"file_path": "src/a.py", "old_string": "a", "new_string": "b"}),
    "bash": ("Bash", {"command": "npm test"}),
    "write-outside": ("Write", {"file_path": "../elsewhere.txt", "content": ""}),
    "read-outside": ("Read", {"file_path": "/etc/passwd"}),
    "hard-denied": ("Bash", {"command": "rm -rf /"}),
}

EXPECTED: dict[str, dict[str, str]] = {
    #                  default  acceptEdits  plan    auto   dontAsk  bypassPermissions
    "read": dict(zip(MODES, ["allow", "allow", "allow", "allow", "allow", "allow"], strict=True)),
    "glob": dict(zip(MODES, ["allow", "allow", "allow", "allow", "allow", "allow"], strict=True)),
    "grep": dict(zip(MODES, ["allow", "allow", "allow", "allow", "allow", "allow"], strict=True)),
    "todo": dict(zip(MODES, ["allow", "allow", "allow", "allow", "allow", "allow"], strict=True)),
    "write": dict(zip(MODES, ["ask", "allow", "deny", "ask", "deny", "allow"], strict=True)),
    "edit": dict(zip(MODES, ["ask", "allow", "deny", "ask", "deny", "allow"], strict=True)),
    "bash": dict(zip(MODES, ["ask", "ask", "deny", "ask", "deny", "allow"], strict=True)),
    # Outside the workspace only a person may let one call through (issue 25):
    # asked in every mode (never by a rule or Auto Mode's classifier), denied
    # where nobody is asked (dontAsk) or plan mode's ceiling stops a write.
    "write-outside": {**dict.fromkeys(MODES, "ask"), "dontAsk": "deny", "plan": "deny"},
    "read-outside": {**dict.fromkeys(MODES, "ask"), "dontAsk": "deny"},
    "hard-denied": dict.fromkeys(MODES, "deny"),
}


def test_modes_are_claude_codes() -> None:
    assert MODES == ("default", "acceptEdits", "plan", "auto", "dontAsk", "bypassPermissions")


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("call", list(CALLS))
def test_mode_matrix(mode: Mode, call: str) -> None:
    tool, input = CALLS[call]
    assert behavior(PermissionPolicy(mode=mode), tool, input) == EXPECTED[call][mode]


def test_plan_mode_explains_itself() -> None:
    _, reason = check(PermissionPolicy(mode="plan"), "Write", CALLS["write"][1])
    assert "Plan mode" in reason


def test_unknown_mode_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown permission mode"):
        PermissionPolicy(mode="yolo")  # type: ignore[arg-type]


# -- rules -------------------------------------------------------------------


def test_allow_rule_allows_a_matching_command() -> None:
    policy = PermissionPolicy.from_rules(allow=["Bash(npm test *)"])
    assert behavior(policy, "Bash", {"command": "npm test -- --watch"}) == "allow"


def test_an_allowed_prefix_does_not_allow_a_compound() -> None:
    policy = PermissionPolicy.from_rules(allow=["Bash(npm test *)"])
    assert behavior(policy, "Bash", {"command": "npm test && rm -rf x"}) == "ask"


def test_every_part_must_be_allowed() -> None:
    policy = PermissionPolicy.from_rules(allow=["Bash(npm test *)", "Bash(rm -rf build)"])
    assert behavior(policy, "Bash", {"command": "rm -rf build && npm test"}) == "allow"


def test_substitutions_need_approval_despite_a_narrow_allow_rule() -> None:
    policy = PermissionPolicy.from_rules(allow=["Bash(echo *)"])
    decision, reason = check(policy, "Bash", {"command": "echo $(whoami)"})
    assert decision == "ask"
    assert "command substitution" in reason


def test_a_bare_bash_allow_rule_allows_substitutions() -> None:
    policy = PermissionPolicy.from_rules(allow=["Bash"])
    assert behavior(policy, "Bash", {"command": "echo $(whoami)"}) == "allow"


def test_deny_beats_allow() -> None:
    policy = PermissionPolicy.from_rules(allow=["Bash"], deny=["Bash(rm *)"])
    decision, reason = check(policy, "Bash", {"command": "ls && rm -rf build"})
    assert decision == "deny"
    assert "Bash(rm *)" in reason


def test_ask_beats_allow() -> None:
    policy = PermissionPolicy.from_rules(allow=["Bash"], ask=["Bash(git push *)"])
    assert behavior(policy, "Bash", {"command": "git push origin main"}) == "ask"


def test_an_ask_rule_denies_under_dont_ask() -> None:
    policy = PermissionPolicy.from_rules(ask=["Bash(git push *)"], mode="dontAsk")
    assert behavior(policy, "Bash", {"command": "git push"}) == "deny"


def test_allow_rules_do_not_lift_plan_mode() -> None:
    policy = PermissionPolicy.from_rules(allow=["Bash", "Edit"], mode="plan")
    assert behavior(policy, "Bash", {"command": "npm test"}) == "deny"
    assert behavior(policy, "Write", CALLS["write"][1]) == "deny"


def test_dont_ask_allows_what_a_rule_allows() -> None:
    policy = PermissionPolicy.from_rules(allow=["Bash(npm test)"], mode="dontAsk")
    assert behavior(policy, "Bash", {"command": "npm test"}) == "allow"
    assert behavior(policy, "Bash", {"command": "npm publish"}) == "deny"


def test_edit_allow_rule_covers_write() -> None:
    policy = PermissionPolicy.from_rules(allow=["Edit(src/**)"])
    assert behavior(policy, "Write", {"file_path": "src/a.py", "content": ""}) == "allow"
    assert behavior(policy, "Write", {"file_path": "docs/a.md", "content": ""}) == "ask"


def test_read_deny_rule_covers_read_and_search() -> None:
    policy = PermissionPolicy.from_rules(deny=["Read(./secrets/**)"])
    assert behavior(policy, "Read", {"file_path": "secrets/key.pem"}) == "deny"
    assert behavior(policy, "Grep", {"pattern": "x", "path": "secrets"}) == "deny"
    assert behavior(policy, "Read", {"file_path": "src/a.py"}) == "allow"


def test_a_bare_tool_deny_rule_denies_every_use() -> None:
    policy = PermissionPolicy.from_rules(deny=["Bash"], mode="bypassPermissions")
    assert behavior(policy, "Bash", {"command": "ls"}) == "deny"


def test_a_deny_rule_sees_through_a_symlink(workspace: Path) -> None:
    (workspace / "secrets").mkdir()
    (workspace / "alias").symlink_to(workspace / "secrets")
    policy = PermissionPolicy.from_rules(deny=["Read(./secrets/**)"])
    decision, _ = check(policy, "Read", {"file_path": "alias/key"}, workspace)
    assert decision == "deny"


def test_a_deny_rule_sees_the_path_as_written(workspace: Path) -> None:
    (workspace / "real").mkdir()
    (workspace / "secrets").symlink_to(workspace / "real")
    policy = PermissionPolicy.from_rules(deny=["Read(./secrets/**)"])
    decision, _ = check(policy, "Read", {"file_path": "secrets/key"}, workspace)
    assert decision == "deny"


def test_hard_deny_explains_itself() -> None:
    decision, reason = check(
        PermissionPolicy(mode="bypassPermissions"), "Bash", {"command": "sudo ls"}
    )
    assert decision == "deny"
    assert "hard deny list" in reason


@pytest.mark.parametrize("mode", ["default", "acceptEdits", "bypassPermissions"])
def test_protected_directories_always_ask(mode: Mode) -> None:
    policy = PermissionPolicy.from_rules(allow=["Edit"], mode=mode)
    write = {"file_path": ".claude/settings.json", "content": "{}"}
    assert behavior(policy, "Write", write) == "ask"
    assert (
        behavior(
            policy,
            "Edit",
            {**write, "file_path": ".git/config", "old_string": "a", "new_string": "b"},
        )
        == "ask"
    )


def test_claude_commands_are_protected() -> None:
    """Issue 24, finding 5: a command file grants tools to a later run, so writing it asks."""
    policy = PermissionPolicy(mode="acceptEdits")
    assert behavior(policy, "Write", {"file_path": ".claude/commands/x.md", "content": ""}) == "ask"


def test_read_filter_hides_denied_paths(workspace: Path) -> None:
    policy = PermissionPolicy.from_rules(deny=["Read(*.env)"])
    hidden = policy.read_filter(workspace)
    assert hidden(workspace / "deep/prod.env")
    assert not hidden(workspace / "app.py")


# -- properties ----------------------------------------------------------------

BASH_RULES = [
    "Bash",
    "Bash(*)",
    "Bash(npm test *)",
    "Bash(npm run build)",
    "Bash(rm *)",
    "Bash(rm -rf build)",
    "Bash(git:*)",
    "Bash(git push *)",
    "Bash(ls *)",
    "Bash(echo *)",
    "Bash(* --force)",
    "Bash(make)",
]
rule_sets = st.lists(st.sampled_from(BASH_RULES), max_size=4, unique=True)
commands = st.one_of(
    smuggled(st.sampled_from(["rm -rf build", "git push --force", "make", "ls -la"])),
    safe_commands,
)


@settings(max_examples=300, deadline=None)
@given(allow=rule_sets, ask=rule_sets, deny=rule_sets, mode=modes, command=commands)
@example(["Bash"], [], ["Bash(rm *)"], "bypassPermissions", "ls && rm -rf build")
@example(["Bash(git:*)"], ["Bash"], ["Bash(* --force)"], "acceptEdits", "git push --force")
def test_deny_always_beats_allow(
    allow: list[str], ask: list[str], deny: list[str], mode: Mode, command: str
) -> None:
    """Whatever deny rules deny stays denied, whatever allow and ask rules are added."""
    ctx = ToolContext(workspace=WS)
    alone = PermissionPolicy.from_rules(deny=deny, mode=mode)
    full = PermissionPolicy.from_rules(allow=allow, ask=ask, deny=deny, mode=mode)
    decision = alone.check(TOOLS["Bash"], {"command": command}, ctx)
    if decision.behavior == "deny" and decision.rule in deny:
        assert behavior(full, "Bash", {"command": command}) == "deny"


@settings(max_examples=300, deadline=None)
@given(rule=st.sampled_from(BASH_RULES), mode=modes, command=commands)
def test_a_rule_both_allowed_and_denied_never_allows(rule: str, mode: Mode, command: str) -> None:
    policy = PermissionPolicy.from_rules(allow=[rule], deny=[rule], mode=mode)
    if (
        PermissionPolicy.from_rules(allow=[rule])
        .check(TOOLS["Bash"], {"command": command}, ToolContext(workspace=WS))
        .rule
        == rule
    ):
        assert behavior(policy, "Bash", {"command": command}) == "deny"


@settings(max_examples=400, deadline=None)
@given(
    command=smuggled(st.sampled_from(["rm -rf build", "rm x", "/bin/rm -f a b", "\\rm -r dir"])),
    allow=st.lists(st.sampled_from(["Bash", "Bash(npm test *)", "Bash(echo *)", "Bash(*)"])),
    mode=modes,
)
def test_compound_commands_cannot_smuggle_a_denied_part(
    command: str, allow: list[str], mode: Mode
) -> None:
    policy = PermissionPolicy.from_rules(allow=allow, deny=["Bash(rm *)"], mode=mode)
    assert behavior(policy, "Bash", {"command": command}) == "deny", command


@settings(max_examples=400, deadline=None)
@given(
    command=smuggled(hard_denied_commands),
    allow=st.lists(st.sampled_from(["Bash", "Bash(*)", "Bash(rm *)", "Bash(sudo *)"])),
    mode=modes,
)
def test_hard_denied_commands_are_denied_under_every_mode(
    command: str, allow: list[str], mode: Mode
) -> None:
    policy = PermissionPolicy.from_rules(allow=allow, mode=mode)
    decision, reason = check(policy, "Bash", {"command": command})
    assert decision == "deny", command
    assert "hard deny list" in reason


PATH_RULES = [
    "Edit",
    "Edit(src/**)",
    "Edit(*.py)",
    "Write(docs/*.md)",
    "Edit(/src/a.py)",
    "Edit(.env)",
]
FILE_PATHS = ["src/a.py", "docs/x.md", ".env", "deep/.env", "src/../docs/x.md", "./src/b.txt"]


@settings(max_examples=300, deadline=None)
@given(
    allow=st.lists(st.sampled_from(PATH_RULES), max_size=3),
    deny=st.lists(st.sampled_from(PATH_RULES), min_size=1, max_size=3),
    mode=modes,
    tool=st.sampled_from(["Write", "Edit"]),
    file_path=st.sampled_from(FILE_PATHS),
)
def test_deny_beats_allow_for_file_rules(
    allow: list[str], deny: list[str], mode: Mode, tool: str, file_path: str
) -> None:
    input = {"file_path": file_path, "content": "", "old_string": "a", "new_string": "b"}
    if tool == "Write":
        input = {"file_path": file_path, "content": ""}
    else:
        input.pop("content")
    decision = PermissionPolicy.from_rules(deny=deny, mode=mode).check(
        TOOLS[tool], input, ToolContext(workspace=WS)
    )
    if decision.behavior == "deny" and decision.rule in deny:
        full = PermissionPolicy.from_rules(allow=allow, deny=deny, mode=mode)
        assert behavior(full, tool, input) == "deny"


def test_a_run_switches_its_mode_but_never_into_bypass_or_auto_it_did_not_start_in() -> None:
    policy = PermissionPolicy(mode="default")
    policy.switch_mode("acceptEdits")
    assert policy.mode == "acceptEdits"
    policy.switch_mode("plan")
    for mode in ("bypassPermissions", "auto", "nonsense"):
        with pytest.raises(ValueError, match=mode if mode != "nonsense" else "unknown"):
            policy.switch_mode(mode)  # type: ignore[arg-type]
    assert policy.mode == "plan"
    started = PermissionPolicy(mode="bypassPermissions")
    started.switch_mode("default")
    started.switch_mode("bypassPermissions")
    assert started.mode == "bypassPermissions"


@pytest.mark.parametrize(
    ("command", "behavior"),
    [
        ("touch {out}/x", "ask"),  # one folder outside: a person may let it in
        ("touch {out}/x {out}/y", "ask"),  # the same folder twice
        ("touch {out}/x /var/tmp/other/y", "deny"),  # two folders: split the command
        ("touch ~/x", "deny"),  # the home folder itself is never let in
        ("touch {out}/*.txt", "deny"),  # a glob outside names no one folder
    ],
)
def test_a_command_writing_outside_is_a_question_for_a_person(
    ctx: ToolContext, tmp_path: Path, command: str, behavior: str
) -> None:
    out = tmp_path / "outside"
    out.mkdir()
    decision = PermissionPolicy(mode="bypassPermissions").check(
        TOOLS["Bash"], {"command": command.format(out=out)}, ctx
    )
    assert decision.behavior == behavior, decision.reason
    if behavior == "ask":
        assert decision.person_only
        assert decision.call_root == out.resolve()
    assert (
        PermissionPolicy(mode="dontAsk")
        .check(TOOLS["Bash"], {"command": command.format(out=out)}, ctx)
        .behavior
        == "deny"
    )
