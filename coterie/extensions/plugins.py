"""Claude Code plugins: a folder of commands, agents, skills, hooks and MCP servers.

A plugin is a folder, optionally with a manifest, ``.claude-plugin/plugin.json``:
``name`` (letters, digits, ``-`` and single ``_``; required when there is a
manifest), ``version``, ``description``, ``author`` and the component paths
``commands``, ``agents``, ``skills``, ``hooks`` and ``mcpServers``. Without a
manifest the plugin is named after its folder. Its parts, as Claude Code finds
them:

- ``commands/**/*.md`` (``/plugin:command``, ``/plugin:sub:command``),
  ``agents/*.md`` (``plugin:agent``) and ``skills/<folder>/SKILL.md``
  (``plugin:folder``); a manifest's ``commands`` or ``agents`` (a path or a
  list of paths, folders or files) replaces the default folder, its
  ``skills`` adds to it;
- ``hooks/hooks.json`` and the manifest's ``hooks`` (a file, or the hooks
  themselves), both;
- ``.mcp.json`` and the manifest's ``mcpServers`` (a file, or the servers
  themselves), both; a server is named ``plugin_<plugin>_<server>``, so that
  its tools are ``mcp__plugin_<plugin>_<server>__<tool>`` as in Claude Code;
- ``output-styles/*.md`` and the manifest's ``outputStyles`` (folders or
  files, added to it): styles named ``plugin:style``
  (:meth:`Plugins.style_files`, read as :mod:`coterie.agent.outputstyles` reads
  the user's).

``${CLAUDE_PLUGIN_ROOT}`` (the plugin's folder) and ``${CLAUDE_PLUGIN_DATA}``
(a folder of its own under the coterie home) are substituted in a command's
body and ``allowed-tools``, a skill's body, an agent's prompt and the MCP
servers' configuration, and set in the environment of its hooks and servers.

Which plugins load: each ``--plugin-dir DIR`` (the user's own act on the
command line, so the plugin's hooks and servers run, as the user's settings'
do); a DIR with none of a plugin's parts at its top is a folder of plugins,
each sub-folder with a manifest one of them. Then the installed plugins the
run's settings enable (:func:`coterie.extensions.installed.enabled_plugins`:
installing is the user's act too; a workspace's ``enabledPlugins`` counts only
once it is trusted), each with its marketplace as its source
(``name@marketplace``). Nothing else in a workspace adds a plugin. A plugin
whose manifest, hooks or servers cannot be used is left out whole (a hook that
did not load could be the guard of the rest), with one line naming the file and
the problem; the other plugins still load.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import attrs

from coterie.errors import CoterieError
from coterie.home import coterie_home

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from coterie.hooks import HookConfig
    from coterie.mcpclient import ServerConfig

__all__ = ["MANIFEST", "Plugin", "PluginError", "Plugins", "load_plugins", "plugin_dir"]

#: Where a plugin's manifest is, in its folder.
MANIFEST: Final = Path(".claude-plugin") / "plugin.json"
#: What marks a folder as one plugin (else it is a folder of plugins).
_MARKS: Final = (
    ".claude-plugin",
    "commands",
    "agents",
    "skills",
    "hooks",
    ".mcp.json",
    "output-styles",
)
#: A plugin's name: it prefixes its commands (``name:command``) and its servers'
#: names (``plugin_<name>_<server>``, which must stay an MCP server's name).
NAME: Final = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]|_(?=[A-Za-z0-9-])){0,63}$")
_PATH_KEYS: Final = ("commands", "agents", "skills", "outputStyles")


class PluginError(CoterieError, ValueError):
    """A plugin cannot be used (its message names the file and the problem), or a
    ``--plugin-dir`` names no directory."""


@attrs.frozen
class Plugin:
    """One plugin, read whole: where its parts are and what its hooks and servers are."""

    name: str
    #: Its folder, resolved.
    root: Path
    #: Its hooks, each handler with :attr:`env` set.
    hooks: HookConfig
    servers: tuple[ServerConfig, ...] = ()
    #: Where it came from: ``inline`` (``--plugin-dir``) or its marketplace, as
    #: Claude Code says it.
    source: str = "inline"
    version: str | None = None
    description: str = ""
    #: The command folders (or files) and the agents', the skill folders.
    commands: tuple[Path, ...] = ()
    agents: tuple[Path, ...] = ()
    skills: tuple[Path, ...] = ()
    #: The output style folders (or files).
    output_styles: tuple[Path, ...] = ()

    @property
    def env(self) -> dict[str, str]:
        """``CLAUDE_PLUGIN_ROOT`` and ``CLAUDE_PLUGIN_DATA``."""
        return plugin_env(self.name, self.root, self.source)

    def substitute(self, text: str) -> str:
        """*text* with ``${CLAUDE_PLUGIN_ROOT}`` and ``${CLAUDE_PLUGIN_DATA}`` replaced."""
        for name, value in self.env.items():
            text = text.replace(f"${{{name}}}", value)
        return text

    def to_json(self) -> dict[str, Any]:
        """How ``system/init``'s ``plugins`` lists it: ``name``, ``path``, ``source``
        (``name@inline``) and ``version`` when it has one."""
        data: dict[str, Any] = {
            "name": self.name,
            "path": str(self.root),
            "source": f"{self.name}@{self.source}",
        }
        if self.version is not None:
            data["version"] = self.version
        return data


@attrs.frozen
class Plugins:
    """The plugins of a run, and what the user must be told about the others."""

    plugins: tuple[Plugin, ...] = ()
    notices: tuple[str, ...] = ()

    @property
    def hooks(self) -> HookConfig:
        """Every plugin's hooks, in the order the plugins were given."""
        from coterie.hooks import HookConfig

        return HookConfig.merge(p.hooks for p in self.plugins)

    @property
    def servers(self) -> tuple[ServerConfig, ...]:
        """Every plugin's MCP servers."""
        return tuple(s for p in self.plugins for s in p.servers)

    def to_json(self) -> list[dict[str, Any]]:
        """``system/init``'s ``plugins``."""
        return [p.to_json() for p in self.plugins]

    def style_files(self) -> list[tuple[str, Path, str | None]]:
        """Every plugin's output style files as
        :func:`~coterie.agent.outputstyles.styles_from_files` takes them: source
        ``plugin:<name>``, path, text (None: not UTF-8); each file once."""
        found: list[tuple[str, Path, str | None]] = []
        seen: set[Path] = set()
        for plugin in self.plugins:
            for place in plugin.output_styles:
                paths = sorted(place.glob("*.md")) if place.is_dir() else [place]
                for path in paths:
                    if path in seen or not path.is_file():
                        continue
                    seen.add(path)
                    try:
                        text: str | None = path.read_text(encoding="utf-8")
                    except (OSError, UnicodeDecodeError):
                        text = None
                    found.append((f"plugin:{plugin.name}", path, text))
        return found


