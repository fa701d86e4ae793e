"""The permission modes, in Claude Code's names (the first is the default).

Declared here alone, in a module that imports nothing of coterie, so that the
command line's parser offers them as ``--permission-mode`` choices without
loading the permission machinery (:mod:`coterie.tools.permissions.settings`
reads them from here).
"""

from __future__ import annotations

from typing import Final, Literal, get_args

__all__ = ["MODES", "Mode"]

Mode = Literal["default", "acceptEdits", "plan", "auto", "dontAsk", "bypassPermissions"]
MODES: Final[tuple[str, ...]] = get_args(Mode)
