"""Issue 24, "Match Claude Code's cells": the calls Claude Code blocks that coterie ran.

Each case is a cell of ``bench/cc_agreement.py`` where Claude Code 2.1.332
asks (so blocks headless) and coterie used to run it, or one where coterie
asked without reason; ``test_cc_agreement.py`` checks the whole recorded
table. What Claude Code runs and coterie keeps asking on purpose (protected
configuration, writes outside the workspace) is not here.
"""

from __future__ import annotations

import subprocess
from typing import TYPE_CHECKING

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from coterie.tools import EditTool, PermissionPolicy, ToolContext, WriteTool
from coterie.tools.permissions import MODES, Mode
from tests.tools.test_shell_words import decide

if TYPE_CHECKING:
    from pathlib import Path

ECHO_LS = ["Bash(echo:*)", "Bash(ls:*)"]


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """A workspace holding a git repository whose configuration is inert."""
    workspace = tmp_path / "ws"
    (workspace / "d").mkdir(parents=True)
    (workspace / "d/x").write_text("a\n")
    (workspace / "f").write_text("a\n")
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    return workspace.resolve()


def asked(behavior: str, mode: str) -> bool:
    return behavior == ("deny" if mode in ("plan", "dontAsk") else "ask")


# -- no longer read-only ------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "printenv HOME",  # the environment holds secrets
        "env",
        "echo ${FOO:-x}",  # a parameter expansion makes any text
        'echo "${HOME}"',
        "echo $(( ${#HOME} + 1 ))",
        "env FOO=1 ls d",  # an assignment for what it runs
        "git -C d status",  # another repository, whose configuration nobody read
        "git --git-dir=d/.git log",
        "git --work-tree d status",
    ],
)
@pytest.mark.parametrize("mode", ["default", "acceptEdits", "plan", "dontAsk"])
def test_not_read_only(ws: Path, command: str, mode: Mode) -> None:
    assert asked(decide(command, ws, mode=mode)[0], mode)


def test_a_parameter_expansion_is_never_allowed_by_a_narrow_rule(ws: Path) -> None:
    assert decide("echo ${FOO:-x}", ws, allow=ECHO_LS) == ("ask", None)
    assert decide("echo ${FOO:-x}", ws, allow=["Bash"]) == ("allow", "Bash")
    assert decide("echo '${FOO:-x}'", ws) == ("allow", None)  # quoted: text


# -- acceptEdits covers plain file commands only ------------------------------------


@pytest.mark.parametrize(
    "command",
    ["(rm f)", "cd d && rm x", "cp -l f g", "cp -r d e", "printf x | tee g", "echo x | tee -a f"],
)
def test_accept_edits_asks_like_claude_code(ws: Path, command: str) -> None:
    assert decide(command, ws, mode="acceptEdits")[0] == "ask"
    assert decide(command, ws, mode="bypassPermissions")[0] == "allow"


@pytest.mark.parametrize(
    "command", ["command rm f", "nice rm f", "nohup rm f", "timeout 5 rm f", "sed -i s/a/b/ f"]
)
def test_accept_edits_runs_like_claude_code(ws: Path, command: str) -> None:
    assert decide(command, ws, mode="acceptEdits") == ("allow", None)
    assert decide(command, ws) == ("ask", None)
    program = "sed" if command.startswith("sed") else "rm"
    denied = decide(command, ws, mode="acceptEdits", deny=[f"Bash({program}:*)"])
    assert denied == ("deny", f"Bash({program}:*)")


# -- what a narrow allow rule covers ------------------------------------------------


@pytest.mark.parametrize(
    "command", ["echo x > g.out", "echo x >> f", "ls d > g.ls", "echo $((40+2)) > g", "ls .."]
)
@pytest.mark.parametrize("mode", ["default", "dontAsk"])
def test_a_narrow_rule_covers_no_redirected_write_nor_a_read_outside(
    ws: Path, command: str, mode: Mode
) -> None:
    assert asked(decide(command, ws, mode=mode, allow=ECHO_LS)[0], mode)
    assert decide(command, ws, mode=mode, allow=["Bash"]) == ("allow", "Bash")


def test_a_redirected_write_in_accept_edits_is_the_mode_s(ws: Path) -> None:
    assert decide("echo x > g.out", ws, mode="acceptEdits", allow=ECHO_LS) == ("allow", None)
    assert decide("ls ..", ws, mode="acceptEdits", allow=ECHO_LS)[0] == "ask"
    assert decide("ls d", ws, allow=ECHO_LS) == ("allow", "Bash(ls:*)")
    assert decide("echo x > /dev/null", ws, allow=ECHO_LS)[0] == "allow"


# -- nothing written to /dev/null -------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "cat f > /dev/null",
        "echo x > /dev/null",
        "echo $(( 1 + 2 )) > /dev/null",
        "ls d 2>/dev/null",
    ],
)
@pytest.mark.parametrize("mode", MODES)
def test_a_redirection_to_dev_null_writes_nothing(ws: Path, command: str, mode: Mode) -> None:
    assert decide(command, ws, mode=mode) == ("allow", None) or mode == "bypassPermissions"