def plugin_env(name: str, root: Path, source: str = "inline") -> dict[str, str]:
    """A plugin's variables: ``CLAUDE_PLUGIN_ROOT``, its folder, and
    ``CLAUDE_PLUGIN_DATA``, a folder of its own under the coterie home for state
    that outlives a run."""
    data = coterie_home() / "plugins" / "data" / f"{name}-{source}"
    return {"CLAUDE_PLUGIN_ROOT": str(root), "CLAUDE_PLUGIN_DATA": str(data)}


def plugin_dir(text: str) -> str:
    """A ``--plugin-dir`` value as recorded: the directory's absolute path (whether it
    is one is :func:`load_plugins`' to say, as the run starts: a command line parses
    the same wherever it is read)."""
    if not text.strip():
        raise PluginError("--plugin-dir needs a directory")
    return str(Path(text).expanduser().resolve())


def load_plugins(
    dirs: Iterable[Path | str],
    *,
    env: Mapping[str, str] | None = None,
    installed: Iterable[tuple[str, Path]] = (),
    said: Iterable[str] = (),
) -> Plugins:
    """The plugins of the ``--plugin-dir`` *dirs*, in order, then the *installed*
    ones (``name@marketplace`` and folder: those the settings enable, as
    :func:`coterie.extensions.installed.run_plugins` finds them), with *said*, the
    lines about those, among the notices; *env* is what ``${VAR}`` in their
    servers' configuration reads (default: the process environment). A directory
    that is gone is a :class:`PluginError`."""
    environ = dict(os.environ if env is None else env)
    found: list[tuple[Path, bool, str]] = []
    notices: list[str] = []
    for given in dirs:
        root = Path(given)
        if not root.is_dir():
            raise PluginError(f"--plugin-dir {given}: no such directory")
        found.extend((folder, named, "inline") for folder, named in _roots(root.resolve(), notices))
    notices.extend(said)
    found.extend((path, False, pid.rpartition("@")[2]) for pid, path in installed)
    plugins: list[Plugin] = []
    for folder, named, source in found:
        try:
            plugin = read_plugin(folder, environ, name=named, source=source)
        except PluginError as exc:
            notices.append(f"plugin not loaded: {exc}")
            continue
        if any(p.name == plugin.name for p in plugins):
            notices.append(f"plugin not loaded: {folder}: another plugin is named {plugin.name!r}")
            continue
        plugins.append(plugin)
    return Plugins(tuple(plugins), tuple(notices))


