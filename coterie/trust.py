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

**Trust records what was trusted.** Trusting a folder records a digest of
each piece of configuration a run there loads (given by
:func:`coterie.projectconfig.project_items`): the
project's settings files, its skills, agents and commands, and each server of
its ``.mcp.json`` (name and configuration, hashed canonically:
:func:`server_digest`). A run loads only what the record approves
(:class:`Approval`): a file or server that is new or changed since is what a
model or a repository could have written after the user looked, so headless
it is ignored (one line says so and how to approve it: ``coterie trust DIR``
again re-records), and an interactive run asks about it once (:func:`approve`
adds the answer to the record). An entry written before records existed
approves nothing (fail-closed) until the folder is trusted again. A run in a
subfolder trusted through its parent finds its items in the parent's record,
under the subfolder's path relative to the parent.

A store that cannot be read counts as trusting nothing (fail-closed); only
:func:`set_trust` and :func:`trust_entries` report it, as
:class:`TrustStoreError`.
"""

from __future__ import annotations

import contextlib
import datetime
import fcntl
import hashlib
import json
import os
import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from coterie.errors import CoterieError
from coterie.fsutil import atomic_write
from coterie.home import coterie_home

if TYPE_CHECKING:
    from collections.abc import Collection, Iterator, Mapping

__all__ = [
    "TRUST_FILE",
    "Approval",
    "TrustEntry",
    "TrustRefused",
    "TrustStoreError",
    "approval",
    "approve",
    "can_trust",
    "file_digest",
    "is_trusted",
    "named_notice",
    "run_approval",
    "server_digest",
    "set_trust",
    "trust_entries",
    "trust_entry",
    "trust_file",
]

#: The trust store's file name under the coterie home.
TRUST_FILE = "trust.json"
_VERSION = 2  # 2: trusted entries carry a record; entries of 1 are still read


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
    #: What was trusted: per workspace (its path relative to *folder*, ``.`` for
    #: the folder itself), the digest of each item by its path in that workspace.
    #: None for an entry from before records (it approves nothing).
    record: Mapping[str, Mapping[str, str]] | None = attrs.field(default=None, eq=False)

    @property
    def recorded(self) -> int | None:
        """How many items the record holds (None: no record)."""
        if self.record is None:
            return None
        return sum(not d.startswith(_DECLINED) for v in self.record.values() for d in v.values())

    def to_json(self) -> dict[str, Any]:
        """The entry as ``coterie trust --list --json`` prints it."""
        return {
            "folder": str(self.folder),
            "trusted": self.trusted,
            "at": self.at,
            "recorded": self.recorded,
        }


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
        record = value.get("record")
        if record is not None and not _is_record(record):
            raise TrustStoreError(f"{path}: the record of {folder!r} is malformed")
        entries[folder] = TrustEntry(
            Path(folder), value["trusted"], str(value.get("at", "")), record
        )
    return entries


def _is_record(record: object) -> bool:
    return isinstance(record, dict) and all(
        isinstance(items, dict) and all(isinstance(d, str) for d in items.values())
        for items in record.values()
    )


def _write(entries: dict[str, TrustEntry]) -> None:
    def one(entry: TrustEntry) -> dict[str, Any]:
        body: dict[str, Any] = {"trusted": entry.trusted, "at": entry.at}
        if entry.record is not None:
            body["record"] = {w: dict(sorted(i.items())) for w, i in sorted(entry.record.items())}
        return body

    body = {
        "version": _VERSION,
        "folders": {key: one(e) for key, e in sorted(entries.items())},
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


def set_trust(
    folder: Path | str, trusted: bool, *, items: Mapping[str, str] | None = None
) -> TrustEntry:
    """Record the answer for *folder* (resolved) and return it.

    ``trusted=True`` records what is trusted: *items*, the digests of what a run
    in *folder* loads now (:func:`coterie.projectconfig.project_items`; None
    records nothing, so nothing of the folder is approved). What the record held
    for its subfolders (approved in runs there) is kept; its own items are replaced.
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
    with _locked():
        entries = _read()
        old = entries.get(str(key))
        record = None
        if trusted:
            record = dict(old.record or {}) if old is not None and old.trusted else {}
            record["."] = dict(items or {})
        entry = TrustEntry(key, trusted, at, record)
        entries[str(key)] = entry
        _save(entries)
    return entry


def _save(entries: dict[str, TrustEntry]) -> None:
    try:
        _write(entries)
    except OSError as exc:
        raise TrustStoreError(f"{trust_file()}: cannot be written ({exc})") from None


def trust_entries() -> list[TrustEntry]:
    """Every recorded answer, by folder; raises :class:`TrustStoreError` if unreadable."""
    return [entry for _, entry in sorted(_read().items())]


# -- the record -----------------------------------------------------------------


