"""The shell reader's words, the read-only table, and what the policy makes of them (issue 11)."""

from __future__ import annotations

import subprocess
from typing import TYPE_CHECKING, Any

import pytest

from coterie.tools import PermissionPolicy, ToolContext, default_registry
from coterie.tools.permissions import MODES, Mode
from coterie.tools.permissions.known import usage
from coterie.tools.permissions.rules import excluded_command
from coterie.tools.permissions.words import parse_simple

if TYPE_CHECKING:
    from pathlib import Path

TOOLS = {t.name: t for t in default_registry()}


def decide(
    command: str,
    ws: Path,
    *,
    mode: Mode = "default",
    protected: tuple[Path, ...] = (),
    extra: tuple[Path, ...] = (),
    **fields: Any,
) -> tuple[str, str | None]:
    rules = {k: fields.pop(k) for k in ("allow", "ask", "deny") if k in fields}
    policy = PermissionPolicy.from_rules(mode=mode, **rules)
    for key, value in fields.items():
        setattr(policy, key, value)
    ctx = ToolContext(workspace=ws, protected_paths=protected, extra_dirs=list(extra))
    decision = policy.check(TOOLS["Bash"], {"command": command}, ctx)
    return decision.behavior, decision.rule


# -- words ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "literal"),
    [
        ("rm", True),
        ('"rm"', True),
        ("r\\m", True),
        ("r''m", True),
        ("[", True),
        ("{}", True),
        ("$X", False),
        ("${X}", False),
        ("a$b", False),
        ("$(echo rm)", False),
        ("`echo rm`", False),
        ("{rm,v}", False),
        ("{a..c}", False),
        ("r[m]", False),
        ("r?", False),
        ("*", False),
        ("$'\\x72m'", False),
        ('$"rm"', False),
        ('"$X"', False),
        ("'$X'", True),
    ],
)
def test_a_command_word_is_literal_only_when_nothing_expands_it(text: str, literal: bool) -> None:
    assert parse_simple(f"{text} x").words[0].literal is literal


@pytest.mark.parametrize(
    ("text", "writes", "reads"),
    [
        ("echo x > f", ["f"], []),
        ("echo x>>f", ["f"], []),
        ("cmd 2> err &> all", ["err", "all"], []),
        ("cmd >| f", ["f"], []),
        ("cmd 2>&1 >&3", [], []),
        ("cmd >&out", ["out"], []),
        ("exec 3<>f", ["f"], ["f"]),
        ("cat < in", [], ["in"]),
        ("cat <<< 'text'", [], []),
        ("cmd > >(tee log)", [], []),
        ("echo 'a > b'", [], []),
    ],
)
def test_redirections(text: str, writes: list[str], reads: list[str]) -> None:
    redirects = parse_simple(text).redirects
    assert [r.target.value for r in redirects if r.writes and r.target] == writes
    assert [r.target.value for r in redirects if r.reads and r.target] == reads


def test_leading_assignments_are_not_the_command() -> None:
    simple = parse_simple("FOO=1 BAR=$(id) ls -la")
    assert [w.value for w in simple.assignments] == ["FOO=1", "BAR=$(id)"]
    assert [w.value for w in simple.words] == ["ls", "-la"]


# -- the read-only table ---------------------------------------------------------


def kind(command: str) -> str:
    return usage(parse_simple(command).words).kind


@pytest.mark.parametrize(
    "command",
    [
        "ls -la src", "cat a b", "head -n 5 f", "tail -20 f", "wc -l f", "grep -rn x src",
        "rg -n pattern", "find . -name '*.py' -type f", "sed -n 1,5p f", "sed s/a/b/g f",
        "sort -k2 f", "uniq f", "diff a b", "stat f", "file f", "du -sh .", "jq .a f",
        "echo hi", "printf '%s' x", "pwd", "which git", "date +%F", "cd src", "tree -L 2",
        "git status", "git diff HEAD~1", "git log --oneline -5", "git show HEAD",
        "git branch", "git branch -a", "git stash list", "git config --get user.name",
        "git remote -v", "git tag", "git rev-parse HEAD", "xxd f", "git log -C",
    ],
)  # fmt: skip
def test_curated_read_only_commands(command: str) -> None:
    assert kind(command) == "read-only"