def _roots(root: Path, notices: list[str]) -> list[tuple[Path, bool]]:
    """The plugin folders *root* names: itself, or each sub-folder with a manifest
    (with whether it must have one)."""
    if any((root / mark).exists() for mark in _MARKS):
        return [(root, False)]
    found = [(sub, True) for sub in sorted(root.iterdir()) if (sub / MANIFEST).is_file()]
    if not found:
        notices.append(f"--plugin-dir {root}: no plugin there (no {MANIFEST} in it or below)")
    return found


def read_plugin(
    root: Path, env: Mapping[str, str], *, name: bool = False, source: str = "inline"
) -> Plugin:
    """The plugin in the folder *root* (a :class:`PluginError` naming the file and the
    problem); *name*: it must have a manifest; *source*: where it came from
    (``inline``, or the marketplace it was installed from)."""
    manifest = _manifest(root / MANIFEST, required=name)
    plugin_name = manifest.get("name", root.name)
    where = root / MANIFEST if manifest else root
    if not isinstance(plugin_name, str) or not NAME.match(plugin_name):
        raise PluginError(
            f"{where}: the plugin name {plugin_name!r} must be letters, digits, '-' and"
            " single '_' (at most 64)"
        )
    version, description = manifest.get("version"), manifest.get("description", "")
    for key, value in (("version", version), ("description", description)):
        if value is not None and not isinstance(value, str):
            raise PluginError(f"{root / MANIFEST}: {key} must be a string")
    # What the manifest names is checked before anything is read from it.
    paths = {key: _paths(root, manifest.get(key), key) for key in _PATH_KEYS}
    own = plugin_env(plugin_name, root, source)
    with contextlib.suppress(OSError):  # a hook that writes there finds it
        Path(own["CLAUDE_PLUGIN_DATA"]).mkdir(parents=True, exist_ok=True)
    return Plugin(
        plugin_name,
        root,
        _hooks(root, own, manifest.get("hooks")),
        _servers(plugin_name, root, own, manifest.get("mcpServers"), env),
        source=source,
        version=version,
        description=description or "",
        commands=paths["commands"] or (root / "commands",),
        agents=paths["agents"] or (root / "agents",),
        skills=(root / "skills", *paths["skills"]),
        output_styles=(root / "output-styles", *paths["outputStyles"]),
    )


