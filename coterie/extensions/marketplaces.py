"""Plugin marketplaces: the catalogues plugins are installed from, and the user's list of them.

A marketplace is a folder with ``.claude-plugin/marketplace.json``: ``name``
(letters, digits, ``.``, ``_``, ``-``), ``owner`` (an object with a ``name``),
``plugins`` (a list of entries) and, optionally, ``metadata`` (``description``,
``version``, ``pluginRoot``: the folder a bare entry source is in). An entry has
a ``name``, a ``source`` and, optionally, ``version`` and ``description``; its
source is a path in the marketplace (``./plugins/x``, which must stay inside
it) or a git repository of its own: ``{"source": "url", "url": ..., "ref"?,
"sha"?}`` or ``{"source": "github", "repo": "owner/name", "ref"?, "sha"?}``. An
entry that cannot be used is left out with one line naming the file and the
problem; the others stay.

Where a marketplace comes from (:class:`Source`, the ``source`` object Claude
Code keeps in ``known_marketplaces.json`` and ``extraKnownMarketplaces``): a
local folder (``directory``, read where it is), a ``marketplace.json`` file
(``file``), a git repository (``git``: a URL, ``file://`` included, with an
optional ``#ref``) or a GitHub repository (``github``: ``owner/name``). A git
marketplace is cloned under ``plugins/marketplaces/<name>``. The user's list,
``plugins/known_marketplaces.json``, is kept in the Claude configuration
folder as Claude Code keeps it (:func:`coterie.home.claude_dir`).

Git runs as the runtime runs it (:func:`coterie.workspaces.git_in_group`:
none of a repository's programs), each command in a recorded process group
(:func:`coterie.processes.open_group`). A marketplace's files are data: adding
one runs nothing of it.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import os
import re
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import attrs

from coterie.errors import CoterieError
from coterie.home import claude_dir

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = [
    "CATALOGUE",
    "Catalogue",
    "Entry",
    "Known",
    "MarketplaceError",
    "Source",
    "git_run",
    "known_marketplaces",
    "parse_source",
    "plugins_dir",
    "read_catalogue",
    "save_known",
    "write_json",
]

#: Where a marketplace's catalogue is, in its folder.
CATALOGUE: Final = Path(".claude-plugin") / "marketplace.json"
#: A marketplace's name: it is the ``@marketplace`` of its plugins' ids and a folder name.
NAME: Final = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
#: Names that say where a plugin came from without a marketplace.
RESERVED: Final = frozenset({"inline", "builtin", "skills-dir"})
_GITHUB: Final = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9_.-]+$")
_GIT_TIMEOUT: Final = 300.0
#: What a git repository's address may be: a URL of a transport git is allowed to
#: use (:data:`coterie.workspaces.gitsafe.SAFE_PROTOCOLS`), or ``user@host:path``.
_GIT_URL: Final = re.compile(r"^((https?|ssh|git|file)://|[\w.-]+@[\w.-]+:)")


class MarketplaceError(CoterieError, ValueError):
    """A marketplace or one of its entries cannot be used, or a source names none (the
    message names the file or the value and the problem)."""


def plugins_dir() -> Path:
    """Claude Code's plugin folder: ``plugins`` in the Claude configuration folder."""
    return claude_dir() / "plugins"


