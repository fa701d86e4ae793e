"""Parsing and matching Claude Code permission rules."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from coterie.tools import (
    Access,
    Capabilities,
    Effect,
    PathInput,
    ToolContext,
    ToolResult,
    default_registry,
)
from coterie.tools.permissions import Rule, RuleError, parse_rule


@pytest.mark.parametrize(
    ("text", "tool", "specifier"),
    [
        ("Bash", "Bash", None),
        ("Bash(npm run test *)", "Bash", "npm run test *"),
        ("Bash(git diff:*)", "Bash", "git diff:*"),
        ("Read(./secrets/**)", "Read", "./secrets/**"),
        ("Edit(/src/**/*.ts)", "Edit", "/src/**/*.ts"),
        ("Write(docs/*.md)", "Write", "docs/*.md"),
        ("WebFetch(domain:example.com)", "WebFetch", "domain:example.com"),
        ("mcp__github__create_issue", "mcp__github__create_issue", None),
        ("  Bash( ls * )  ", "Bash", "ls *"),
        ("Bash(echo (hi))", "Bash", "echo (hi)"),
    ],
)
def test_parse(text: str, tool: str, specifier: str | None) -> None:
    rule = parse_rule(text)
    assert (rule.tool, rule.specifier) == (tool, specifier)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty permission rule"),
        ("Bash(", "must end with ')'"),
        ("Bash(ls", "must end with ')'"),
        ("Bash()", "empty specifier"),
        ("Bash)", "without '('"),
        ("(ls)", "not a tool name"),
        ("Ba sh(ls)", "not a tool name"),
        ("Bash(ls) extra", "must end with ')'"),
        ("Bash(git:* diff)", "only allowed at the end"),
        ("WebFetch(example.com)", "domain:HOST"),
    ],
)
def test_malformed_rules_are_clear_errors(text: str, message: str) -> None:
    with pytest.raises(RuleError, match=re.escape(message)):
        parse_rule(text, source="settings.json")


def test_errors_name_their_source() -> None:
    with pytest.raises(RuleError, match=r"in /p/\.claude/settings\.json"):
        parse_rule("Bash(", source="/p/.claude/settings.json")


def test_rule_error_is_a_value_error() -> None:
    with pytest.raises(ValueError):  # noqa: PT011 -- the point is the builtin base
        parse_rule("")


# -- Bash matching ---------------------------------------------------------


@pytest.mark.parametrize(
    ("rule", "command", "matches"),
    [
        ("Bash", "anything at all", True),
        ("Bash(*)", "anything at all", True),
        ("Bash(npm run build)", "npm run build", True),
        ("Bash(npm run build)", "npm run build --prod", False),
        ("Bash(npm run build)", "npm  run   build", True),
        ("Bash(ls *)", "ls", True),
        ("Bash(ls *)", "ls -la", True),
        ("Bash(ls *)", "lsof", False),
        ("Bash(ls*)", "lsof", True),
        ("Bash(npm run test *)", "npm run test --watch", True),
        ("Bash(npm run test *)", "npm run testing", False),
        ("Bash(git diff:*)", "git diff", True),
        ("Bash(git diff:*)", "git diff HEAD~1", True),
        ("Bash(git diff:*)", "git diffx", False),
        ("Bash(git * main)", "git push origin main", True),
        ("Bash(git * main)", "git push origin dev", False),
        ("Bash(* --version)", "node --version", True),
        ("Bash(echo \\*)", "echo *", True),
        ("Bash(echo \\*)", "echo hi", False),
    ],
)
def test_bash_matching(rule: str, command: str, matches: bool) -> None:
    assert parse_rule(rule).matches_command(command) is matches


@given(st.text(alphabet="abc -*:", max_size=12), st.text(alphabet="abc -", max_size=12))
def test_bash_matching_never_crashes(spec: str, command: str) -> None:
    try:
        rule = parse_rule(f"Bash({spec})")
    except RuleError:
        return
    assert isinstance(rule.matches_command(command), bool)


# -- path matching -----------------------------------------------------------


WS = Path("/work/proj")


@pytest.mark.parametrize(
    ("rule", "path", "matches"),
    [
        ("Read(./secrets/**)", "/work/proj/secrets/key.pem", True),
        ("Read(./secrets/**)", "/work/proj/secrets", True),
        ("Read(./secrets/**)", "/work/proj/public/secrets.txt", False),
        ("Read(secrets/**)", "/work/proj/secrets/a/b", True),
        ("Read(.env)", "/work/proj/.env", True),
        ("Read(.env)", "/work/proj/app/.env", True),
        ("Read(*.env)", "/work/proj/deep/prod.env", True),
        ("Read(*.env)", "/work/proj/env.txt", False),
        ("Edit(/src/**/*.ts)", "/work/proj/src/a/b.ts", True),
        ("Edit(/src/**/*.ts)", "/work/proj/src/b.ts", True),
        ("Edit(/src/**/*.ts)", "/work/proj/lib/b.ts", False),
        ("Read(//etc/**)", "/etc/passwd", True),
        ("Read(//etc/**)", "/work/proj/etc/x", False),
        ("Edit(src)", "/work/proj/src/deep/file.py", True),
        ("Edit", "/anywhere", True),
    ],
)
def test_path_matching(rule: str, path: str, matches: bool) -> None:
    assert parse_rule(rule).matches_path(Path(path), WS) is matches


def test_home_anchored_rules() -> None:
    home = Path(os.path.realpath(os.path.expanduser("~")))
    rule = parse_rule("Read(~/.ssh/**)")
    assert rule.matches_path(home / ".ssh/id_rsa", WS)
    assert not rule.matches_path(WS / ".ssh/id_rsa", WS)


def test_slash_rules_are_anchored_at_the_settings_project() -> None:
    """``/path`` is relative to the directory holding the settings file's .claude."""
    rule = parse_rule("Edit(/generated/**)", root=Path("/other/proj"))
    assert rule.matches_path(Path("/other/proj/generated/x.py"), WS)
    assert not rule.matches_path(WS / "generated/x.py", WS)


