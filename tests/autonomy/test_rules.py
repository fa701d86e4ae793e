"""The Auto Mode rules: the built-in asset and the ``autoMode`` settings merge."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from coterie.autonomy import (
    DEFAULTS_MARKER,
    SECTIONS,
    AutoModeRule,
    AutoModeRules,
    AutoModeRulesError,
    default_auto_mode_rules,
    load_auto_mode_rules,
)
from coterie.errors import CoterieError

DEFAULTS = default_auto_mode_rules()


def names(rules: tuple[AutoModeRule, ...]) -> list[str]:
    return [r.name for r in rules]


def test_the_asset_ships_inside_the_package() -> None:
    asset = resources.files("coterie").joinpath("assets", "auto_mode_rules.json")
    assert set(json.loads(asset.read_text(encoding="utf-8"))) == set(SECTIONS)


def test_the_built_in_rules_cover_what_the_design_lists() -> None:
    assert names(DEFAULTS.hard_deny) == ["data exfiltration"]
    assert names(DEFAULTS.soft_deny) == [
        "push to the default branch",
        "destructive git",
        "irreversible local destruction",
        "production deploys",
        "credential leakage",
        "bypassing Auto Mode",
    ]
    assert names(DEFAULTS.allow) == [
        "read-only operations",
        "local operations in the project",
        "push to a working branch",
    ]
    assert DEFAULTS.environment


def test_every_built_in_rule_has_a_short_name_and_a_description() -> None:
    for section in SECTIONS:
        for rule in DEFAULTS.section(section):
            assert 0 < len(rule.name) <= 40
            assert len(rule.description) > len(rule.name)


@pytest.mark.parametrize("value", [None, {}, {"unknown": 1}])
def test_no_setting_keeps_the_built_ins(value: object) -> None:
    assert load_auto_mode_rules(value) == DEFAULTS


def test_a_list_replaces_the_built_ins_of_its_section_only() -> None:
    rules = load_auto_mode_rules({"soft_deny": ["Never touch the vendored code"]})
    assert rules.soft_deny == (
        AutoModeRule("Never touch the vendored code", "Never touch the vendored code"),
    )
    assert rules.hard_deny == DEFAULTS.hard_deny
    assert rules.allow == DEFAULTS.allow


def test_defaults_splice_the_built_ins_in_at_their_place() -> None:
    rules = load_auto_mode_rules({"allow": ["first", DEFAULTS_MARKER, "last"]})
    assert names(rules.allow) == ["first", *names(DEFAULTS.allow), "last"]


def test_an_empty_list_removes_every_rule_of_a_section() -> None:
    assert load_auto_mode_rules({"allow": []}).allow == ()


def test_a_rule_may_be_an_object_with_a_name_and_a_description() -> None:
    rule = {"name": "staging deploys", "description": "  Deploying to staging is fine. "}
    rules = load_auto_mode_rules({"allow": [rule]})
    assert rules.allow == (AutoModeRule("staging deploys", "Deploying to staging is fine."),)


def test_a_long_rule_gets_a_short_name() -> None:
    text = "Never " + "really " * 30 + "delete the fixtures"
    (rule,) = load_auto_mode_rules({"soft_deny": [text]}).soft_deny
    assert rule.description == text
    assert len(rule.name) <= 60
    assert rule.name.endswith("...")


def test_an_object_without_a_name_is_named_after_its_description() -> None:
    (rule,) = load_auto_mode_rules({"environment": [{"description": "We use pnpm."}]}).environment
    assert rule == AutoModeRule("We use pnpm.", "We use pnpm.")


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ([], "autoMode must be an object, not a list"),
        ("deny all", "autoMode must be an object, not a string"),
        ({"allow": "read-only"}, "autoMode.allow must be a list of rules, not a string"),
        ({"hard_deny": None}, "autoMode.hard_deny must be a list of rules, not null"),
        ({"soft_deny": [1]}, r"autoMode.soft_deny\[0\]: a rule is a string or an object"),
        ({"soft_deny": ["ok", "  "]}, r"autoMode.soft_deny\[1\]: a rule must not be empty"),
        ({"allow": [{"name": "x"}]}, "needs a non-empty string 'description'"),
        ({"allow": [{"description": 5}]}, "needs a non-empty string 'description'"),
        ({"allow": [{"name": 5, "description": "d"}]}, "'name' must be a non-empty string"),
        ({"allow": [DEFAULTS_MARKER, DEFAULTS_MARKER]}, "appears twice"),
    ],
)
def test_bad_shapes_are_clear_errors(value: object, message: str) -> None:
    with pytest.raises(AutoModeRulesError, match=message):
        load_auto_mode_rules(value)


def test_errors_name_the_settings_file() -> None:
    with pytest.raises(AutoModeRulesError, match=r"^/home/u/.claude/settings.json: autoMode\."):
        load_auto_mode_rules({"allow": 3}, source="/home/u/.claude/settings.json")


def test_the_error_is_caught_like_a_settings_error() -> None:
    assert issubclass(AutoModeRulesError, CoterieError)
    assert issubclass(AutoModeRulesError, ValueError)


def test_an_unknown_section_name_is_a_key_error() -> None:
    with pytest.raises(KeyError):
        AutoModeRules().section("deny")


_rule_texts = st.text(min_size=1, max_size=12).filter(lambda t: t.strip() and t != DEFAULTS_MARKER)


@given(
    st.sampled_from(SECTIONS),
    st.lists(_rule_texts, max_size=4),
    st.lists(_rule_texts, max_size=4),
    st.booleans(),
)
def test_a_section_is_the_users_rules_with_the_built_ins_where_asked(
    section: str, before: list[str], after: list[str], splice: bool
) -> None:
    entries: list[Any] = [*before, *([DEFAULTS_MARKER] if splice else []), *after]
    rules = load_auto_mode_rules({section: entries})
    described = [r.description for r in rules.section(section)]
    spliced = [r.description for r in DEFAULTS.section(section)] if splice else []
    assert described == [" ".join(t.split()) for t in before] + spliced + [
        " ".join(t.split()) for t in after
    ]
    for other in SECTIONS:
        if other != section:
            assert rules.section(other) == DEFAULTS.section(other)