def now() -> str:
    """The time as Claude Code's files write it (UTC, milliseconds, ``Z``)."""
    moment = datetime.datetime.now(datetime.UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


@attrs.frozen
class Source:
    """Where a marketplace comes from: *kind* ``directory``, ``file``, ``git`` or
    ``github``; *location* its path, URL or ``owner/name``; *ref* a branch or tag."""

    kind: str
    location: str
    ref: str | None = None

    @property
    def is_git(self) -> bool:
        return self.kind in ("git", "github")

    @property
    def url(self) -> str:
        """The repository to clone (git sources)."""
        if self.kind == "github":
            return f"https://github.com/{self.location}.git"
        return self.location

    def to_json(self) -> dict[str, str]:
        """The ``source`` object, as Claude Code writes it."""
        key = {"directory": "path", "file": "path", "git": "url", "github": "repo"}[self.kind]
        data = {"source": self.kind, key: self.location}
        if self.ref is not None:
            data["ref"] = self.ref
        return data

    def __str__(self) -> str:
        return self.location + (f"#{self.ref}" if self.ref else "")

    @classmethod
    def from_json(cls, data: Any, where: str) -> Source:
        """The source object *data* (from the file *where*)."""
        kinds = {"directory": "path", "file": "path", "git": "url", "github": "repo"}
        kind = data.get("source") if isinstance(data, dict) else None
        key = kinds.get(kind) if isinstance(kind, str) else None
        if key is None or not isinstance(data.get(key), str) or not data[key]:
            raise MarketplaceError(
                f"{where}: a marketplace source must be {{'source': one of {', '.join(kinds)},"
                " with its path, url or repo}"
            )
        ref = data.get("ref")
        return cls(str(kind), data[key], ref if isinstance(ref, str) and ref else None)


def parse_source(text: str, cwd: Path) -> Source:
    """What ``marketplace add SOURCE`` names: a git URL (``https://…``, ``ssh://…``,
    ``git@host:…``, ``file://…``, or one ending ``.git``; ``#ref`` picks a branch or
    tag), a local folder or ``marketplace.json`` (resolved from *cwd*), else a GitHub
    ``owner/name``."""
    text = text.strip()
    if not text:
        raise MarketplaceError("a marketplace source is needed: a folder, a git URL or owner/repo")
    if _GIT_URL.match(text):
        url, _, ref = text.partition("#")
        if url.startswith("http") and url.endswith(".json"):
            raise MarketplaceError(f"{text}: a marketplace.json by URL is not supported")
        return Source("git", url, ref or None)
    path = (cwd / Path(text).expanduser()).resolve()
    if path.is_dir():
        return Source("directory", str(path))
    if path.is_file() and path.suffix == ".json":
        return Source("file", str(path))
    if _GITHUB.match(text.partition("#")[0]) and not text.startswith((".", "/", "~")):
        repo, _, ref = text.partition("#")
        return Source("github", repo, ref or None)
    raise MarketplaceError(f"{text}: no such folder or marketplace.json, and not a git URL")


@attrs.frozen
class Entry:
    """One plugin of a catalogue: its *source* is a folder in the marketplace or a git
    :class:`Source` of its own (with a pinned *sha*, if the entry pins one)."""

    name: str
    source: Path | Source
    version: str | None = None
    description: str = ""
    sha: str | None = None


@attrs.frozen
class Catalogue:
    """A marketplace's ``marketplace.json``, read: *root* is the marketplace's folder."""

    name: str
    root: Path
    plugins: tuple[Entry, ...] = ()
    description: str = ""
    #: One line per entry left out.
    notices: tuple[str, ...] = ()

    def entry(self, name: str) -> Entry | None:
        return next((e for e in self.plugins if e.name == name), None)


def read_catalogue(where: Path) -> Catalogue:
    """The catalogue of the marketplace folder (or ``marketplace.json`` file) *where*."""
    path = where if where.is_file() else where / CATALOGUE
    root = path.parent.parent if path.parent.name == ".claude-plugin" else path.parent
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise MarketplaceError(f"{where}: no {CATALOGUE} there") from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise MarketplaceError(f"{path}: cannot be read as JSON ({exc})") from None
    if not isinstance(data, dict):
        raise MarketplaceError(f"{path}: expected a JSON object")
    name = data.get("name")
    if not isinstance(name, str) or not NAME.match(name) or name in RESERVED:
        raise MarketplaceError(
            f"{path}: the marketplace name {name!r} must be letters, digits, '.', '_' and '-'"
            f" (at most 64, not {', '.join(sorted(RESERVED))})"
        )
    owner = data.get("owner")
    if not isinstance(owner, dict) or not isinstance(owner.get("name"), str):
        raise MarketplaceError(f"{path}: owner must be an object with a name")
    entries = data.get("plugins")
    if not isinstance(entries, list):
        raise MarketplaceError(f"{path}: plugins must be a list")
    metadata: dict[str, Any] = data["metadata"] if isinstance(data.get("metadata"), dict) else {}
    base = _inside(root, metadata.get("pluginRoot") or ".", path, "metadata.pluginRoot")
    plugins: list[Entry] = []
    notices: list[str] = []
    for index, item in enumerate(entries):
        try:
            entry = _entry(item, root, base, path)
        except MarketplaceError as exc:
            notices.append(f"plugin entry {index} not available: {exc}")
            continue
        if any(e.name == entry.name for e in plugins):
            notices.append(f"{path}: plugin {entry.name!r} is listed twice; the first is used")
            continue
        plugins.append(entry)
    description = data.get("description", metadata.get("description", ""))
    return Catalogue(name, root, tuple(plugins), str(description or ""), tuple(notices))


def _inside(root: Path, value: Any, path: Path, key: str) -> Path:
    if not isinstance(value, str) or not value.strip():
        raise MarketplaceError(f"{path}: {key} must be a path")
    found = (root / value).resolve()
    if Path(value).is_absolute() or not found.is_relative_to(root.resolve()):
        raise MarketplaceError(f"{path}: {key}: {value!r} is not inside the marketplace")
    return found


def _entry(item: Any, root: Path, base: Path, path: Path) -> Entry:
    from coterie.extensions.plugins import NAME as PLUGIN_NAME

    if not isinstance(item, dict):
        raise MarketplaceError(f"{path}: a plugin entry must be an object")
    name = item.get("name")
    if not isinstance(name, str) or not PLUGIN_NAME.match(name):
        raise MarketplaceError(f"{path}: plugin name {name!r} must be letters, digits, '-', '_'")
    version, description = item.get("version"), item.get("description", "")
    if version is not None and not isinstance(version, str):
        raise MarketplaceError(f"{path}: plugin {name!r}: version must be a string")
    raw = item.get("source")
    source: Path | Source
    sha = None
    if isinstance(raw, str):
        start = root if raw.startswith(("./", "../")) else base
        source = _inside(start, raw, path, f"plugin {name!r}: source")
    elif isinstance(raw, dict) and raw.get("source") in ("url", "git", "github"):
        kind = "github" if raw["source"] == "github" else "git"
        source = Source.from_json({**raw, "source": kind}, f"{path}: plugin {name!r}")
        sha = raw.get("sha")
        if kind == "git" and not _GIT_URL.match(source.location):
            raise MarketplaceError(f"{path}: plugin {name!r}: {source.location!r} is not a git URL")
        if sha is not None and not (isinstance(sha, str) and re.fullmatch(r"[0-9a-f]{7,40}", sha)):
            raise MarketplaceError(f"{path}: plugin {name!r}: sha must be a commit's hex digits")
        if source.ref is not None and source.ref.startswith("-"):
            raise MarketplaceError(f"{path}: plugin {name!r}: ref {source.ref!r} is not a ref")
    else:
        raise MarketplaceError(
            f"{path}: plugin {name!r}: source must be a path in the marketplace or a git"
            " repository ({'source': 'url' or 'github', ...})"
        )
    return Entry(name, source, version, str(description or ""), sha)


@attrs.frozen
class Known:
    """A marketplace the user added: where it comes from and where its files are."""

    name: str
    source: Source
    location: Path
    updated: str = ""

    def to_json(self) -> dict[str, Any]:
        """Its value in ``known_marketplaces.json``."""
        return {
            "source": self.source.to_json(),
            "installLocation": str(self.location),
            "lastUpdated": self.updated,
        }


def known_file() -> Path:
    return plugins_dir() / "known_marketplaces.json"


def known_marketplaces() -> dict[str, Known]:
    """The user's marketplaces (none if the file is missing); a damaged file is a
    :class:`MarketplaceError`, never overwritten."""
    data = read_json(known_file(), {})
    if not isinstance(data, dict):
        raise MarketplaceError(f"{known_file()}: expected a JSON object")
    found: dict[str, Known] = {}
    for name, value in data.items():
        if not isinstance(value, dict) or not isinstance(value.get("installLocation"), str):
            raise MarketplaceError(f"{known_file()}: {name!r} has no installLocation")
        source = Source.from_json(value.get("source"), str(known_file()))
        found[name] = Known(
            name, source, Path(value["installLocation"]), str(value.get("lastUpdated", ""))
        )
    return found


def save_known(known: Mapping[str, Known]) -> None:
    write_json(known_file(), {name: k.to_json() for name, k in known.items()})


def read_json(path: Path, default: Any) -> Any:
    """*path*'s JSON value, *default* when it does not exist; damage is a
    :class:`MarketplaceError` naming the file."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return default
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise MarketplaceError(f"{path}: cannot be read as JSON ({exc})") from None


def write_json(path: Path, data: Any) -> None:
    """Write *data* to *path* whole or not at all (a temporary file renamed over it)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(json.dumps(data, indent=2) + "\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


async def git_run(cwd: Path, *args: str, records: Path) -> str:
    """``git ARGS`` in *cwd* as the runtime runs git (:mod:`coterie.workspaces.git`), in a
    process group recorded in *records*; its output, or
    :class:`~coterie.workspaces.GitError` with git's words."""
    import trio

    from coterie.workspaces import git_in_group

    with trio.fail_after(_GIT_TIMEOUT):
        return await git_in_group(cwd, *args, records=records)
