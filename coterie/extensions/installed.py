"""Installed plugins: installing one from a marketplace, and which ones a run loads.

Kept as Claude Code keeps them, in the Claude configuration folder's
``plugins/`` (:func:`coterie.extensions.marketplaces.plugins_dir`): each
install is a copy of the plugin at one version, ``cache/<marketplace>/<plugin>/<version>``
(a git plugin at the commit it was cloned at), recorded in
``installed_plugins.json`` (``{"version": 2, "plugins": {"name@marketplace":
[{"scope", "installPath", "version", "installedAt", "lastUpdated", ...}]}}``).
Whether an installed plugin is on is a setting: ``enabledPlugins``
(``{"name@marketplace": true}``) in the user's, the project's or the local
settings file (the *scope*; the most local file that names a plugin decides).

Installing is the user's act on the command line, and only that makes a
plugin's files code. A run loads (:func:`enabled_plugins`) the installed plugins
its settings enable: the user's file always; the project's and the local file's
only when the workspace is trusted and the file is as the user trusted it. An
untrusted workspace's ``enabledPlugins`` and ``extraKnownMarketplaces`` load
and add nothing, and one line says so. A plugin enabled but not installed is
one line too: nothing is installed behind the user's back.

An install that fails leaves nothing: the copy is made in a temporary folder,
checked (its manifest, hooks and servers, as a run reads them), renamed into
place, and removed again if the records cannot be written.
"""

from __future__ import annotations

import contextlib
import shlex
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import attrs

from coterie.extensions.marketplaces import (
    Entry,
    MarketplaceError,
    known_marketplaces,
    now,
    plugins_dir,
    read_catalogue,
    read_json,
    write_json,
)
from coterie.home import claude_dir

if TYPE_CHECKING:
    from collections.abc import Iterable

    from coterie.extensions.plugins import Plugins
    from coterie.tools.permissions.settings import PermissionSettings

__all__ = [
    "SCOPES",
    "Enabled",
    "Install",
    "edit_settings",
    "enabled_plugins",
    "install",
    "installed",
    "run_plugins",
    "setting_of",
    "settings_path",
    "split_id",
    "uninstall",
]

#: Where ``enabledPlugins`` is written: the settings file of each scope.
SCOPES: Final = ("user", "project", "local")
_VERSION: Final = 2
_SAFE: Final = str.maketrans({c: "-" for c in "/\\:\0 "})


def split_id(plugin_id: str) -> tuple[str, str]:
    """``name@marketplace`` as (name, marketplace); :class:`MarketplaceError` if not one."""
    name, at, market = plugin_id.rpartition("@")
    if not at or not name or not market:
        raise MarketplaceError(f"{plugin_id!r}: a plugin is named NAME@MARKETPLACE")
    return name, market


def settings_path(scope: str, workdir: Path) -> Path:
    """The settings file of *scope* (``user``, ``project``, ``local``)."""
    if scope == "user":
        return claude_dir() / "settings.json"
    return workdir / ".claude" / ("settings.json" if scope == "project" else "settings.local.json")


def edit_settings(path: Path, key: str, name: str, value: Any) -> None:
    """Set ``KEY.NAME`` in the settings file *path* to *value* (None: remove it), keeping
    every other key; a file that is not a JSON object is left alone (an error)."""
    data = read_json(path, {})
    if not isinstance(data, dict):
        raise MarketplaceError(f"{path}: expected a JSON object")
    section = data.get(key, {})
    if not isinstance(section, dict):
        raise MarketplaceError(f"{path}: {key} must be an object")
    if value is None:
        if name not in section:
            return
        section.pop(name)
    else:
        section[name] = value
    if section:
        data[key] = section
    else:
        data.pop(key, None)
    write_json(path, data)