def _manifest(path: Path, *, required: bool) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        if required:
            raise PluginError(f"{path}: no manifest") from None
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise PluginError(f"{path}: cannot be read ({exc})") from None
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise PluginError(f"{path}: not valid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise PluginError(f"{path}: expected a JSON object")
    if "name" not in data:
        raise PluginError(f"{path}: the manifest has no name")
    return data


def _inside(root: Path, value: Any, key: str) -> Path:
    """The path *value* of the manifest's *key*, which must stay in the plugin's folder."""
    if not isinstance(value, str) or not value.strip():
        raise PluginError(f"{root / MANIFEST}: {key} must be a path or a list of paths")
    path = (root / value).resolve()
    if Path(value).is_absolute() or not path.is_relative_to(root):
        raise PluginError(f"{root / MANIFEST}: {key}: {value!r} is not inside the plugin")
    return path


def _paths(root: Path, value: Any, key: str) -> tuple[Path, ...]:
    if value is None:
        return ()
    values = value if isinstance(value, list) else [value]
    return tuple(_inside(root, v, key) for v in values)


def _hooks(root: Path, own: dict[str, str], inline: Any) -> HookConfig:
    """The plugin's ``hooks/hooks.json`` and its manifest's ``hooks`` (a file or the
    hooks themselves), each handler with the plugin's variables *own* in its
    environment."""
    from coterie.hooks import HookConfig, HooksConfigError
    from coterie.hooks.config import parse_hooks_file

    configs: list[HookConfig] = []
    default = root / "hooks" / "hooks.json"
    sources: list[tuple[Path, Any]] = [(default, None)] if default.is_file() else []
    if isinstance(inline, dict):
        sources.append((root / MANIFEST, inline))
    elif inline is not None:
        path = _inside(root, inline, "hooks")
        if path != default:
            sources.append((path, None))
    for path, data in sources:
        try:
            configs.append(parse_hooks_file(path, data))
        except HooksConfigError as exc:
            raise PluginError(str(exc)) from None
    return HookConfig.merge(configs).with_env(own)


def _servers(
    name: str, root: Path, own: dict[str, str], inline: Any, env: Mapping[str, str]
) -> tuple[ServerConfig, ...]:
    """The plugin's ``.mcp.json`` and its manifest's ``mcpServers`` (a file or the
    servers themselves), expanded with its variables *own* over *env* and named
    after the plugin *name*."""
    from coterie.mcpclient import HttpServer, McpConfigError, StdioServer, parse_servers

    default = root / ".mcp.json"
    sources: list[tuple[str, Any]] = []
    if default.is_file():
        sources.append((str(default), _json(default)))
    if isinstance(inline, dict):
        sources.append((str(root / MANIFEST), inline))
    elif inline is not None:
        path = _inside(root, inline, "mcpServers")
        if path != default:
            sources.append((str(path), _json(path)))
    found: list[ServerConfig] = []
    for source, data in sources:
        # Claude Code takes the servers' object with or without its mcpServers key.
        wrapped = data if isinstance(data, dict) and "mcpServers" in data else {"mcpServers": data}
        try:
            servers = parse_servers(wrapped, source, {**env, **own})
        except McpConfigError as exc:
            raise PluginError(str(exc)) from None
        for server in servers:
            named = f"plugin_{name}_{server.name}"
            if isinstance(server, StdioServer):  # its own variables, as a hook gets them
                found.append(attrs.evolve(server, name=named, env=(*server.env, *own.items())))
            elif isinstance(server, HttpServer):
                found.append(attrs.evolve(server, name=named))
            else:  # only the program driving the run serves one, and names it itself
                raise PluginError(f"{source}: server {server.name!r}: a plugin has no 'sdk' server")
    return tuple(found)


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise PluginError(f"{path}: cannot be read as JSON ({exc})") from None
