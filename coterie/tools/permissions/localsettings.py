"""Writing an allow rule into the project's ``.claude/settings.local.json``.

What "Yes, and don't ask again" at a permission prompt keeps for the next
runs, where Claude Code keeps it. The file is merged, never clobbered: its
other keys and rules stay as they were, a rule already there is not added
twice, and a file that is not a JSON object (or whose ``permissions.allow``
is not a list of strings) is left alone and reported. The new file replaces
the old one atomically (temporary file, fsync, rename, fsync of the folder),
so a crash leaves the old file or the new one, never half of either.

In a trusted folder the trust record (:mod:`coterie.trust`) then approves the
new file, so that the user's own answer is not taken for a change made
behind their back; only if the file was approved as it was before (or did
not exist): a change someone else made to it stays unapproved.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from typing import TYPE_CHECKING

from coterie.tools.permissions.settings import SettingsError
from coterie.trust import TrustStoreError, approve, file_digest

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["add_local_allow_rule", "local_settings_path"]


def local_settings_path(project: Path) -> Path:
    """The project's personal settings file (Claude Code's, not checked in)."""
    return project / ".claude" / "settings.local.json"


def add_local_allow_rule(project: Path, rule: str) -> Path:
    """Add *rule* to ``permissions.allow`` of *project*'s local settings; the file.

    Raises :class:`~coterie.tools.permissions.settings.SettingsError` if the
    file exists but cannot be merged into (it is then left untouched), and
    ``OSError`` if it cannot be written.
    """
    path = local_settings_path(project)
    raw: dict[str, object] = {}
    before: str | None = None  # the digest of the file as it was (None: there was none)
    if path.exists():
        data = path.read_bytes()
        before = file_digest(data)
        try:
            loaded = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise SettingsError(
                f"{path}: not valid JSON, so the rule was not saved ({exc})"
            ) from None
        if not isinstance(loaded, dict):
            raise SettingsError(f"{path}: the top level is not an object; the rule was not saved")
        raw = loaded
    permissions = raw.setdefault("permissions", {})
    if not isinstance(permissions, dict):
        raise SettingsError(f"{path}: 'permissions' is not an object; the rule was not saved")
    allow = permissions.setdefault("allow", [])
    if not isinstance(allow, list) or not all(isinstance(r, str) for r in allow):
        raise SettingsError(f"{path}: permissions.allow is not a list of rules; not saved")
    if rule not in allow:
        allow.append(rule)
    text = json.dumps(raw, indent=2, ensure_ascii=False) + "\n"
    _replace(path, text)
    item = path.relative_to(project).as_posix()
    # The rule holds for this run anyway; a store that cannot be written only
    # means the next run sees the file as changed (and says so).
    with contextlib.suppress(TrustStoreError, OSError):
        approve(project, {item: file_digest(text.encode())}, replacing={item: before})
    return path


def _replace(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=".settings.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
    folder = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(folder)
    finally:
        os.close(folder)