@attrs.frozen
class Install:
    """One install of a plugin: its id, *scope*, folder and version."""

    id: str
    scope: str
    path: Path
    version: str
    installed_at: str
    updated: str
    #: The workspace of a project or local install.
    project: str | None = None
    sha: str | None = None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "scope": self.scope,
            "installPath": str(self.path),
            "version": self.version,
            "installedAt": self.installed_at,
            "lastUpdated": self.updated,
        }
        if self.project is not None:
            data["projectPath"] = self.project
        if self.sha is not None:
            data["gitCommitSha"] = self.sha
        return data


def installed_file() -> Path:
    return plugins_dir() / "installed_plugins.json"


def installed() -> dict[str, list[Install]]:
    """Every install by plugin id (none if the file is missing)."""
    path = installed_file()
    data = read_json(path, {"version": _VERSION, "plugins": {}})
    plugins = data.get("plugins") if isinstance(data, dict) else None
    if not isinstance(plugins, dict):
        raise MarketplaceError(f"{path}: expected {{'version': 2, 'plugins': {{...}}}}")
    found: dict[str, list[Install]] = {}
    for plugin_id, items in plugins.items():
        for item in items if isinstance(items, list) else [items]:
            if not isinstance(item, dict) or not isinstance(item.get("installPath"), str):
                raise MarketplaceError(f"{path}: {plugin_id!r} has an install with no installPath")
            text = {k: v for k, v in item.items() if isinstance(v, str)}
            fields = ("scope", "version", "installedAt", "lastUpdated")
            scope, version, at, updated = (text.get(k, "") for k in fields)
            found.setdefault(plugin_id, []).append(
                Install(plugin_id, scope or "user", Path(item["installPath"]), version or "unknown",
                        at, updated, text.get("projectPath"), text.get("gitCommitSha"))
            )  # fmt: skip
    return found


def save_installed(found: dict[str, list[Install]]) -> None:
    plugins = {pid: [i.to_json() for i in items] for pid, items in found.items() if items}
    write_json(installed_file(), {"version": _VERSION, "plugins": plugins})


def resolve_id(given: str) -> str:
    """*given* as ``name@marketplace``: a bare name is looked up in every marketplace
    the user added, and must be in exactly one."""
    if "@" in given:
        split_id(given)
        return given
    known = known_marketplaces()
    having = [m for m, k in known.items() if _has(k.location, given)]
    if len(having) != 1:
        where = f"in {', '.join(having)}" if having else "in no marketplace you added"
        raise MarketplaceError(f"plugin {given!r} is {where}: name it NAME@MARKETPLACE")
    return f"{given}@{having[0]}"


def _has(location: Path, name: str) -> bool:
    try:
        return read_catalogue(location).entry(name) is not None
    except MarketplaceError:
        return False


async def install(given: str, scope: str, workdir: Path, records: Path) -> Install:
    """Install the plugin *given* (``name@marketplace`` or a bare name) at *scope* and
    enable it there; what was installed."""
    plugin_id = resolve_id(given)
    name, market = split_id(plugin_id)
    known = known_marketplaces().get(market)
    if known is None:
        raise MarketplaceError(
            f"marketplace {market!r} is not known:"
            " add it with `coterie plugin marketplace add SOURCE`"
        )
    entry = read_catalogue(known.location).entry(name)
    if entry is None:
        raise MarketplaceError(
            f"plugin {name!r} is not in marketplace {market!r}"
            f" (`coterie plugin marketplace update {market}` reads it again)"
        )
    project = None if scope == "user" else str(workdir)
    found = installed()
    if any(i.scope == scope and i.project == project for i in found.get(plugin_id, [])):
        raise MarketplaceError(f"{plugin_id} is already installed ({scope} scope)")
    parent = plugins_dir() / "cache" / market / name
    parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=parent, prefix=".install-"))
    final: Path | None = None
    try:
        sha = await _fetch(entry, tmp / "plugin", market, records)
        version = _version(entry, tmp / "plugin", sha)
        final = parent / version
        if final.exists():
            shutil.rmtree(final)
        (tmp / "plugin").rename(final)
        stamp = now()
        done = Install(plugin_id, scope, final, version, stamp, stamp, project, sha)
        edit_settings(settings_path(scope, workdir), "enabledPlugins", plugin_id, True)
        found.setdefault(plugin_id, []).append(done)
        save_installed(found)
    except BaseException:
        if final is not None and not any(i.path == final for v in installed().values() for i in v):
            shutil.rmtree(final, ignore_errors=True)
        raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return done