@pytest.mark.parametrize(
    "command",
    [
        "find . -exec rm {} ;", "find . -delete", "find . -fprint out", "find . -execdir x ;",
        "find . -ok rm {} ;", "sed -i s/a/b/ f", "sed -ni p f", "sed --in-place s/a/b/ f",
        "sed 'w out' f", "sed 's/a/b/e' f", "sed -e 1e f", "sort -o out f", "sort --output=o f",
        "sort --compress-program=sh f", "uniq in out", "rg --pre cat x", "tree -o out",
        "file -C -m magic", "xxd -r dump bin", "date -s 2020-01-01", "date 0101", "hostname x",
        "git commit -m x", "git push", "git checkout main", "git branch new", "git branch -D x",
        "git tag v1", "git stash", "git config user.name x", "git -c core.pager=sh log",
        "git diff --output=f", "git diff --ext-diff", "git grep -O x", "git -p log",
        "git remote add o url", "git reflog expire --all", "git worktree add x",
        "./ls", "/tmp/cat f", "env FOO=1", "awk '{print}' f", "python3 -V",
        "printenv HOME", "printenv", "env", "git -C sub status", "git --git-dir=x log",
        "git --work-tree x status", "git -C=sub status", "git --namespace n -C sub status",
    ],
)  # fmt: skip
def test_writing_or_program_running_forms_are_not_read_only(command: str) -> None:
    assert kind(command) != "read-only"


@pytest.mark.parametrize(
    ("command", "writes"),
    [
        ("cp a b", ["b"]),
        ("cp -t dir a b", ["dir"]),
        ("mv a b", ["a", "b"]),
        ("rm -rf a b", ["a", "b"]),
        ("touch -d now f", ["f"]),
        ("mkdir -m 700 -p d", ["d"]),
        ("ln -s target link", ["link"]),
        ("tee -a f g", ["f", "g"]),
        ("dd if=a of=b", ["b"]),
        ("sort -o out in", ["out"]),
        ("curl -o f https://x", ["f"]),
        ("wget -O f https://x", ["f"]),
        ("chmod 600 f", ["f"]),
        ("sed -i s/a/b/ f g", ["f", "g"]),
        ("tar -C dir -xf a.tar", ["dir", "."]),
    ],
)
def test_write_like_arguments(command: str, writes: list[str]) -> None:
    assert [w.value for w in usage(parse_simple(command).words).writes] == writes


# -- what the policy makes of them -------------------------------------------------


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    workspace = tmp_path / "ws"
    (workspace / "src").mkdir(parents=True)
    return workspace.resolve()


@pytest.mark.parametrize("mode", MODES)
def test_read_only_commands_pass_in_every_mode(ws: Path, mode: Mode) -> None:
    assert decide("ls -la src && cat src/a.py | grep -n def", ws, mode=mode)[0] == "allow"


@pytest.mark.parametrize(
    "command",
    ["cat /etc/passwd", "ls ..", "cat ~/.ssh/id_rsa", "cd .. && ls", "cat $F", "ls; X=1"],
)
def test_a_read_only_command_leaving_the_workspace_asks(ws: Path, command: str) -> None:
    assert decide(command, ws) == ("ask", None)


def test_git_read_commands_pass_only_where_the_repository_names_no_program(ws: Path) -> None:
    """A checkout's .git/config runs programs (fsmonitor, textconv) on git status: the
    model's read-only git passes unasked only over a configuration of inert keys."""
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    assert decide("git status", ws) == ("allow", None)
    subprocess.run(["git", "-C", str(ws), "config", "core.fsmonitor", "touch PWNED"], check=True)
    assert decide("git status", ws) == ("ask", None)
    assert not (ws / "PWNED").exists()


@pytest.mark.parametrize(
    "command",
    ["mkdir -p d/e", "touch f", "rm -rf src", "rmdir d", "mv src/a b", "cp src dst",
     "echo x > notes.txt", "cat a > b", "mkdir d && touch d/f", "sed -i s/x/y/ f"],
)  # fmt: skip
def test_accept_edits_covers_file_commands_in_the_workspace(ws: Path, command: str) -> None:
    assert decide(command, ws) == ("ask", None)
    assert decide(command, ws, mode="acceptEdits") == ("allow", None)


def test_accept_edits_covers_additional_directories(ws: Path, tmp_path: Path) -> None:
    extra = tmp_path / "extra"
    extra.mkdir()
    assert decide(f"touch {extra}/f", ws, mode="acceptEdits", extra=(extra,)) == ("allow", None)


