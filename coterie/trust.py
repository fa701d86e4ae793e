"""Workspace trust: which folders the user said coterie may take configuration from.

A checkout can ship ``.claude/settings.json`` and ``.claude/settings.local.json``;
until its folder is trusted, what those files would widen (allow rules,
``additionalDirectories``, ``defaultMode``, the sandbox's widening keys,
``autoMode``) is ignored, and the startup snapshot does not run git there
(:mod:`coterie.tools.permissions.settings`, :mod:`coterie.agent`). Deny and ask
rules always apply.

The answers live in the trust store, ``$COTERIE_HOME/trust.json`` (see
:mod:`coterie.home`), outside every workspace: a checkout or an agent working
in one cannot trust itself (the composition root protects the coterie home
from every tool). Each entry is a resolved folder and an answer, ``trusted``
or not. As in Claude Code, trusting a folder trusts its subfolders; unlike
Claude Code, an answer given for a subfolder (``coterie trust --revoke``, or
"no" at the first-run question) beats its parent's: the nearest folder with
an answer decides. The home directory and the folders above it cannot be
trusted, since that would trust every project on the machine (Claude Code
does not persist trust there either).

A store that cannot be read counts as trusting nothing (fail-closed); only
:func:`set_trust` and :func:`trust_entries` report it, as
:class:`TrustStoreError`.
"""

from __future__ import annotations

import contextlib
import datetime
import fcntl
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from coterie.errors import CoterieError
from coterie.fsutil import atomic_write
from coterie.home import coterie_home

if TYPE_CHECKING:
    from collections.abc import Iterator

__all__ = [
    "TRUST_FILE",
    "TrustEntry",
    "TrustRefused",
    "TrustStoreError",
    "can_trust",
    "is_trusted",
    "set_trust",
    "trust_entries",
    "trust_entry",
    "trust_file",
]

#: The trust store's file name under the coterie home.
TRUST_FILE = "trust.json"
_VERSION = 1


class TrustStoreError(CoterieError, ValueError):
    """The trust store exists but cannot be read or written (bad JSON, wrong shape, I/O)."""


class TrustRefused(CoterieError, ValueError):
    """A folder that may not be trusted as a whole: the home directory or one above it."""


@attrs.frozen
class TrustEntry:
    """One recorded answer: *folder* (resolved) is trusted, or the user said no."""

    folder: Path
    trusted: bool
    #: When the answer was given (ISO 8601, UTC).
    at: str

    def to_json(self) -> dict[str, Any]:
        """The entry as ``coterie trust --list --json`` prints it."""
        return {"folder": str(self.folder), "trusted": self.trusted, "at": self.at}


def trust_file() -> Path:
    """Where the trust store lives: ``$COTERIE_HOME/trust.json``."""
    return coterie_home() / TRUST_FILE


def _key(folder: Path | str) -> Path:
    # Symlinks resolved, so that a link to a trusted folder is that folder and a
    # link named like one is not.
    return Path(os.path.realpath(os.path.expanduser(folder)))


def _read() -> dict[str, TrustEntry]:
    """The store's entries by folder; raises TrustStoreError when it is unusable."""
    path = trust_file()
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise TrustStoreError(f"{path}: cannot be read ({exc})") from None
    folders = raw.get("folders") if isinstance(raw, dict) else None
    if not isinstance(folders, dict):
        raise TrustStoreError(f"{path}: expected an object with a 'folders' object")
    entries: dict[str, TrustEntry] = {}
    for folder, value in folders.items():
        if (
            not isinstance(value, dict)
            or not isinstance(value.get("trusted"), bool)
            or not os.path.isabs(folder)
        ):
            raise TrustStoreError(f"{path}: the entry for {folder!r} is malformed")
        entries[folder] = TrustEntry(Path(folder), value["trusted"], str(value.get("at", "")))
    return entries


def _write(entries: dict[str, TrustEntry]) -> None:
    body = {
        "version": _VERSION,
        "folders": {key: {"trusted": e.trusted, "at": e.at} for key, e in sorted(entries.items())},
    }
    atomic_write(trust_file(), (json.dumps(body, indent=2) + "\n").encode(), sync=True)


@contextlib.contextmanager
def _locked() -> Iterator[None]:
    """Hold the store's lock: two processes answering at once must not lose an answer."""
    home = coterie_home()
    home.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(home / (TRUST_FILE + ".lock"), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def trust_entry(folder: Path | str) -> TrustEntry | None:
    """The answer that decides *folder*: its own, else its nearest parent's; None if
    nobody was asked. A store that cannot be read decides nothing (None)."""
    try:
        entries = _read()
    except TrustStoreError:
        return None
    key = _key(folder)
    for candidate in (key, *key.parents):
        entry = entries.get(str(candidate))
        if entry is not None:
            return entry
    return None


def is_trusted(folder: Path | str) -> bool:
    """Whether *folder* is trusted (fail-closed: an unreadable store trusts nothing)."""
    if can_trust(folder) is not None:
        return False  # even if an old or hand-edited store says so
    entry = trust_entry(folder)
    return entry is not None and entry.trusted


def can_trust(folder: Path | str) -> str | None:
    """Why *folder* may not be trusted as a whole, or None if it may."""
    key = _key(folder)
    home = _key(Path.home())
    if key == home:
        return f"{key} is your home directory: trusting it would trust every folder in it"
    if key in home.parents:
        return f"{key} holds your home directory: trusting it would trust every folder in it"
    return None


def set_trust(folder: Path | str, trusted: bool) -> TrustEntry:
    """Record the answer for *folder* (resolved) and return it.

    ``trusted=False`` records a "no" (the first-run question is not asked
    again, and a trusted parent no longer covers *folder*). Raises
    :class:`TrustRefused` for the home directory and the folders above it,
    :class:`TrustStoreError` if the store cannot be read or written.
    """
    if trusted:
        reason = can_trust(folder)
        if reason is not None:
            raise TrustRefused(reason)
    key = _key(folder)
    at = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    entry = TrustEntry(key, trusted, at)
    with _locked():
        entries = _read()
        entries[str(key)] = entry
        try:
            _write(entries)
        except OSError as exc:
            raise TrustStoreError(f"{trust_file()}: cannot be written ({exc})") from None
    return entry


def trust_entries() -> list[TrustEntry]:
    """Every recorded answer, by folder; raises :class:`TrustStoreError` if unreadable."""
    return [entry for _, entry in sorted(_read().items())]