def test_edit_rules_cover_write_and_read_rules_cover_search() -> None:
    edit, read, write = parse_rule("Edit"), parse_rule("Read"), parse_rule("Write(x)")
    tools = {t.name: t for t in default_registry()}
    assert edit.applies_to(tools["Write"])
    assert edit.applies_to(tools["Edit"])
    assert read.applies_to(tools["Glob"])
    assert read.applies_to(tools["Grep"])
    assert not read.applies_to(tools["Edit"])
    assert write.applies_to(tools["Write"])
    assert not write.applies_to(tools["Edit"])
    assert not edit.applies_to(tools["Bash"])


@attrs.define
class Declared:
    """A tool known only by its declaration, as a plug-in's would be."""

    name: str
    capabilities: Capabilities
    description: str = "d"
    input_schema: dict[str, Any] = attrs.field(factory=dict)

    async def run(self, input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        raise AssertionError("never run")


def test_edit_and_read_rules_follow_a_new_tools_declaration() -> None:
    """A tool no rule module has heard of is covered by what it declares."""
    writes = Declared("NotebookEdit", Capabilities(Effect.WORKSPACE, PathInput("nb", Access.WRITE)))
    reads = Declared("LS", Capabilities(Effect.READ_ONLY, PathInput("path", Access.READ)))
    neither = Declared("Fetch", Capabilities(Effect.EXECUTION))
    edit, read = parse_rule("Edit(src/**)"), parse_rule("Read")
    assert edit.applies_to(writes)
    assert not edit.applies_to(reads)
    assert read.applies_to(reads)
    assert not read.applies_to(writes)
    assert not edit.applies_to(neither)
    assert not read.applies_to(neither)
    assert parse_rule("Fetch").applies_to(neither)


def test_webfetch_domain_rules() -> None:
    rule = parse_rule("WebFetch(domain:example.com)")
    assert rule.matches_url("https://docs.example.com/a")
    assert not rule.matches_url("https://example.org/")


def test_describe_names_the_source() -> None:
    assert Rule("Bash", "Bash", source="f.json").describe() == "Bash (from f.json)"
