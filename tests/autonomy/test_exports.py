"""What coterie.autonomy must not import (its names: tests/test_public_surface.py)."""

from __future__ import annotations

import subprocess
import sys

from coterie.autonomy.sanitize import NOTE_PREFIX
from coterie.context.history import NOTE_PREFIX as CONTEXT_NOTE_PREFIX


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