# -- globs after a shell option that widens them ------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "shopt -s dotglob; rm -rf *",
        "shopt -s dotglob && cp f *",
        "shopt -s extglob nocaseglob; rm -rf *",
        "GLOBIGNORE=x; rm -rf *",
        "export GLOBIGNORE=.; rm -rf ./*",
        "shopt -s $OPT; rm -rf *",
    ],
)
@pytest.mark.parametrize("mode", ["acceptEdits", "bypassPermissions"])
def test_a_glob_after_dotglob_may_name_protected_configuration(
    ws: Path, command: str, mode: Mode
) -> None:
    assert decide(command, ws, mode=mode)[0] == "ask"


def test_a_glob_without_such_an_option_is_judged_as_written(ws: Path) -> None:
    assert decide("rm -rf d/*", ws, mode="acceptEdits") == ("allow", None)
    assert decide("shopt -s nullglob; rm -rf d/*", ws, mode="bypassPermissions")[0] == "allow"


# -- the hole: acceptEdits held git to less than the read-only path ----------------


@pytest.mark.parametrize("command", ["git status", "git diff && git status", "cd d && git log"])
@pytest.mark.parametrize("mode", ["default", "acceptEdits"])
def test_git_passes_in_no_mode_where_its_configuration_names_a_program(
    ws: Path, command: str, mode: Mode
) -> None:
    with (ws / ".git/config").open("a") as config:
        config.write('[core]\n\tfsmonitor = "touch pwned; false"\n')
    assert decide(command, ws, mode=mode) == ("ask", None)


def test_git_in_an_inert_repository_passes(ws: Path) -> None:
    assert decide("git status", ws) == ("allow", None)
    assert decide("git status", ws, mode="acceptEdits") == ("allow", None)


# -- Write and Edit of protected configuration: every spelling of the path ----------


@pytest.mark.parametrize("tool", [WriteTool(), EditTool()])
def test_a_write_through_a_link_named_like_configuration_asks(ws: Path, tool: object) -> None:
    """``.claude`` a symbolic link to ``real``: Claude Code reads its settings through
    it, so ``.claude/settings.json`` is configuration though it resolves elsewhere."""
    (ws / "real").mkdir()
    (ws / "real/settings.json").write_text("{}\n")
    (ws / ".claude").symlink_to(ws / "real")
    policy = PermissionPolicy.from_rules(mode="acceptEdits")
    call = {"file_path": ".claude/settings.json", "old_string": "{}", "new_string": "{ }"}
    call["content"] = "{}"
    decision = policy.check(tool, call, ToolContext(workspace=ws))  # type: ignore[arg-type]
    assert (decision.behavior, decision.rule) == ("ask", "protected-path")
    assert f"{ws}/.claude/settings.json is configuration that a later run" in decision.reason


# -- generated ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A workspace with configuration a widened glob could name (``.git``, ``.claude``)."""
    workspace = tmp_path_factory.mktemp("widened") / "ws"
    (workspace / ".claude").mkdir(parents=True)
    (workspace / ".claude/settings.json").write_text("{}\n")
    (workspace / "f").write_text("a\n")
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    return workspace.resolve()


WIDENING = [
    "shopt -s dotglob", "shopt -s extglob", "shopt -s nocaseglob globstar", "shopt -qs dotglob",
    "GLOBIGNORE=f", "export GLOBIGNORE=.", "declare GLOBIGNORE=x", "shopt -s $O",
]  # fmt: skip


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    option=st.sampled_from(WIDENING),
    sep=st.sampled_from(["; ", " && ", "\n", " || "]),
    writer=st.sampled_from(["rm -rf", "touch", "cp f", "mv f", "chmod 600", "echo x >"]),
    glob=st.sampled_from(["*", "./*", "?claude", "[.]*", "*/*", ".[a-z]*", "*(.git)"]),
    mode=st.sampled_from(["acceptEdits", "bypassPermissions"]),
)
def test_no_write_through_a_widened_glob_passes_unasked(
    tree: Path, option: str, sep: str, writer: str, glob: str, mode: Mode
) -> None:
    assert decide(f"{option}{sep}{writer} {glob}", tree, mode=mode)[0] == "ask"


@settings(max_examples=150, deadline=None)
@given(
    head=st.sampled_from(["echo", "cat", "ls", "printf %s", "wc -l"]),
    expansion=st.sampled_from(["${X}", "${X:-f}", "${X/a/b}", "${!X}", "${#X}", "${X:0:1}"]),
    quoted=st.booleans(),
    mode=st.sampled_from(["default", "acceptEdits", "plan"]),
)
def test_a_parameter_expansion_never_passes_as_read_only(
    tree: Path, head: str, expansion: str, quoted: bool, mode: Mode
) -> None:
    word = f'"{expansion}"' if quoted else expansion
    assert decide(f"{head} {word}", tree, mode=mode)[0] != "allow"
    assert decide(f"{head} '{expansion}'", tree, mode=mode)[0] == "allow"
