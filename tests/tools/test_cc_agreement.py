"""Issue 24: coterie never runs a call Claude Code blocks, on the recorded cells.

``bench/cc_agreement.py`` holds Claude Code 2.1.332's verdicts on 160 tool
calls under every permission mode, five rule sets and both trust states
(``bench/cc_agreement_cells.json``, recorded once against the real binary).
This runs the bench's own comparison in-process on that data: coterie's
policy decides every cell again, over the same tree. A cell where Claude Code
blocks and coterie runs is a hole, whatever the percentage; the agreement
target is checked too.
"""

from __future__ import annotations

import pytest

from bench.cc_agreement import TARGET, TRUST, agreement, coterie_verdicts, describe, load

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def found():  # type: ignore[no-untyped-def]  # the bench's Agreement
    data = load()
    return agreement(data, coterie_verdicts(data))


@pytest.mark.parametrize("trust", TRUST)
def test_no_cell_where_claude_code_blocks_and_coterie_runs(found, trust: str) -> None:  # type: ignore[no-untyped-def]
    looser = {
        f"{what} [{why}]: {', '.join(where)}"
        for (what, state, why), where in found.looser.items()
        if state == trust
    }
    assert looser == set()


@pytest.mark.parametrize("trust", TRUST)
def test_agreement_reaches_the_target(found, trust: str) -> None:  # type: ignore[no-untyped-def]
    assert found.percent(trust) >= TARGET


def test_every_recorded_cell_is_compared() -> None:
    data = load()
    assert len(data["answers"]) == len(TRUST) * len(data["modes"]) * len(data["rule_sets"])
    assert all(len(v) == len(data["cells"]) for v in data["answers"].values())
    assert describe(data["cells"][-1]).startswith("Bash(")
