"""What a project configures that acts in later runs, gathered from the loaders.

Each loader says which of a workspace's files it reads (settings files, the
skills, agents and commands of ``.claude/``, the servers of ``.mcp.json``);
:func:`project_items` asks each of them, so that ``coterie trust`` records,
and the first-run questions ask about, exactly what a run loads. It sits
above :mod:`coterie.trust` (the store, which knows no loader) and the
loaders (which ask the store what was approved).
"""

from __future__ import annotations

import os
from pathlib import Path

from coterie.extensions.loading import extension_items
from coterie.mcpclient.config import server_items
from coterie.tools.permissions.settings import settings_items

__all__ = ["project_items"]


def project_items(workspace: Path | str) -> dict[str, str]:
    """What a run in *workspace* loads from it, each item's digest by its path there
    (``.claude/settings.json``, ``.claude/skills/x/SKILL.md``, ``.mcp.json#server``).
    Only the loaders' folders are read, never the whole tree."""
    where = Path(os.path.realpath(os.path.expanduser(workspace)))
    return {**settings_items(where), **extension_items(where), **server_items(where)}