async def _fetch(entry: Entry, dest: Path, market: str, records: Path) -> str | None:
    """Copy *entry*'s plugin to *dest*, checked as a run would read it; the commit of a
    git plugin."""
    from coterie.extensions.marketplaces import Source, git_run
    from coterie.extensions.plugins import PluginError, read_plugin

    sha = None
    if isinstance(entry.source, Source):
        branch = ("--branch", entry.source.ref) if entry.source.ref else ()
        depth = () if entry.sha else ("--depth", "1")
        await git_run(dest.parent, "clone", *depth, *branch, "--", entry.source.url, str(dest),
                      records=records)  # fmt: skip
        if entry.sha:
            await git_run(dest, "checkout", "--detach", entry.sha, records=records)
        sha = (await git_run(dest, "rev-parse", "HEAD", records=records)).strip()
        shutil.rmtree(dest / ".git", ignore_errors=True)
    else:
        if not entry.source.is_dir():
            raise MarketplaceError(f"plugin {entry.name!r}: {entry.source} is not a folder")
        shutil.copytree(entry.source, dest, symlinks=True, ignore=shutil.ignore_patterns(".git"))
    try:
        read_plugin(dest, {}, source=market)
    except PluginError as exc:
        raise MarketplaceError(f"plugin {entry.name!r} not installed: {exc}") from None
    return sha


def _version(entry: Entry, root: Path, sha: str | None) -> str:
    from coterie.extensions.plugins import MANIFEST

    version = entry.version
    if version is None:
        manifest = read_json(root / MANIFEST, {})
        version = manifest.get("version") if isinstance(manifest, dict) else None
    if not isinstance(version, str) or not version.strip(".").strip():
        version = sha[:12] if sha else "unknown"
    return version.translate(_SAFE)


def uninstall(given: str, scope: str, workdir: Path, *, keep_data: bool = False) -> Install:
    """Remove the install of *given* at *scope* and its ``enabledPlugins`` entry there."""
    plugin_id = resolve_id(given)
    found = installed()
    project = None if scope == "user" else str(workdir)
    items = found.get(plugin_id, [])
    gone = next((i for i in items if i.scope == scope and i.project == project), None)
    if gone is None:
        raise MarketplaceError(f"{plugin_id} is not installed ({scope} scope)")
    found[plugin_id] = [i for i in items if i is not gone]
    edit_settings(settings_path(scope, workdir), "enabledPlugins", plugin_id, None)
    save_installed(found)
    if not any(i.path == gone.path for v in found.values() for i in v):
        shutil.rmtree(gone.path, ignore_errors=True)
    if not keep_data and not found[plugin_id]:
        from coterie.extensions.plugins import plugin_env

        name, market = split_id(plugin_id)
        data = Path(plugin_env(name, gone.path, market)["CLAUDE_PLUGIN_DATA"])
        shutil.rmtree(data, ignore_errors=True)
    return gone


