"""A command body's shell lines and ``@`` references, found as Claude Code finds them.

The cases are those measured against Claude Code 2.1: a ``!`` at a line's
start or after white space opens a shell line, ```` ```! ```` blocks run
whole, an ``@`` after white space names a path (attached only if it exists,
the text never changed).
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from coterie.extensions.commandlines import ShellLine, file_refs, fill, parse_body, shell_lines
from coterie.extensions.commands import CommandDefinition, expand

COMMAND_TEXT = st.text(alphabet=st.sampled_from("ab !`@\n\t.(/x-_"), max_size=60)


def commands(body: str) -> dict[str, CommandDefinition]:
    return {"c": CommandDefinition("c", body, source="c.md")}


def test_inline_lines_run_only_after_white_space_or_at_a_line_start() -> None:
    body = "A: !`echo one`\n!`echo two` x!`echo glued` (!`echo p`) [!`true`] `!`echo code``"
    assert shell_lines(parse_body(body)) == (
        ShellLine("!`echo one`", "echo one"),
        ShellLine("!`echo two`", "echo two"),
    )


def test_a_bang_block_runs_whole_and_its_fences_go_with_it() -> None:
    body = "Before\n```!\necho a\necho b\n```\nAfter"
    pieces = parse_body(body)
    assert shell_lines(pieces) == (ShellLine("```!\necho a\necho b\n```", "echo a\necho b"),)
    assert fill(pieces, ["a\nb\n"]) == "Before\na\nb\nAfter"


def test_lines_in_a_plain_fence_run_too() -> None:  # as Claude Code does
    pieces = parse_body("```\n!`echo in`\n```")
    assert fill(pieces, ["in"]) == "```\nin\n```"


def test_outputs_are_trimmed_and_put_in_place() -> None:
    pieces = parse_body("S: !`git status` and !`echo x`.")
    assert fill(pieces, ["  clean\n", "x\n"]) == "S: clean and x."
    with pytest.raises(ValueError, match="2 shell line"):
        fill(pieces, ["one"])


@given(COMMAND_TEXT)
def test_the_pieces_give_the_body_back(body: str) -> None:
    pieces = parse_body(body)
    assert "".join(p.pattern if isinstance(p, ShellLine) else p for p in pieces) == body


@given(COMMAND_TEXT)
def test_a_body_without_a_bang_backtick_has_no_lines(body: str) -> None:
    if "!`" not in body:
        assert shell_lines(parse_body(body)) == ()


@given(st.text(alphabet=st.sampled_from("ab`'\"()x.\n"), max_size=40))
def test_text_with_no_at_names_no_file(text: str) -> None:
    assert file_refs(text) == ()


@given(st.from_regex(r"[a-z][a-z0-9_./-]{0,15}", fullmatch=True))
def test_an_at_after_white_space_names_its_path(path: str) -> None:
    named = path.rstrip(".")
    expected = (named,) if named else ()
    assert file_refs(f"see @{path}\n") == expected
    assert file_refs(f"@{path} first") == expected
    for glued in (f"`@{path}`", f'"@{path}"', f"(@{path})", f"me@{path}"):
        assert file_refs(glued) == ()


def test_references_are_listed_once_without_trailing_punctuation() -> None:
    text = "Read @README.md and @src/a.py, then @README.md again. Hi @john.\n@scope/pkg"
    assert file_refs(text) == ("README.md", "src/a.py", "john", "scope/pkg")


def test_expand_no_longer_refuses_lines_or_references() -> None:
    body = "Status: !`git status`\n@dataclass\nclass A: ...\n@media screen {}\nAsk $1"
    expansion = expand("/c me", commands(body))
    assert expansion is not None
    assert expansion.shell == (ShellLine("!`git status`", "git status"),)
    assert expansion.files == ("dataclass", "media")
    assert expansion.completed(["clean"]) == (
        "Status: clean\n@dataclass\nclass A: ...\n@media screen {}\nAsk me"
    )


def test_arguments_are_in_place_before_the_lines_are_found() -> None:
    expansion = expand("/c 42", commands("Issue: !`gh issue view $1`"))
    assert expansion is not None
    assert expansion.shell == (ShellLine("!`gh issue view 42`", "gh issue view 42"),)


def test_attached_files_come_before_the_text_which_is_unchanged() -> None:
    expansion = expand("/c", commands("Review @README.md"))
    assert expansion is not None
    assert expansion.shell == ()
    prompt = expansion.completed([], [("README.md", "# Title")])
    assert prompt.endswith("Review @README.md")
    assert prompt.index("# Title") < prompt.index("Review")


def test_a_stop_is_one_line_naming_the_line() -> None:
    expansion = expand("/c", commands("!`touch x`"))
    assert expansion is not None
    said = expansion.stopped(expansion.shell[0], "Permission denied.\ntouch needs approval")
    assert said == "/c stopped at !`touch x`: Permission denied. touch needs approval"
