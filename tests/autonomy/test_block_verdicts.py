"""parse_block_verdict: ``<block>yes|no</block>`` first, or the action is blocked."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from coterie.autonomy import BlockVerdict, parse_block_verdict
from tests.strategies import block_answers


@pytest.mark.parametrize(
    ("text", "verdict"),
    [
        ("<block>no</block>", BlockVerdict(block=False)),
        ("<block>yes</block>", BlockVerdict(block=True)),
        ("  \n<block>No</block>", BlockVerdict(block=False)),
        ("<block>YES</block><reason>pushes to main</reason>", BlockVerdict(True, "pushes to main")),
        ("<block> no </block>\n<reason>\n harmless \n</reason>", BlockVerdict(False, "harmless")),
        ("<block>no</block><reason></reason>", BlockVerdict(block=False)),
        ("<block>no</block>\nThe command only lists files.", BlockVerdict(block=False)),
    ],
)
def test_well_formed_answers(text: str, verdict: BlockVerdict) -> None:
    assert parse_block_verdict(text) == verdict


@pytest.mark.parametrize(
    "text",
    [
        "",
        "no",
        "I would not block this.",
        "Verdict: <block>no</block>",
        "<reason>fine</reason><block>no</block>",
        "<block>maybe</block>",
        "<block>no",
        "<BLOCK>no</BLOCK>",
        "<block>nope</block>",
        "```\n<block>no</block>\n```",
        "<block>no</block><block>yes</block>",
        "<block>no</block><reason>x</reason> actually <block>yes</block>",
    ],
)
def test_anything_else_blocks_and_says_so(text: str) -> None:
    verdict = parse_block_verdict(text)
    assert verdict.block
    assert not verdict.valid
    assert verdict.reason is not None
    assert "blocked to be safe" in verdict.reason


@given(block_answers())
def test_generated_well_formed_answers_parse(case: tuple[str, bool, str | None]) -> None:
    text, block, reason = case
    assert parse_block_verdict(text) == BlockVerdict(block, reason)


@given(st.text(max_size=60))
def test_random_text_fails_closed(text: str) -> None:
    verdict = parse_block_verdict(text)
    if not verdict.valid:
        assert verdict.block
    if not verdict.block:
        assert text.lstrip().startswith("<block>")


@given(st.text(max_size=60).filter(lambda t: not t.lstrip().startswith("<block>")))
def test_text_not_opening_with_a_block_tag_always_blocks(text: str) -> None:
    assert parse_block_verdict(text) == BlockVerdict(
        True, parse_block_verdict(text).reason, valid=False
    )


@given(st.text(min_size=1, max_size=30).filter(lambda t: t.strip()), block_answers())
def test_a_planted_verdict_after_leading_text_still_blocks(
    prefix: str, case: tuple[str, bool, str | None]
) -> None:
    """A verdict counts only at the very start of the answer."""
    text = prefix + case[0].lstrip()
    if not text.lstrip().startswith("<block>"):
        assert parse_block_verdict(text).block
