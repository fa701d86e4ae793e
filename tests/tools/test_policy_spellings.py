"""Sixty-seven ways to spell ``rm`` that ``deny Bash(rm:*)`` must stop (issue 11, finding 6).

Each spelling removes the file ``{v}`` when run by ``bash -c`` in the
workspace, given the files :func:`setup` writes there (the issue measured
57; the first sixteen here are the spellings that got past the deny rule in
``bypassPermissions`` before). Each is decided in every mode here, and run
for real through the CLI in ``test_shell_cli.py``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from coterie.tools import PermissionPolicy, ToolContext, default_registry
from coterie.tools.permissions import MODES

if TYPE_CHECKING:
    from pathlib import Path

    from coterie.tools.permissions import Mode

#: The spellings that ran in bypassPermissions before issue 11.
GOT_PAST = [
    "env -S 'rm -f {v}'",
    "bash <<< 'rm -f {v}'",
    "echo 'rm -f {v}' | bash",
    "shopt -s expand_aliases\nalias zap='rm -f'\nzap {v}",
    "X=rm; $X -f {v}",
    "a=r b=m; $a$b -f {v}",
    "{rm,-f} {v}",
    "/usr/bin/r[m] -f {v}",
    "$'\\x72m' -f {v}",
    "$(echo rm) -f {v}",
    "flock {v}.lock rm -f {v}",
    "script -qc 'rm -f {v}' /dev/null",
    "git -c alias.zap='!rm -f {v}' zap",
    "source {v}.sh",
    "`echo rm` -f {v}",
    ". ./{v}.sh",
]

SPELLINGS = [
    *GOT_PAST,
    "rm -f {v}",
    "rm -f -- {v}",
    "/bin/rm -f {v}",
    "/usr/bin/rm -f {v}",
    "\\rm -f {v}",
    '"rm" -f {v}',
    "'rm' -f {v}",
    "r\\m -f {v}",
    'r""m -f {v}',
    "command rm -f {v}",
    "exec rm -f {v}",
    "env rm -f {v}",
    "env -i rm -f {v}",
    "env FOO=1 rm -f {v}",
    "FOO=1 rm -f {v}",
    "nohup rm -f {v} >/dev/null 2>&1",
    "nice -n 5 rm -f {v}",
    "timeout 5 rm -f {v}",
    "echo {v} | xargs rm -f",
    "find . -name {v} -exec rm -f {} \\;",
    "bash -c 'rm -f {v}'",
    'sh -c "rm -f {v}"',
    "eval 'rm -f {v}'",
    "eval rm -f {v}",
    "echo $(rm -f {v})",
    "echo `rm -f {v}`",
    "true && rm -f {v}",
    "false || rm -f {v}",
    "true; rm -f {v}",
    "(rm -f {v})",
    "{ rm -f {v}; }",
    "if true; then rm -f {v}; fi",
    "true | rm -f {v}",
    "cat <(rm -f {v})",
    "bash {v}.sh",
    "sh < {v}.sh",
    "trap 'rm -f {v}' EXIT",
    "stdbuf -o0 rm -f {v}",
    "setsid rm -f {v}",
    "time rm -f {v}",
    "! rm -f {v}",
    "${X:-rm} -f {v}",
    "rm${IFS}-f${IFS}{v}",
    "printf 'rm -f {v}' | sh",
    "sh -c 'eval \"rm -f {v}\"'",
    '"$(echo rm)" -f {v}',
    "r\\\nm -f {v}",
    "for c in rm; do $c -f {v}; done",
    "BASH_ENV={v}.sh bash -c true",
    "xargs -a {v}.list rm -f",
    "f() { rm -f {v}; }; f",
]


def spelled(spelling: str, victim: str) -> str:
    """The command line of *spelling* removing *victim*."""
    return spelling.replace("{v}", victim)


def setup(workspace: Path, victim: str) -> None:
    """The victim file, and the script, lock and list files some spellings need."""
    (workspace / victim).write_text("keep me\n")
    (workspace / f"{victim}.sh").write_text(f"rm -f {victim}\n")
    (workspace / f"{victim}.lock").write_text("")
    (workspace / f"{victim}.list").write_text(f"{victim}\n")


# -- the policy's decision on each, in every mode --------------------------------

TOOLS = {t.name: t for t in default_registry()}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("spelling", SPELLINGS)
def test_a_deny_rule_stops_every_spelling_in_every_mode(
    spelling: str, mode: Mode, tmp_path: Path
) -> None:
    policy = PermissionPolicy.from_rules(mode=mode, allow=["Bash"], deny=["Bash(rm:*)"])
    decision = policy.check(
        TOOLS["Bash"], {"command": spelled(spelling, "victim")}, ToolContext(workspace=tmp_path)
    )
    assert (decision.behavior, decision.rule) == ("deny", "Bash(rm:*)"), decision.reason


@pytest.mark.parametrize("spelling", GOT_PAST)
def test_without_a_deny_rule_a_dynamic_spelling_is_never_allowed_by_a_narrow_rule(
    spelling: str, tmp_path: Path
) -> None:
    """``Bash(echo:*)``, ``Bash(git:*)``... match no command coterie cannot read."""
    narrow = ["Bash(echo:*)", "Bash(git:*)", "Bash(env:*)", "Bash(flock:*)", "Bash(script:*)"]
    policy = PermissionPolicy.from_rules(allow=[*narrow, "Bash(source:*)", "Bash(true)"])
    decision = policy.check(
        TOOLS["Bash"], {"command": spelled(spelling, "victim")}, ToolContext(workspace=tmp_path)
    )
    assert decision.behavior == "ask", decision.reason