@pytest.mark.parametrize("command", ["rm ../x", "touch /tmp/f", "cp a ~/b", "mv a $DEST"])
def test_accept_edits_does_not_cover_file_commands_outside(ws: Path, command: str) -> None:
    assert decide(command, ws, mode="acceptEdits")[0] != "allow"


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("command", ["echo x >> ~/.bashrc", "cp a ~/.ssh/authorized_keys"])
def test_writes_to_protected_places_are_denied_in_every_mode(
    ws: Path, mode: Mode, command: str
) -> None:
    assert decide(command, ws, mode=mode, allow=["Bash"])[0] == "deny"


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    "command",
    ["echo x > ../f", "touch /etc/x", "cd /tmp && echo x > f", "echo x > link/../../f"],
)
def test_writes_outside_the_workspace_are_a_persons_question_in_every_mode(
    ws: Path, mode: Mode, command: str
) -> None:
    """Never allowed by a rule or a mode (issue 25): a person may let one command write
    in one folder outside; denied where nobody is asked, and by plan mode's ceiling."""
    expected = "deny" if mode in ("dontAsk", "plan") else "ask"
    assert decide(command, ws, mode=mode, allow=["Bash"]) == (
        expected, "plan-mode" if mode == "plan" else "outside-workspace"
    )  # fmt: skip


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    "command",
    ["echo x >> .git/config", "echo {} > .claude/settings.local.json", "rm -rf .git",
     "cp evil .git/hooks/pre-commit", "rm -rf .c*"],
)  # fmt: skip
def test_git_and_claude_writes_ask_in_every_mode(ws: Path, mode: Mode, command: str) -> None:
    expected = "deny" if mode in ("dontAsk", "plan") else "ask"
    assert decide(command, ws, mode=mode, allow=["Bash"])[0] == expected


def test_claude_commands_are_protected(ws: Path) -> None:
    """Issue 24, finding 5: a command file grants tools to a later run, so writing it asks."""
    assert decide("echo x > .claude/commands/c.md", ws, mode="acceptEdits")[0] == "ask"


@pytest.mark.parametrize("mode", MODES)
def test_the_run_state_is_refused_to_every_writer(ws: Path, mode: Mode) -> None:
    """Finding 1: even when the run's state lies inside the workspace."""
    runs = ws / ".coterie/runs"
    runs.mkdir(parents=True)
    for command in (
        "echo {} > .coterie/runs/r1/config.json",
        "rm -rf .coterie",
        "cp x .coterie/runs/",
    ):
        assert decide(command, ws, mode=mode, allow=["Bash"], protected=(runs,)) == (
            "deny",
            "protected-path",
        ), command
    write = TOOLS["Write"]
    policy = PermissionPolicy(mode=mode)
    ctx = ToolContext(workspace=ws, protected_paths=(runs,))
    decision = policy.check(
        write, {"file_path": ".coterie/runs/r1/config.json", "content": "{}"}, ctx
    )
    assert (decision.behavior, decision.rule) == ("deny", "protected-path")


def test_a_write_whose_target_cannot_be_told_asks_even_in_bypass(ws: Path) -> None:
    assert decide('echo x > "$OUT"', ws, mode="bypassPermissions") == ("ask", "unknown-path")


def test_a_glob_write_inside_the_workspace_is_judged_by_its_directory(ws: Path) -> None:
    assert decide("rm -f src/*.pyc", ws, mode="acceptEdits") == ("allow", None)
    assert decide("rm -f ../*.pyc", ws, mode="bypassPermissions")[0] == "deny"


def test_edit_rules_cover_bash_writes(ws: Path) -> None:
    assert decide(
        "echo x > locked/f", ws, mode="bypassPermissions", deny=["Edit(./locked/**)"]
    ) == (
        "deny",
        "Edit(./locked/**)",
    )
    assert decide("echo x > src/f", ws, mode="acceptEdits", ask=["Edit(./src/**)"]) == (
        "ask",
        "Edit(./src/**)",
    )


@pytest.mark.parametrize(
    "command",
    ["cat secrets/k", "echo $(cat secrets/k) > o", "head -1 < secrets/k", "cp secrets/k o",
     "python3 secrets/k", "grep -r x .", "rg x", "cat */k", "tar czf o.tgz secrets",
     "echo x > secrets/planted", "diff <(cat secrets/k) a"],
)  # fmt: skip
def test_read_deny_rules_cover_bash_reads_and_writes(ws: Path, command: str) -> None:
    """Finding 5, doing better than Claude Code for the substitution."""
    behavior, rule = decide(command, ws, mode="bypassPermissions", deny=["Read(./secrets/**)"])
    assert (behavior, rule) == ("deny", "Read(./secrets/**)"), command


