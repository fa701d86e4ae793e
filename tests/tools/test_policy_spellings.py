"""Ways to spell ``rm`` that ``deny Bash(rm:*)`` must stop (issues 11 and 24).

Each spelling removes the file ``{v}`` when run by ``bash -c`` in the
workspace, given the files :func:`setup` writes there (the issue measured
57; the first sixteen here are the spellings that got past the deny rule in
``bypassPermissions`` before). Each is decided in every mode here, and run
for real through the CLI in ``test_shell_cli.py``. :data:`THROUGH` are issue
24's: wrappers (``taskset``, ``chrt``, ``prlimit``...) and options carrying a
command (``tar --to-command``, ``ssh -o ProxyCommand``, ``gdb -ex 'shell
...'``); each is run by bash here too, to show it really deletes the file
(where its programs are installed).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tarfile
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

#: Issue 24, finding 7 (and more of the same kind): they ran in bypassPermissions before.
THROUGH = [
    "taskset 1 rm -f {v}",
    "taskset -c 0 rm -f {v}",
    "chrt -o 0 rm -f {v}",
    "chrt --other 0 rm -f {v}",
    "prlimit --nofile=1024 rm -f {v}",
    "prlimit -n1024 rm -f {v}",
    "setpriv --no-new-privs rm -f {v}",
    "setpriv --no-new rm -f {v}",
    "numactl -l rm -f {v}",
    "cgexec -g cpu:/ rm -f {v}",
    "tar --checkpoint=1 --checkpoint-action=exec='rm -f {v}' -cf /dev/null {v}.sh",
    "tar --checkpoint=1 --checkpoint-action exec='rm -f {v}' -cf /dev/null {v}.sh",
    "tar --to-command='rm -f {v}' -xf {v}.tar",
    "tar -xf {v}.tar --to-command 'rm -f {v}'",
    "tar --to-com='rm -f {v}' -xf {v}.tar",
    "tar -I 'rm -f {v}; cat' -cf {v}.out {v}.sh",
    "tar -cI 'rm -f {v}; cat' -f {v}.out {v}.sh",
    "tar cIf 'rm -f {v}; cat' {v}.out {v}.sh",
    "tar --use-compress-program='rm -f {v}; cat' -cf {v}.out {v}.sh",
    "ssh -o ProxyCommand='rm -f {v}' x",
    "ssh -oProxyCommand='rm -f {v}' x",
    "ssh -o 'ProxyCommand rm -f {v}' x",
    "ssh -o proxycommand='rm -f {v}' -o BatchMode=yes x",
    "scp -o ProxyCommand='rm -f {v}' x:f {v}.out",
    "rsync -e 'rm -f {v} --' x:y {v}.out",  # rsync appends its own words: -- makes them files
    "gdb -batch -ex 'shell rm -f {v}'",
    "gdb -batch -ex '!rm -f {v}'",
    "gdb -batch --eval-command='shell rm -f {v}'",
    "gdb -batch -ex run --args rm -f {v}",
    "gdb -batch -x {v}.gdb",
    "zip -T -TT 'rm -f {v}; true' {v}.zip {v}.sh",
    "zip --test --unzip-command 'rm -f {v}; true' {v}.zip {v}.sh",
    "echo | sed 'e rm -f {v}'",
    "echo x | sed 's/x/rm -f {v}/e'",
    "GIT_SSH_COMMAND='rm -f {v}' git ls-remote ssh://x/y",
    "env GIT_SSH_COMMAND='rm -f {v}' git ls-remote ssh://x/y",
    "git ls-remote --upload-pack='rm -f {v}; false' .",
    "env BASH_ENV={v}.sh bash -c true",
    "time -- rm -f {v}",
    "time -p -- rm -f {v}",
]
#: Wrappers that raise privileges: the hard deny list refuses them before any rule.
PRIVILEGED = [
    "sudo rm -f {v}",
    "sudo -u root -- rm -f {v}",
    "doas rm -f {v}",
    "runuser -u root -- rm -f {v}",
    "su -c 'rm -f {v}'",
]
#: ``ssh HOST CMD`` runs CMD on HOST (this machine, for localhost): rules see it.
#: Not run here (no ssh server).
ELSEWHERE = [
    "ssh localhost rm -f {v}",
    "ssh -p 22 localhost 'rm -f {v}'",
    "ssh -o RemoteCommand='rm -f {v}' localhost",
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
    "git -c core.sshCommand='rm -f {v}' ls-remote ssh://x/y",
    "firejail --quiet rm -f {v}",
    "echo $(( $(rm -f {v}; echo 1) + 1 ))",
    *THROUGH,
    *PRIVILEGED,
    *ELSEWHERE,
]


def spelled(spelling: str, victim: str) -> str:
    """The command line of *spelling* removing *victim*."""
    return spelling.replace("{v}", victim)


def setup(workspace: Path, victim: str) -> None:
    """The victim file, and the script, lock, list, archive and gdb command files
    some spellings need."""
    (workspace / victim).write_text("keep me\n")
    (workspace / f"{victim}.sh").write_text(f"rm -f {victim}\n")
    (workspace / f"{victim}.lock").write_text("")
    (workspace / f"{victim}.list").write_text(f"{victim}\n")
    (workspace / f"{victim}.gdb").write_text(f"shell rm -f {victim}\n")
    with tarfile.open(workspace / f"{victim}.tar", "w") as archive:
        archive.add(workspace / f"{victim}.list", arcname=f"{victim}.list")


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
    rule = "hard-deny" if spelling in PRIVILEGED else "Bash(rm:*)"
    assert (decision.behavior, decision.rule) == ("deny", rule), decision.reason


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


# -- each new spelling really deletes the file ----------------------------------------

_NOT_PROGRAMS = frozenset({"echo", "env", "GIT_SSH_COMMAND", "true", "time"})


def _programs(spelling: str) -> set[str]:
    words = spelling.replace("|", " ").split()
    return {w for w in words[:1] if "=" not in w} | {
        w for w in ("taskset", "chrt", "prlimit", "setpriv", "numactl", "cgexec", "tar", "ssh",
                    "scp", "rsync", "gdb", "zip", "sed", "git", "sudo", "doas", "runuser", "su")
        if w in words
    }  # fmt: skip


@pytest.mark.parametrize("spelling", [*THROUGH, *PRIVILEGED])
def test_each_new_spelling_deletes_the_file_when_bash_runs_it(
    spelling: str, tmp_path: Path
) -> None:
    missing = sorted(p for p in _programs(spelling) - _NOT_PROGRAMS if not shutil.which(p))
    if missing:
        pytest.skip(f"not installed here: {', '.join(missing)}")
    if spelling in PRIVILEGED and os.geteuid() != 0:
        pytest.skip("raising privileges needs root here")
    setup(tmp_path, "victim")
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path)}
    subprocess.run(
        ["bash", "-c", spelled(spelling, "victim")],
        cwd=tmp_path, env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=60,
    )  # fmt: skip
    assert not (tmp_path / "victim").exists()


@pytest.mark.parametrize("spelling", THROUGH)
def test_without_a_deny_rule_a_carried_command_is_never_allowed_by_its_carrier_s_rule(
    spelling: str, tmp_path: Path
) -> None:
    """``Bash(tar:*)``, ``Bash(ssh:*)``... do not allow the command they carry."""
    carriers = ["tar", "ssh", "scp", "rsync", "gdb", "zip", "sed", "git", "echo", "env"]
    wrappers = ["taskset", "chrt", "prlimit", "setpriv", "numactl", "cgexec"]
    policy = PermissionPolicy.from_rules(allow=[f"Bash({p}:*)" for p in carriers + wrappers])
    decision = policy.check(
        TOOLS["Bash"], {"command": spelled(spelling, "victim")}, ToolContext(workspace=tmp_path)
    )
    assert decision.behavior == "ask", decision.reason
