"""Properties of the shell reader for issue 24: wrappers, carried commands, arithmetic.

- Any chain of wrappers, each with options drawn from its own declaration
  (:data:`~coterie.tools.permissions.wrappers.WRAPPERS`), in any of getopt's
  spellings (separate, attached, bundled, ``--long=value``), still shows a
  deny rule the ``rm`` it runs; an option a strict wrapper does not know
  makes the command unknown, refused when a Bash deny rule exists.
- A command carried by an option (``tar``, ``ssh``, ``rsync``, ``gdb``, ``zip``)
  in any spelling is seen by the deny rule.
- ``$((...))`` arithmetic is no substitution unless it holds one.
"""

from __future__ import annotations

import shlex
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from coterie.tools import PermissionPolicy, ToolContext, default_registry
from coterie.tools.permissions import MODES
from coterie.tools.permissions.shell import analyze, command_views
from coterie.tools.permissions.wrappers import WRAPPERS, Wrapper

TOOLS = {t.name: t for t in default_registry()}
WS = Path("/tmp/coterie-hypothesis-ws")
STRICT = sorted(name for name, spec in WRAPPERS.items() if spec.flags is not None)


def _denied(command: str, mode: str = "bypassPermissions") -> bool:
    policy = PermissionPolicy.from_rules(mode=mode, allow=["Bash"], deny=["Bash(rm:*)"])  # type: ignore[arg-type]
    return (
        policy.check(TOOLS["Bash"], {"command": command}, ToolContext(workspace=WS)).behavior
        == "deny"
    )


@st.composite
def option(draw: st.DrawFn, spec: Wrapper) -> list[str]:
    """One option of *spec*, spelled as getopt accepts it."""
    choices = sorted(spec.valued | spec.optional | (spec.flags or frozenset()) - {"-"})
    if not choices:
        return []
    name = draw(st.sampled_from(choices))
    value = draw(st.sampled_from(["0", "1", "x", "cpu:/"]))
    if name in spec.valued:
        if name.startswith("--"):
            return draw(st.sampled_from([[f"{name}={value}"], [name, value]]))
        return draw(st.sampled_from([[name + value], [name, value]]))
    if name in spec.optional:
        return [f"{name}={value}" if name.startswith("--") else name + value]
    if name.startswith("--") and draw(st.booleans()):
        # getopt takes any unambiguous abbreviation.
        known = spec.known()
        for cut in range(len(name) - 1, 3, -1):
            if [k for k in known if k.startswith(name[:cut])] == [name]:
                return [name[:cut]]
    return [name]


@st.composite
def wrapped(draw: st.DrawFn) -> str:
    words: list[str] = []
    for name in draw(st.lists(st.sampled_from(sorted(WRAPPERS)), min_size=1, max_size=3)):
        spec = WRAPPERS[name]
        words.append(name)
        for _ in range(draw(st.integers(0, 3))):
            words += draw(option(spec))
        if draw(st.booleans()):
            words.append("--")  # the end of the options, before any operand
        if spec.operands:
            # chrt's priority is a decimal number; taskset's mask is hexadecimal.
            words.append(draw(st.sampled_from(["1", "0"] if spec.numeric else ["1", "0x3", "f"])))
    return shlex.join([*words, "rm", "-f", "victim"])


@settings(max_examples=300, deadline=None)
@given(command=wrapped())
def test_a_deny_rule_sees_rm_through_any_chain_of_wrappers(command: str) -> None:
    assert _denied(command), command


@settings(max_examples=100, deadline=None)
@given(name=st.sampled_from(STRICT), bogus=st.sampled_from(["--frobnicate", "-Z9", "--x-y"]))
def test_an_option_a_strict_wrapper_does_not_know_hides_nothing(name: str, bogus: str) -> None:
    if bogus in WRAPPERS[name].known():
        return
    command = f"{name} {bogus} 1 rm -f victim"
    assert _denied(command), command
    assert command_views(command)[-1] != "rm -f victim"  # denied as unknown, not as rm


CARRIED = "rm -f victim"


@st.composite
def carrying(draw: st.DrawFn) -> str:
    quoted = shlex.quote(CARRIED)
    return draw(
        st.sampled_from(
            [
                f"tar --to-command={quoted} -xf a.tar",
                f"tar -xf a.tar --to-command {quoted}",
                f"tar -I {quoted} -cf a.tar x",
                f"tar -cI {quoted} -f a.tar x",
                f"tar -cvI{quoted} -f a.tar x",
                f"tar cIf {quoted} a.tar x",
                f"tar --use-compress={quoted} -cf a.tar x",
                f"tar --checkpoint-action=exec={quoted} -cf a.tar x",
                f"tar --checkpoint --to-command={quoted} -xf a.tar",
                f"tar --rsh-command={quoted} -cf h:a.tar x",
                f"ssh -o ProxyCommand={quoted} h",
                f"ssh -oProxyCommand={quoted} h",
                f"ssh -v -o {shlex.quote('ProxyCommand ' + CARRIED)} h",
                f"ssh -o KnownHostsCommand={quoted} h",
                f"ssh h -o LocalCommand={quoted}",
                f"ssh -p 22 h {quoted}",
                f"scp -o ProxyCommand={quoted} h:f .",
                f"rsync -e {quoted} h:a b",
                f"rsync --rsh={quoted} h:a b",
                f"gdb -batch -ex {shlex.quote('shell ' + CARRIED)}",
                f"gdb --batch --ex={shlex.quote('!' + CARRIED)}",
                f"gdb -batch -ex run --args {CARRIED}",
                f"zip -T -TT {quoted} a.zip x",
                f"zip -T --unzip-command={quoted} a.zip x",
                f"git rebase -x {quoted} HEAD~1",
                f"git rebase --exec={quoted} HEAD~1",
                f"git bisect run {CARRIED}",
                f"git submodule foreach {quoted}",
                f"git fetch --upload-pack={quoted} .",
                f"su -c {quoted}",
                f"GIT_SSH_COMMAND={quoted} git fetch",
                f"export GIT_SSH_COMMAND={quoted}",
            ]
        )
    )


@settings(max_examples=200, deadline=None)
@given(command=carrying(), mode=st.sampled_from(MODES), prefix=st.sampled_from(["", "nice "]))
def test_a_deny_rule_sees_a_carried_command_in_every_mode(
    command: str, mode: str, prefix: str
) -> None:
    assert _denied(prefix + command, mode), command


arithmetic = st.recursive(
    st.sampled_from(["1", "40", "x", "$y"]),
    lambda inner: st.tuples(
        inner, st.sampled_from(["+", "-", "*", "/", "%", "<<", "**"]), inner
    ).map(lambda t: f"({t[0]} {t[1]} {t[2]})"),
    max_leaves=6,
)


@settings(max_examples=200, deadline=None)
@given(expr=arithmetic)
def test_arithmetic_is_no_substitution(expr: str) -> None:
    assert analyze(f"echo $(({expr}))").risks == ()
    held = analyze(f"echo $(({expr} + $(rm -f victim)))")
    assert "command substitution $(...)" in held.risks
    assert "rm -f victim" in held.all_commands
    assert "a parameter expansion ${...}" in analyze(f"echo $(({expr} + ${{#z}}))").risks
