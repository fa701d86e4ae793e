"""coterie's version, the Claude Code release whose interface it follows, and what
``coterie --version`` and ``coterie -v`` print.

A leaf module (it imports nothing), so that any part of coterie can name the
versions without importing the package's facade, which reaches the whole
engine (``coterie/__init__.py`` re-exports both), and the console script can
answer ``--version`` before loading the command line.
"""

from __future__ import annotations

__all__ = ["__claude_code_version__", "__version__", "claude_version_text", "version_text"]

__version__ = "0.1.0"
#: The Claude Code release whose command line and stream-json protocol coterie
#: follows (docs/cli.md): what ``coterie -v`` and ``system/init`` report as
#: ``claude_code_version``, for the Agent SDKs that check the CLI they drive.
__claude_code_version__ = "2.1.332"


def version_text() -> str:
    """What ``coterie --version`` prints."""
    return f"coterie {__version__} (speaks Claude Code {__claude_code_version__}'s CLI)"


def claude_version_text() -> str:
    """What ``coterie -v`` prints: Claude Code's release first, as the SDKs parse it,
    then coterie's own version."""
    return f"{__claude_code_version__} (coterie {__version__})"