def test_read_deny_rules_leave_other_reads_alone(ws: Path) -> None:
    assert decide("cat src/a.py *.md", ws, deny=["Read(./secrets/**)"]) == ("allow", None)


def test_sandbox_auto_allow_allows_what_no_rule_stops(ws: Path) -> None:
    assert decide("npm test", ws, sandbox_auto_allow=True) == ("allow", "sandbox")
    assert decide("npm test", ws, sandbox_auto_allow=True, sandbox_excluded=("npm",)) == (
        "ask",
        None,
    )
    assert decide("git push", ws, sandbox_auto_allow=True, ask=["Bash(git push)"])[0] == "ask"
    assert decide("echo > .git/x", ws, sandbox_auto_allow=True)[0] == "ask"
    assert decide("rm -rf x", ws, sandbox_auto_allow=True, deny=["Bash(rm:*)"])[0] == "deny"
    assert decide("npm test", ws, mode="plan", sandbox_auto_allow=True)[0] == "deny"


def test_a_command_out_of_the_sandbox_is_never_allowed_for_being_sandboxed(ws: Path) -> None:
    """``dangerouslyDisableSandbox`` runs the command outside, so auto-allow does not
    cover it: it is asked (as Claude Code asks), unless the settings keep it inside."""
    policy = PermissionPolicy.from_rules()
    policy.sandbox_auto_allow = True
    ctx = ToolContext(workspace=ws)
    out = {"command": "npm test", "dangerouslyDisableSandbox": True}
    assert policy.check(TOOLS["Bash"], out, ctx).behavior == "ask"
    assert policy.check(TOOLS["Bash"], {**out, "dangerouslyDisableSandbox": False}, ctx).rule == (
        "sandbox"
    )
    policy.sandbox_escapable = False  # allowUnsandboxedCommands: false ignores the flag
    assert policy.check(TOOLS["Bash"], out, ctx).rule == "sandbox"


@pytest.mark.parametrize(
    ("command", "excluded"),
    [
        ("docker ps", True),
        ("ls && docker run x", True),
        ("env FOO=1 docker ps", True),
        ("git push origin", True),
        ("git status", False),
        ("dockerd", False),
    ],
)
def test_excluded_commands(command: str, excluded: bool) -> None:
    assert excluded_command(command, ["docker", "git push:*"]) is excluded


def test_wrappers_do_not_widen_an_allow_rule(ws: Path) -> None:
    """``Bash(timeout:*)`` does not allow the command timeout runs."""
    assert decide("timeout 5 rm -rf src", ws, allow=["Bash(timeout:*)"]) == ("ask", None)
    allow = ["Bash(timeout:*)", "Bash(npm test)"]
    assert decide("timeout 5 npm test", ws, allow=allow) == ("allow", "Bash(timeout:*)")


def test_writing_a_file_from_a_quoted_here_document(ws: Path) -> None:
    command = "cat > notes.md <<'EOF'\n$X rm -rf / > /etc/passwd\nEOF"
    assert decide(command, ws, mode="acceptEdits", deny=["Bash(rm:*)"]) == ("allow", None)
    outside = decide(command.replace("notes.md", "../notes.md"), ws, mode="acceptEdits")
    assert outside == ("ask", "outside-workspace")  # only a person lets it out


@pytest.mark.parametrize(
    "command",
    ["echo ../x | xargs rm", "find . | xargs touch", "env -C /etc touch x", "chroot /x touch y",
     "ln -s ~/.bashrc l; echo x >> l", "cp -P link mine && echo x > mine/f",
     "tar xf a.tar && echo x > d/f"],
)  # fmt: skip
def test_writes_coterie_cannot_see_are_never_allowed_by_accept_edits(
    ws: Path, command: str
) -> None:
    """Arguments from the input, another directory, a link made on the way: unknown writes."""
    assert decide(command, ws, mode="acceptEdits")[0] == "ask"
    allow = ["Bash(echo:*)", "Bash(ln:*)", "Bash(cp:*)", "Bash(tar:*)", "Bash(xargs:*)"]
    assert decide(command, ws, allow=[*allow, "Bash(rm:*)", "Bash(touch:*)"])[0] == "ask"