def file_digest(data: bytes) -> str:
    """The digest a record keeps for an item's bytes."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


def server_digest(name: str, config: object) -> str:
    """The digest of an MCP server as its file configures it (its JSON value, before
    any ``${VAR}`` is expanded), canonical: key order and spacing do not count, any
    other change (command, args, url, env, headers, type, the name) does."""
    text = json.dumps([name, config], sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return file_digest(text.encode("utf-8", "surrogatepass"))


@attrs.frozen
class Approval:
    """What the user approved of the configuration a run in *workspace* loads."""

    workspace: Path
    #: The trusted folder whose record decides (None: the workspace is not trusted).
    folder: Path | None = None
    #: The approved digests by item (None: the entry predates records: nothing is).
    items: Mapping[str, str] | None = attrs.field(default=None, eq=False)
    #: Everything is approved, for this run only: the person named the workspace's
    #: files on the command line (:func:`run_approval`), so no record is asked.
    named: bool = False

    @property
    def trusted(self) -> bool:
        return self.folder is not None

    def approves(self, item: str, digest: str) -> bool:
        """Whether *item* is approved as it is now (with this *digest*)."""
        return self.named or (self.items is not None and self.items.get(item) == digest)

    def declines(self, item: str, digest: str) -> bool:
        """Whether the user said no to *item* as it is now (not asked again)."""
        return self.items is not None and self.items.get(item) == _DECLINED + digest

    def notice(self, what: str, effect: str) -> str:
        """One line: *what* (``.mcp.json servers a, b``) is new or changed since the
        user trusted the folder, so it was *effect* (``not started``); and how to
        approve it."""
        how = f"`coterie trust {shlex.quote(str(self.workspace))}`"
        if self.items is None:
            return (
                f"{self.workspace}: {what} {effect}: the folder was trusted before coterie"
                f" recorded what it trusts; {how} again records what is there now"
            )
        return (
            f"{self.workspace}: {what} {effect}: new or changed since the folder was"
            f" trusted; {how} approves what is there now"
        )


#: How the record keeps a no: never equal to a digest, so never approved.
_DECLINED = "declined:"


def _workspace_key(entry: TrustEntry, workspace: Path) -> str:
    # Items of a subfolder trusted through its parent: keyed by its path there.
    return os.path.relpath(workspace, entry.folder)


def approval(workspace: Path | str) -> Approval:
    """What the user approved for a run in *workspace* (nothing when it is not trusted)."""
    where = _key(workspace)
    entry = trust_entry(where)
    if entry is None or not entry.trusted or can_trust(where) is not None:
        return Approval(where)
    if entry.record is None:
        return Approval(where, entry.folder)
    items = entry.record.get(_workspace_key(entry, where), {})
    return Approval(where, entry.folder, dict(items))


def run_approval(workspace: Path | str, sources: Collection[str] | None) -> Approval:
    """What a run in *workspace* loads of the workspace's configuration.

    *sources* are the run's ``--setting-sources`` (None: not given). Naming
    ``project`` or ``local`` there is the person's word, on the command line, that
    this run reads the workspace's files: it approves all of them for this run,
    recording nothing (the SDKs pass it when their program asks for the project's
    settings). Otherwise, and where the store says the folder is not to be trusted
    (a recorded "no", the home directory and the folders above it), the store's
    :func:`approval` decides.
    """
    where = _key(workspace)
    if sources is None or {"project", "local"}.isdisjoint(sources) or can_trust(where):
        return approval(where)
    entry = trust_entry(where)
    if entry is not None and not entry.trusted:
        return approval(where)
    return Approval(where, where, named=True)


def named_notice(approved: Approval) -> str | None:
    """One line when the workspace's files load because the command line named them
    although the store does not trust the folder (None otherwise)."""
    if not approved.named or approval(approved.workspace).trusted:
        return None
    return (
        f"{approved.workspace} is not trusted; its settings, .claude files and .mcp.json"
        " load for this run because --setting-sources names them;"
        f" `coterie trust {shlex.quote(str(approved.workspace))}` trusts it for good"
    )


def approve(
    workspace: Path | str,
    items: Mapping[str, str],
    *,
    replacing: Mapping[str, str | None] | None = None,
    declined: bool = False,
) -> bool:
    """Add *items* (digests by item) to the record that decides *workspace*: the
    user approved them (*declined*: said no, so that a terminal does not ask
    again about them as they are; they stay out). An item in *replacing* is
    approved only if what it replaces (its digest then, None: it did not exist)
    was approved: coterie writing the user's answer into a file approves no
    change made before. Whether the record changed (never for a folder that is
    not trusted)."""
    where = _key(workspace)
    with _locked():
        entries = _read()
        entry = next((entries[str(c)] for c in (where, *where.parents) if str(c) in entries), None)
        if entry is None or not entry.trusted:
            return False
        if can_trust(where) is not None:
            return False
        key = _workspace_key(entry, where)
        record = dict(entry.record or {})  # an entry from before records gets one
        mine = dict(record.get(key, {}))
        replacing = replacing or {}
        chosen = {
            item: _DECLINED + digest if declined else digest
            for item, digest in items.items()
            if item not in replacing or (old := replacing[item]) is None or mine.get(item) == old
        }
        if not chosen:
            return False
        mine.update(chosen)
        entries[str(entry.folder)] = attrs.evolve(entry, record={**record, key: mine})
        _save(entries)
    return True
