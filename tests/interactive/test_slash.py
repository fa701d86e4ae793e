"""The parser of slash input, the command table, and the routing of ``coterie ARGS``."""

from __future__ import annotations

import string

from hypothesis import given
from hypothesis import strategies as st

from coterie.cli import command_parser, routed
from coterie.interactive import COMMANDS, closest, parse_slash
from coterie.interactive.conversation import HANDLERS

NAMES = st.from_regex(r"\A[A-Za-z][A-Za-z0-9_:-]{0,20}\Z")
ARGS = st.text(alphabet=string.printable, max_size=40)


@given(NAMES, ARGS)
def test_a_slash_and_a_name_is_a_command_with_its_arguments(name: str, args: str) -> None:
    parsed = parse_slash(f"/{name} {args}")
    assert parsed is not None
    assert parsed.name == name.lower()
    assert parsed.args == args.strip()


@given(st.text(max_size=60))
def test_a_line_not_opened_by_a_slash_is_a_prompt(text: str) -> None:
    if not text.strip().startswith("/"):
        assert parse_slash(text) is None


@given(st.text(max_size=60))
def test_what_parses_is_a_word_and_the_rest(text: str) -> None:
    parsed = parse_slash(text)
    if parsed is not None:
        assert text.strip()[1:].lower().startswith(parsed.name)
        assert parsed.args == parsed.args.strip()
        assert not set(parsed.name) & set("/ \t\n")


def test_a_path_is_a_prompt_not_a_command() -> None:
    assert parse_slash("/usr/bin/ls is missing") is None
    assert parse_slash("/ nothing") is None
    assert parse_slash("  /compact   keep the plan  ") is not None
    assert parse_slash("/compact keep\nthe plan").args == "keep\nthe plan"  # type: ignore[union-attr]


def test_every_command_is_declared_once_with_a_handler() -> None:
    names = [command.name for command in COMMANDS]
    assert len(names) == len(set(names))
    assert set(HANDLERS) == set(names)
    assert all(command.help for command in COMMANDS)


def test_the_closest_command_names_a_typo_and_nothing_for_noise() -> None:
    names = [command.name for command in COMMANDS]
    assert closest("cots", names) == "cost"
    assert closest("hepl", names) == "help"
    assert closest("exti", names) == "exit"
    assert closest("qqqqqq", names) is None


SUBCOMMANDS = command_parser()[1]


def test_the_subcommands_are_known() -> None:
    assert {"run", "team", "resume", "runs", "demo", "compact", "trust"} <= SUBCOMMANDS


@given(st.lists(st.text(min_size=1, max_size=10), max_size=4))
def test_a_first_word_that_is_no_command_is_run_s(argv: list[str]) -> None:
    out = routed(argv, SUBCOMMANDS)
    if argv and (argv[0] in SUBCOMMANDS or argv[0] in ("-h", "--help", "-v", "--version")):
        assert out == argv
    elif "--team" in (argv[: argv.index("--")] if "--" in argv else argv):
        assert out[0] == "team"
        assert sorted([*out[1:], "--team"]) == sorted(argv)
    else:
        assert out == ["run", "--conversation", *argv]


def test_routing_examples() -> None:
    assert routed([], SUBCOMMANDS) == ["run", "--conversation"]
    assert routed(["-p", "q"], SUBCOMMANDS) == ["run", "--conversation", "-p", "q"]
    assert routed(["fix the bug"], SUBCOMMANDS)[-1] == "fix the bug"
    assert routed(["demo"], SUBCOMMANDS) == ["demo"]
    assert routed(["resume", "x"], SUBCOMMANDS) == ["resume", "x"]
    # An Agent SDK host's extra_args={"team": None, "teammates": "2"}:
    sdk = ["--output-format", "stream-json", "--team", "--teammates", "2"]
    assert routed(sdk, SUBCOMMANDS) == [
        "team",
        "--output-format",
        "stream-json",
        "--teammates",
        "2",
    ]
    assert routed(["-p", "--", "--team"], SUBCOMMANDS)[0] == "run"  # a prompt, not an option
