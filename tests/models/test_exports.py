"""Importing coterie.models stays cheap (its names: tests/test_public_surface.py)."""

from __future__ import annotations

import subprocess
import sys

import coterie.models


def test_anthropic_model_is_exported_lazily() -> None:
    from coterie.models.anthropic_model import AnthropicModel

    assert coterie.models.AnthropicModel is AnthropicModel


def test_importing_the_package_does_not_import_the_sdk() -> None:
    """The SDK takes about a second to import; offline runs must not pay for it."""
    code = "import sys, coterie.models; print('anthropic' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