def set_enabled(given: str, scope: str | None, workdir: Path, *, on: bool) -> str:
    """Enable or disable *given* in the settings of *scope* (None: the most local file
    that names it, else the scope it was installed at); the scope written."""
    plugin_id = resolve_id(given)
    items = installed().get(plugin_id, [])
    if not items:
        raise MarketplaceError(
            f"{plugin_id} is not installed: `coterie plugin install {plugin_id}`"
        )
    states = {s: setting_of(settings_path(s, workdir), plugin_id) for s in SCOPES}
    if scope is None:
        named = [s for s in SCOPES if states[s] is not None]
        scope = named[-1] if named else items[0].scope
    current = next((states[s] for s in reversed(SCOPES) if states[s] is not None), None)
    if current is on:
        raise MarketplaceError(f"{plugin_id} is already {'enabled' if on else 'disabled'}")
    edit_settings(settings_path(scope, workdir), "enabledPlugins", plugin_id, on)
    return scope


def setting_of(path: Path, plugin_id: str) -> bool | None:
    """What the settings file *path* says of *plugin_id* (None: nothing)."""
    data = read_json(path, {})
    section = data.get("enabledPlugins") if isinstance(data, dict) else None
    value = section.get(plugin_id) if isinstance(section, dict) else None
    return value if isinstance(value, bool) else None


@attrs.frozen
class Enabled:
    """The installed plugins a run's settings enable (id and folder), and what the user
    must be told about the others."""

    plugins: tuple[tuple[str, Path], ...] = ()
    notices: tuple[str, ...] = ()


def enabled_plugins(settings: PermissionSettings) -> Enabled:
    """The installed plugins *settings*' files enable (see the module docstring)."""
    import json

    from coterie.trust import file_digest

    user, workspace = _real(claude_dir() / "settings.json"), settings.workspace
    merged: dict[str, Any] = {}
    ignored: list[str] = []
    for path in settings.files:
        try:
            raw = path.read_bytes()
            data = json.loads(raw.decode("utf-8"))
        except (OSError, UnicodeDecodeError, ValueError):
            continue  # the settings loader says what is wrong with it
        named, suggested = (
            _object(data, key) for key in ("enabledPlugins", "extraKnownMarketplaces")
        )
        workspaces = () if workspace is None else (_real(workspace / ".claude"),)
        mine = _real(path) == user or _real(path).parent not in workspaces
        approval = settings.approval
        if mine or (
            settings.trusted
            and (approval is None or approval.approves(f".claude/{path.name}", file_digest(raw)))
        ):
            merged.update(named)
        else:
            ignored.extend([*named, *(f"marketplace {m}" for m in suggested)])
    notices: list[str] = []
    if ignored:
        notices.append(
            f"{workspace} is not trusted (or its settings changed since), so its"
            f" enabledPlugins/extraKnownMarketplaces ({', '.join(dict.fromkeys(ignored))})"
            f" were not loaded; `coterie trust {shlex.quote(str(workspace))}` trusts it"
        )
    on = [pid for pid, value in merged.items() if value is True]
    try:
        found = installed() if on else {}
    except MarketplaceError as exc:
        return Enabled((), (*notices, f"installed plugins not loaded: {exc}"))
    plugins: list[tuple[str, Path]] = []
    for pid in on:
        folder = next((i.path for i in found.get(pid, []) if i.path.is_dir()), None)
        if folder is None:
            notices.append(
                f"plugin {pid} is enabled but not installed: `coterie plugin install {pid}`"
            )
        else:
            plugins.append((pid, folder))
    return Enabled(tuple(plugins), tuple(notices))


def _object(data: Any, key: str) -> dict[str, Any]:
    value = data.get(key) if isinstance(data, dict) else None
    return value if isinstance(value, dict) else {}


def _real(path: Path) -> Path:
    with contextlib.suppress(OSError):
        return path.resolve()
    return path


def run_plugins(dirs: Iterable[Path | str], settings: PermissionSettings) -> Plugins:
    """A run's plugins: those of ``--plugin-dir`` *dirs*, then the installed ones its
    *settings* enable, with one line about each one left out."""
    from coterie.extensions.plugins import load_plugins

    enabled = enabled_plugins(settings)
    return load_plugins(dirs, installed=enabled.plugins, said=enabled.notices)
