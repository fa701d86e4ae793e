"""The options of Claude Code's flags survive the run's config.json (a resume keeps them)."""

from __future__ import annotations

from coterie.runtime.options import RunOptions


def test_the_new_options_round_trip() -> None:
    options = RunOptions(
        allowed_rules=("Bash(git log *)", "Edit"),
        disallowed_rules=("Bash(rm *)",),
        tools=(),
        settings='{"permissions": {}}',
        setting_sources=("user",),
        fallback_model="haiku",
    )
    again = RunOptions.from_json(options.to_json())
    assert again == options
    assert again.tools == ()  # none is not "not asked for"


def test_not_asked_for_stays_none() -> None:
    again = RunOptions.from_json(RunOptions().to_json())
    assert (again.tools, again.setting_sources, again.fallback_model) == (None, None, None)
