"""The permission question's text and the answers it takes (pure)."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given

from coterie.tools.permissions import Suggestion
from coterie.ui.question import choices, parse_choice, question_lines
from tests.strategies import typed_answers

PROJECT = Path("/work/app")
BASH = Suggestion("Bash(npm test:*)", "`npm test` commands", persist=True)
THREE = choices(BASH, PROJECT, agent="bob", team=True)
TWO = choices(None, PROJECT)


def test_the_answers_are_numbered_as_claude_code_numbers_them() -> None:
    assert [label for _, label in THREE] == [
        "Yes",
        "Yes, and don't ask again for `npm test` commands in /work/app",
        "No, and tell bob what to do differently",
    ]


def test_without_a_rule_to_offer_there_are_two_answers_and_no_name_alone() -> None:
    assert TWO == [("yes", "Yes"), ("no", "No, and tell the agent what to do differently")]


def test_edits_are_allowed_for_the_session_not_saved() -> None:
    edits = Suggestion("Edit", "all edits during this session", persist=False)
    assert choices(edits, PROJECT)[1] == ("always", "Yes, allow all edits during this session")


def test_the_digit_chooses_enter_takes_the_first_and_esc_says_no() -> None:
    assert parse_choice("2\n", THREE) is not None
    assert [parse_choice(n, THREE).choice for n in ("1", "2", "3")] == ["yes", "always", "no"]  # type: ignore[union-attr]
    assert parse_choice("", THREE).choice == "yes"  # type: ignore[union-attr]
    escaped = parse_choice("\x1b", THREE)
    assert escaped is not None
    assert escaped.choice == "no"
    assert escaped.escaped


def test_no_takes_what_to_do_instead_on_the_same_line() -> None:
    reply = parse_choice("3 run pytest instead", THREE)
    assert reply is not None
    assert reply.instruction == "run pytest instead"


def test_invalid_lines_ask_again() -> None:
    for line in ("4", "0", "12", "1 please", "y", "yes", "x"):
        assert parse_choice(line, THREE) is None, line
    assert parse_choice("3", TWO) is None  # only two answers here


@given(typed_answers)
def test_every_line_is_one_listed_answer_or_asks_again(line: str) -> None:
    for listed in (THREE, TWO):
        reply = parse_choice(line, listed)
        if reply is None:
            continue
        assert reply.choice in {choice for choice, _ in listed}
        assert reply.instruction is None or reply.choice == "no"
        if line.strip() and not line.startswith("\x1b"):
            assert line.strip()[0].isdigit()  # only a number chooses


def test_a_teammate_is_named_and_a_solo_agent_is_not() -> None:
    command = {"command": "npm test", "description": "Run the tests"}
    team = question_lines("Bash", command, "Bash needs approval.", agent="bob", team=True)
    solo = question_lines("Bash", command, "Bash needs approval.", agent="lead")
    assert team[0] == "bob wants to run a Bash command:"
    assert solo[0] == "Bash command"
    assert "  npm test" in solo
    assert "  (Run the tests)" in solo
    assert "  why: Bash needs approval." in solo


def test_an_edit_shows_its_path_and_a_short_diff_a_write_its_size() -> None:
    edit = {"file_path": "/w/a.py", "old_string": "x = 1", "new_string": "x = 2"}
    assert question_lines("Edit", edit, "") == ["Edit /w/a.py", "  - x = 1", "  + x = 2"]
    big = {"file_path": "/w/b.txt", "content": "a\n" * 100}
    assert question_lines("Write", big, "", agent="alice", team=True) == [
        "alice wants to write /w/b.txt",
        "  (100 lines, 200 bytes)",
    ]


def test_other_input_is_capped() -> None:
    lines = question_lines("mcp__x__y", {"q": "z" * 1000}, "")
    assert lines[0] == "Use mcp__x__y"
    assert len(lines[1]) < 420
    assert lines[1].endswith("…")
