"""What ``coterie --version`` and ``coterie -v`` print (cheap: no imports but the
package's own version strings, so the console script answers before loading
the command line)."""

from __future__ import annotations

__all__ = ["claude_version_text", "version_text"]


def version_text() -> str:
    """What ``coterie --version`` prints."""
    from coterie import __claude_code_version__, __version__

    return f"coterie {__version__} (speaks Claude Code {__claude_code_version__}'s CLI)"


def claude_version_text() -> str:
    """What ``coterie -v`` prints: Claude Code's release first, as the SDKs parse it,
    then coterie's own version."""
    from coterie import __claude_code_version__, __version__

    return f"{__claude_code_version__} (coterie {__version__})"
