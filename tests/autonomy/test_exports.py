"""The public surface of coterie.autonomy, and what it must not import."""

from __future__ import annotations

import inspect
import subprocess
import sys

import coterie.autonomy
from coterie.autonomy.sanitize import NOTE_PREFIX
from coterie.context.history import NOTE_PREFIX as CONTEXT_NOTE_PREFIX

PUBLIC = {
    "ARBITRARY_EXECUTION_COMMANDS",
    "CONSECUTIVE_LIMIT",
    "DEFAULTS_MARKER",
    "MAX_DELAY",
    "MIN_DELAY",
    "PENDING_LABEL",
    "SECTIONS",
    "TOTAL_LIMIT",
    "AutoModeRule",
    "AutoModeRules",
    "AutoModeRulesError",
    "BlockVerdict",
    "DenialTracker",
    "DurationError",
    "GoalStatus",
    "GoalVerdict",
    "LoopSpec",
    "LoopSpecError",
    "Stage",
    "classifier_request",
    "classifier_system_prompt",
    "classifier_transcript",
    "clamp_delay",
    "default_auto_mode_rules",
    "drop_arbitrary_execution",
    "escape_json",
    "format_duration",
    "grants_arbitrary_execution",
    "load_auto_mode_rules",
    "parse_block_verdict",
    "parse_duration",
    "parse_goal_verdict",
    "parse_loop_spec",
    "schedule_hint",
}


def test_the_public_surface_is_what_we_promise() -> None:
    assert set(coterie.autonomy.__all__) == PUBLIC


def test_every_exported_name_resolves() -> None:
    for name in coterie.autonomy.__all__:
        assert getattr(coterie.autonomy, name) is not None, name


def test_every_public_class_and_function_has_a_docstring() -> None:
    for name in coterie.autonomy.__all__:
        obj = getattr(coterie.autonomy, name)
        if inspect.isclass(obj) or inspect.isfunction(obj):
            assert obj.__doc__, name


def test_the_package_is_sans_io() -> None:
    """No Trio, no actors, no models, no tools, no CLI: the actors call in, not out."""
    code = (
        "import sys, coterie.autonomy; "
        "print(sorted(m for m in sys.modules if m == 'trio' or m.split('.')[:2] in "
        "(['coterie', 'actors'], ['coterie', 'supervisors'], ['coterie', 'models'], "
        "['coterie', 'tools'], ['coterie', 'agent'], ['coterie', 'cli'], "
        "['coterie', 'context'])))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_sanitiser_knows_coteries_note_prefix() -> None:
    """The prefix is repeated to avoid an import; the two must agree."""
    assert NOTE_PREFIX == CONTEXT_NOTE_PREFIX
