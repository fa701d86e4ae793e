"""Issue 24 in the shell reader, decision by decision: wrappers, carried commands,
hard links and copies, acceptEdits' plain file commands, arithmetic, ``Write(path)``.

The spellings that delete a file are in ``test_policy_spellings.py``; these
are the reader's other promises (what it reads as unknown, what it leaves
alone, what a hard link writes).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from coterie.tools import PermissionPolicy
from coterie.tools.permissions import MODES
from coterie.tools.permissions.known import usage
from coterie.tools.permissions.shell import analyze, command_views
from coterie.tools.permissions.words import parse_simple
from tests.tools.test_policy import behavior
from tests.tools.test_shell_words import decide

if TYPE_CHECKING:
    from pathlib import Path

    from coterie.tools.permissions import Mode


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    workspace = tmp_path / "ws"
    (workspace / ".git").mkdir(parents=True)
    (workspace / ".git/config").write_text("[core]\n")
    return workspace.resolve()


# -- wrappers -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "runs"),
    [
        ("taskset 1 make", "make"),
        ("taskset -a -c 0-3 make -j4", "make -j4"),
        ("chrt -o 0 make", "make"),
        ("chrt -o make", "make"),  # a newer chrt may leave the priority out
        ("chrt -T 100 -P 200 -D 300 -d 0 make", "make"),
        ("prlimit --nofile=1024 -n1024 make", "make"),
        ("prlimit -o RESOURCE make", "make"),
        ("setpriv --reuid 0 --no-new make", "make"),
        ("numactl --interleave all -l make", "make"),
        ("cgexec -g cpu,memory:/g make", "make"),
        ("runuser -u nobody -- make", "make"),
        ("sudo -u root -E make", "make"),
        ("doas -u root make", "make"),
        ("firejail --net=none --quiet make", "make"),
        ("setarch x86_64 -R make", "make"),
        ("time -p -- make", "make"),
        ("timeout --sig KILL 5 make", "make"),
    ],
)
def test_a_wrapper_is_seen_through(command: str, runs: str) -> None:
    assert command_views(command)[-1] == runs


@pytest.mark.parametrize(
    "command",
    ["taskset --bogus 1 rm x", "setpriv --re 0 rm x", "chrt -Z 0 rm x", "prlimit -q9 -W rm x"],
)
def test_a_strict_wrapper_with_an_option_it_does_not_have_is_an_unknown_command(
    command: str, ws: Path
) -> None:
    """``setpriv --re`` is ambiguous (``--reuid``, ``--regid``, ``--reset-env``)."""
    assert decide(command, ws, deny=["Bash(rm:*)"], allow=["Bash"]) == ("deny", "Bash(rm:*)")
    assert decide(command, ws, allow=[f"Bash({command.split()[0]}:*)"])[0] == "ask"


# -- carried commands ------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "tar -F next-volume.sh -cf a.tar x",
        "tar --info-script=s.sh -cf a.tar x",
        "ssh -F ./ssh_config host",
        "ssh -o Include=./evil host",
        "ssh -I ./pkcs11.so host",
        "gdb -batch -x cmds.gdb ./app",
        "gdb -batch -ex 'python import os' ./app",
        "gdb -batch -ex 'pipe bt | sh' ./app",
        "gdb -batch -ex 'run $(id)' ./app",
        "sed -f script.sed a.txt",
        "sed '1e id' a.txt",
        "LD_PRELOAD=./x.so ls",
        "env TAR_OPTIONS=--to-command=id tar -tf a.tar",
        "export GIT_CONFIG_COUNT=1",
        "git --exec-path=./bin status",
    ],
)
def test_a_command_coterie_cannot_read_is_unknown(command: str, ws: Path) -> None:
    assert decide(command, ws, deny=["Bash(rm:*)"], allow=["Bash"]) == ("deny", "Bash(rm:*)")
    assert decide(command, ws, allow=["Bash"])[0] == "allow"  # the whole tool still allows


@pytest.mark.parametrize(
    "command",
    [
        "tar -czf out.tgz src",
        "tar tzf a.tgz",
        "tar -I zstd -cf a.tzst src",
        "ssh -o BatchMode=yes -o ProxyCommand=none host",
        "ssh -F /dev/null host",
        "gdb -batch -ex run -ex bt ./app",
        "gdb -batch -ex 'set pagination off' -ex 'info registers' -p 1",
        "sed -n 's/a/b/p' a.txt",
        "sed -i.bak -e 's/x/y/g' a.txt",
        "GIT_PAGER=cat git log",
        "zip -r out.zip src",
        "git rebase -i HEAD~2",
    ],
)
def test_ordinary_uses_are_not_unknown(command: str, ws: Path) -> None:
    assert decide(command, ws, deny=["Bash(rm:*)"], allow=["Bash"]) == ("allow", "Bash")


def test_a_plain_carried_program_is_a_command_allow_rules_may_cover(ws: Path) -> None:
    allow = ["Bash(tar:*)", "Bash(zstd:*)"]
    assert decide("tar -I 'zstd -19' -cf a.tzst x", ws, allow=allow) == ("allow", "Bash(tar:*)")
    assert decide("tar -I 'zstd; id' -cf a.tzst x", ws, allow=[*allow, "Bash(id)"])[0] == "ask"
    assert decide("tar -I xz -cf a.txz x", ws, allow=allow)[0] == "ask"


def test_ssh_s_remote_command_is_ruled_on_but_not_judged_as_a_local_path() -> None:
    analysis = analyze("ssh -p 22 host 'rm -rf /tmp/x; echo ok > /etc/motd'")
    assert analysis.remote == ("rm -rf /tmp/x", "echo ok > /etc/motd")
    assert "rm -rf /tmp/x" in analysis.all_commands
    assert "rm -rf /tmp/x" not in analysis.local_commands


def test_a_remote_command_is_not_on_the_hard_deny_list_but_deny_rules_see_it(ws: Path) -> None:
    assert decide("ssh host sudo systemctl restart web", ws, allow=["Bash"]) == ("allow", "Bash")
    assert decide("ssh host 'echo x > /etc/motd'", ws, allow=["Bash"]) == ("allow", "Bash")
    denied = decide("ssh host rm -f x", ws, allow=["Bash"], deny=["Bash(rm:*)"])
    assert denied == ("deny", "Bash(rm:*)")


# -- hard links, renames and copies -----------------------------------------------


@pytest.mark.parametrize(
    ("command", "writes"),
    [
        ("ln a b", ["b", "a"]),
        ("ln -f -- a b", ["b", "a"]),
        ("ln -s a b", ["b"]),
        ("ln --symbolic a b", ["b"]),
        ("ln -t d a b", ["d", "a", "b"]),
        ("link a b", ["a", "b"]),
        ("cp -l a b", ["b", "a"]),
        ("cp -al a b", ["b", "a"]),
        ("cp --link a b", ["b", "a"]),
        ("cp a b", ["b"]),
        ("mv a b", ["a", "b"]),
        ("rename .txt .md a.txt", [".txt", ".md", "a.txt"]),
        ("rsync -t a b", ["b"]),
        ("rsync -avt a b", ["b"]),
    ],
)
def test_what_a_link_a_rename_or_a_copy_writes(command: str, writes: list[str]) -> None:
    found = usage(parse_simple(command).words)
    assert [w.value for w in found.writes] == writes


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    "command",
    ["ln .git/config gc", "link .git/config gc", "cp -l .git/config gc", "mv .git/config gc"],
)
def test_linking_or_moving_protected_configuration_asks_in_every_mode(
    command: str, mode: Mode, ws: Path
) -> None:
    expected = "deny" if mode in ("plan", "dontAsk") else "ask"
    assert decide(command, ws, mode=mode, allow=["Bash"])[0] == expected


def test_a_hard_link_to_a_start_up_file_is_refused(ws: Path) -> None:
    assert decide("ln ~/.bashrc b", ws, mode="bypassPermissions")[0] == "deny"


# -- acceptEdits' plain file commands -----------------------------------------------


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("rm x", "allow"),
        ("\\rm x", "allow"),
        ("FOO=1 rm x", "ask"),
        ("/bin/rm x", "ask"),
        ("nice rm x", "allow"),
        ("nohup rm x", "allow"),
        ("command rm x", "allow"),
        ("timeout 5 rm x", "allow"),
        ("nice -n 5 rm x", "ask"),
        ("timeout -s KILL 5 rm x", "ask"),
        ("command -p rm x", "ask"),
        ("env rm x", "ask"),
        ("env FOO=1 rm x", "ask"),
        ("taskset 1 rm x", "ask"),
        ("(rm x)", "ask"),
        ("cd d && rm x", "ask"),
        ("mkdir -p d && touch d/f", "allow"),
        ("A=1 touch f", "ask"),
        ("cp a b", "allow"),
        ("cp -r a b", "ask"),
        ("cp -l a b", "ask"),
        ("printf x | tee f", "ask"),
        ("echo x | tee -a f", "ask"),
    ],
)
def test_accept_edits_covers_only_plain_file_commands(
    command: str, expected: str, ws: Path
) -> None:
    assert decide(command, ws, mode="acceptEdits")[0] == expected
    assert decide(command, ws, mode="acceptEdits", allow=["Bash"], deny=["Bash(rm:*)"])[0] == (
        "deny" if "rm" in command else "allow"
    )


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("sed -i s/a/b/ f", "allow"),
        ("sed -i s/a/b/g f g", "allow"),
        ("sed -i 's|a/|b|I' f", "allow"),
        ("sed -i 's/a/b/e' f", "ask"),  # runs the pattern space as a command
        ("sed -i 's/a/b/w out' f", "ask"),  # writes another file
        ("sed -i.bak s/a/b/ f", "ask"),
        ("sed -i 1d f", "ask"),
        ("sed -i 's/a/b/;e id' f", "ask"),
        ("sed -i -e s/a/b/ f", "ask"),
        ("sed -i s/a/b/ .git/config", "ask"),
    ],
)
def test_accept_edits_covers_sed_in_place_with_one_plain_substitution(
    command: str, expected: str, ws: Path
) -> None:
    assert decide(command, ws, mode="acceptEdits")[0] == expected
    assert decide(command, ws, mode="acceptEdits", deny=["Bash(sed:*)"])[0] == "deny"


# -- arithmetic ---------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["default", "acceptEdits", "plan"])
def test_arithmetic_is_no_substitution(mode: Mode, ws: Path) -> None:
    assert decide("echo $((40+2))", ws, mode=mode) == ("allow", None)
    assert decide("echo $(( $(id -u) + 1 ))", ws, mode=mode)[0] != "allow"
    assert decide("echo $((1 #$(rm -f x)))", ws, allow=["Bash"], deny=["Bash(rm:*)"])[0] == "deny"


def test_a_subshell_in_a_substitution_is_not_arithmetic() -> None:
    analysis = analyze("echo $((id); rm -f x)")
    assert "command substitution $(...)" in analysis.risks
    assert "rm -f x" in analysis.all_commands


# -- Write(path) allow rules ----------------------------------------------------------


def test_a_write_path_allow_rule_allows_nothing() -> None:
    write = {"file_path": "docs/a.md", "content": ""}
    policy = PermissionPolicy.from_rules(allow=["Write(docs/**)"])
    assert behavior(policy, "Write", write) == "ask"
    assert policy.notices == (
        "Write(path) allow rules are ignored; use Edit(path): Write(docs/**)",
    )
    assert behavior(PermissionPolicy.from_rules(allow=["Edit(docs/**)"]), "Write", write) == "allow"
    assert behavior(PermissionPolicy.from_rules(allow=["Write"]), "Write", write) == "allow"
    assert PermissionPolicy.from_rules(allow=["Write", "Edit(x)"]).notices == ()


def test_write_path_deny_and_ask_rules_still_apply() -> None:
    write = {"file_path": "docs/a.md", "content": ""}
    both = {"allow": ["Edit(docs/**)"], "mode": "bypassPermissions"}
    assert behavior(
        PermissionPolicy.from_rules(deny=["Write(docs/**)"], **both), "Write", write
    ) == ("deny")
    assert behavior(
        PermissionPolicy.from_rules(ask=["Write(docs/**)"], **both), "Write", write
    ) == ("ask")
