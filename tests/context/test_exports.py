"""The public surface of coterie.context, and what it must not import."""

from __future__ import annotations

import subprocess
import sys

import coterie.context

PUBLIC = {
    "CONTEXT_WINDOWS",
    "DEFAULT_CONTEXT_WINDOW",
    "SUMMARY_SYSTEM",
    "Budget",
    "CompactionReport",
    "ContextOverflow",
    "Funnel",
    "FunnelConfig",
    "HistoryInvalid",
    "TokenCounter",
    "TranscriptCorruption",
    "TranscriptLog",
    "check_history",
    "context_window",
    "repair_history",
    "summary_request",
    "user_texts",
}


def test_the_public_surface_is_what_we_promise() -> None:
    assert set(coterie.context.__all__) == PUBLIC


def test_every_exported_name_resolves() -> None:
    for name in coterie.context.__all__:
        assert getattr(coterie.context, name) is not None, name


def test_the_context_package_does_not_import_the_loop_or_the_tools() -> None:
    """The loop calls into coterie.context, never the other way round."""
    code = (
        "import sys, coterie.context; "
        "print(sorted(m for m in sys.modules if m.split('.')[:2] in "
        "(['coterie', 'agent'], ['coterie', 'tools'], ['coterie', 'actors'], "
        "['coterie', 'supervisors'])))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
