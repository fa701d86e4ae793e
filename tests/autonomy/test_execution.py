"""drop_arbitrary_execution: Auto Mode sets aside allow rules that would run anything."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from coterie.autonomy import (
    ARBITRARY_EXECUTION_COMMANDS,
    drop_arbitrary_execution,
    grants_arbitrary_execution,
)

DROPPED = [
    "Bash",
    "  Bash  ",
    "Bash(*)",
    "Bash( * )",
    "Bash(**)",
    "Bash(* *)",
    "Bash(:*)",
    "Bash(python)",
    "Bash(python:*)",
    "Bash(python *)",
    "Bash(python*)",
    "Bash(python3 *)",
    "Bash(python3.12:*)",
    "Bash(/usr/bin/python3 *)",
    "Bash(PYTHON *)",
    "Bash(py*)",
    "Bash(python -c *)",
    "Bash(python -u -c:*)",
    "Bash(node -e *)",
    "Bash(bash -c *)",
    "Bash(sh:*)",
    "Bash(zsh *)",
    "Bash(ruby *)",
    "Bash(perl:*)",
    "Bash(php *)",
    "Bash(deno *)",
    "Bash(bun *)",
    "Bash(npx:*)",
    "Bash(eval *)",
    "Bash(exec *)",
    "Bash(env *)",
    "Bash(xargs *)",
    "Bash(sudo *)",
    "Bash(FOO=1 python *)",
    "Bash(npm run *)",
    "Bash(npm run:*)",
    "Bash(npm *)",
    "Bash(./*)",
    "Bash(*.sh)",
]

KEPT = [
    "Bash(npm test)",
    "Bash(npm run build)",
    "Bash(python -m pytest *)",
    "Bash(python script.py)",
    "Bash(pytest *)",
    "Bash(git status)",
    "Bash(git diff:*)",
    "Bash(ls *)",
    "Bash(make)",
    "Bash(./scripts/check.sh *)",
    "Bash(FOO=1)",
    "Read",
    "Read(./src/**)",
    "Edit(*)",
    "WebFetch(domain:example.com)",
    "bash(*)",
    "Bash()",
    "Bash(python",
]


@pytest.mark.parametrize("rule", DROPPED)
def test_rules_that_run_anything_are_dropped(rule: str) -> None:
    assert grants_arbitrary_execution(rule)


@pytest.mark.parametrize("rule", KEPT)
def test_narrow_rules_and_other_tools_are_kept(rule: str) -> None:
    assert not grants_arbitrary_execution(rule)


def test_drop_splits_the_list_keeping_order() -> None:
    rules = ["Read", "Bash(*)", "Bash(npm test)", "Bash(python:*)", "Edit(src/**)"]
    assert drop_arbitrary_execution(rules) == (
        ["Read", "Bash(npm test)", "Edit(src/**)"],
        ["Bash(*)", "Bash(python:*)"],
    )


_entries = st.sampled_from(sorted(ARBITRARY_EXECUTION_COMMANDS))
_wildcards = st.sampled_from([":*", " *", "*", " -c *", " -e:*", ""])
_prefixes = st.sampled_from(["", "/usr/bin/", "/opt/local/bin/", "FOO=1 ", "A=b C=d "])


@given(_prefixes, _entries, _wildcards, st.sampled_from(["", " "]))
def test_every_entry_point_with_a_wildcard_is_dropped(
    prefix: str, entry: str, wildcard: str, pad: str
) -> None:
    if "/" in prefix and " " in entry:
        prefix = ""  # "/usr/bin/npm run" is still npm run, but keep the spelling plain
    assert grants_arbitrary_execution(f"Bash({pad}{prefix}{entry}{wildcard}{pad})")


@given(st.lists(st.sampled_from(["*", " ", "**"]), min_size=1, max_size=4), st.booleans())
def test_every_wildcard_only_rule_is_dropped(parts: list[str], legacy: bool) -> None:
    spec = "".join(parts) + (":*" if legacy else "")
    if spec.strip():
        assert grants_arbitrary_execution(f"Bash({spec})")


@given(
    st.from_regex(r"\A[A-Z][A-Za-z]{0,10}\Z").filter(lambda t: t != "Bash"),
    st.text(max_size=20).filter(lambda t: ")" not in t),
)
def test_rules_for_other_tools_are_always_kept(tool: str, specifier: str) -> None:
    assert not grants_arbitrary_execution(f"{tool}({specifier})")
    assert not grants_arbitrary_execution(tool)


@given(st.lists(st.text(max_size=20), max_size=8))
def test_drop_is_a_partition_of_its_input(rules: list[str]) -> None:
    kept, dropped = drop_arbitrary_execution(rules)
    assert sorted(kept + dropped) == sorted(rules)
    assert all(grants_arbitrary_execution(r) for r in dropped)
    assert not any(grants_arbitrary_execution(r) for r in kept)
