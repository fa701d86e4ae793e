"""What coterie.context must not import (its names: tests/test_public_surface.py)."""

from __future__ import annotations

import subprocess
import sys


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
