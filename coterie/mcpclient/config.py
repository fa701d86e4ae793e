"""MCP server configuration in Claude Code's format, and where it is read from.

A file holds ``{"mcpServers": {NAME: SERVER}}``, a server being
``{"type": "stdio", "command", "args"?, "env"?}`` (``type`` may be left out
when ``command`` is given), ``{"type": "http", "url", "headers"?}``
(``streamable-http`` is accepted as a spelling of ``http``) or ``{"type":
"sdk", "name"}``, a server that lives in the program driving the run (an
Agent SDK host's in-process server, spoken to over the control channel).
In ``command``, ``args``, ``env``, ``url`` and ``headers`` values, ``${VAR}`` is the
environment variable VAR and ``${VAR:-default}`` VAR or, when it is unset or
empty, *default*; a ``${VAR}`` that is unset is an error, as in Claude Code.

Where servers come from (:func:`load_servers`), later sources overriding
earlier ones by name: the user's ``~/.claude.json`` (its ``mcpServers``, then
the ``projects[WORKSPACE].mcpServers`` of the local scope), the workspace's
``.mcp.json`` only when the workspace is trusted (else it is reported once as
ignored), then each ``--mcp-config FILE``. Only a host can serve an ``sdk``
server, and it names its servers in the ``--mcp-config`` JSON text it
passes: one in a file is skipped, with one notice. Parsing is pure: a bad
file is one :class:`McpConfigError` naming the file and the problem.

Of a trusted workspace's ``.mcp.json``, only the servers the user approved
start: each as it was when the folder was trusted, or approved since
(:mod:`coterie.trust`, by :func:`~coterie.trust.server_digest`). A server
that is new or changed since is not started, not even parsed: its
``${VAR}`` are never expanded (a header of ``${ANTHROPIC_API_KEY}`` sent to
a server nobody approved would hand the key out); one line names it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from coterie.errors import CoterieError
from coterie.trust import Approval, approval, server_digest

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

__all__ = [
    "HttpServer",
    "McpConfigError",
    "SdkServer",
    "ServerConfig",
    "StdioServer",
    "config_type",
    "expand",
    "load_servers",
    "parse_servers",
    "server_items",
]

#: A server's name: what ``mcp__<server>__<tool>`` is made of (no ``__`` inside,
#: so the tool's name says unambiguously which server it belongs to).
SERVER_NAME = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]|_(?=[A-Za-z0-9-]))*$")
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


class McpConfigError(CoterieError, ValueError):
    """An MCP configuration file is malformed; the message names the file and the problem."""


@attrs.frozen
class StdioServer:
    """A server run as a child process, spoken to over its stdin and stdout."""

    name: str
    command: str
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    #: The file the server was configured in.
    source: str = ""


@attrs.frozen
class HttpServer:
    """A server reached over MCP's streamable HTTP transport."""

    name: str
    url: str
    headers: tuple[tuple[str, str], ...] = ()
    source: str = ""


@attrs.frozen
class SdkServer:
    """A server the host program serves in its own process (``"type": "sdk"``): its
    messages go over the control channel (:mod:`coterie.mcpclient.hosted`)."""

    name: str
    source: str = ""


ServerConfig = StdioServer | HttpServer | SdkServer


def config_type(config: ServerConfig) -> str:
    """The ``type`` *config* is written with: ``stdio``, ``http`` or ``sdk``."""
    if isinstance(config, StdioServer):
        return "stdio"
    return "http" if isinstance(config, HttpServer) else "sdk"


#: Where a host's ``--mcp-config`` JSON text is said to come from.
GIVEN_TEXT = "--mcp-config"


def expand(text: str, env: Mapping[str, str]) -> str:
    """*text* with ``${VAR}`` and ``${VAR:-default}`` replaced from *env*.

    Raises :class:`KeyError` naming a variable that is unset and has no default.
    """

    def one(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        value = env.get(name)
        if default is not None:
            return value if value else default
        if value is None:
            raise KeyError(name)
        return value

    return _VAR.sub(one, text)


def parse_servers(data: Any, source: str, env: Mapping[str, str]) -> list[ServerConfig]:
    """The servers of one file's JSON *data* (``{"mcpServers": {...}}``), expanded
    with *env*; :class:`McpConfigError` naming *source* if anything is wrong."""
    if not isinstance(data, dict):
        raise McpConfigError(f"{source}: expected a JSON object with an mcpServers key")
    servers = data.get("mcpServers", {})
    if not isinstance(servers, dict):
        raise McpConfigError(f"{source}: mcpServers must be an object of named servers")
    return [_server(name, entry, source, env) for name, entry in servers.items()]


def _server(name: str, entry: Any, source: str, env: Mapping[str, str]) -> ServerConfig:
    where = f"{source}: server {name!r}"
    if not SERVER_NAME.match(name) or len(name) > 64:
        raise McpConfigError(
            f"{where}: a name is letters, digits, '-' and single '_' inside (at most 64)"
        )
    if not isinstance(entry, dict):
        raise McpConfigError(f"{where} must be an object")
    kind = entry.get("type", "stdio" if "command" in entry else None)
    try:
        if kind == "stdio":
            command = _text(entry.get("command"), f"{where}: command")
            args = _texts(entry.get("args", []), f"{where}: args")
            pairs = _pairs(entry.get("env", {}), f"{where}: env")
            return StdioServer(
                name,
                expand(command, env),
                tuple(expand(a, env) for a in args),
                tuple((k, expand(v, env)) for k, v in pairs),
                source,
            )
        if kind in ("http", "streamable-http"):
            url = expand(_text(entry.get("url"), f"{where}: url"), env)
            if not url.startswith(("http://", "https://")):
                raise McpConfigError(f"{where}: url must start with http:// or https://")
            pairs = _pairs(entry.get("headers", {}), f"{where}: headers")
            return HttpServer(name, url, tuple((k, expand(v, env)) for k, v in pairs), source)
        if kind == "sdk":
            return SdkServer(name, source)
    except KeyError as exc:
        raise McpConfigError(
            f"{where}: environment variable {exc.args[0]} is not set"
            " (write ${VAR:-default} for a default)"
        ) from None
    raise McpConfigError(
        f"{where}: type must be 'stdio' or 'http' ('sdk' from a host), got {kind!r}"
    )


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str) or not value:
        raise McpConfigError(f"{what} must be a non-empty string")
    return value


def _texts(value: Any, what: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise McpConfigError(f"{what} must be a list of strings")
    return value


def _pairs(value: Any, what: str) -> list[tuple[str, str]]:
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise McpConfigError(f"{what} must be an object of strings")
    return list(value.items())


def read_file(path: Path, env: Mapping[str, str], *, required: bool) -> list[ServerConfig]:
    """The servers configured in *path* (none if it is missing and not *required*)."""
    data = _read_json(path, required=required)
    return [] if data is None else parse_servers(data, str(path), env)


def _read_json(path: Path, *, required: bool) -> Any:
    """*path*'s JSON value (None if it is missing and not *required*)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        if required:
            raise McpConfigError(f"{path}: no such MCP config file") from None
        return None
    except OSError as exc:
        raise McpConfigError(f"{path}: cannot be read: {exc.strerror}") from None
    try:
        return json.loads(text)
    except ValueError as exc:
        raise McpConfigError(f"{path}: not valid JSON: {exc}") from None


#: The workspace's own server file, and how the trust record names a server of it.
PROJECT_FILE = ".mcp.json"


def _item(name: str) -> str:
    return f"{PROJECT_FILE}#{name}"


def _raw_servers(data: Any) -> dict[str, Any]:
    servers = data.get("mcpServers", {}) if isinstance(data, dict) else None
    return servers if isinstance(servers, dict) else {}


def server_items(workdir: Path) -> dict[str, str]:
    """The servers of *workdir*'s ``.mcp.json`` as the trust record keeps them (a
    file that cannot be read records none)."""
    try:
        data = _read_json(workdir / PROJECT_FILE, required=False)
    except McpConfigError:
        return {}
    return {_item(n): server_digest(n, entry) for n, entry in _raw_servers(data).items()}


def _project_servers(
    workdir: Path, approved: Approval, env: Mapping[str, str]
) -> tuple[list[ServerConfig], list[str]]:
    """The approved servers of the workspace's ``.mcp.json`` (expanded: only those),
    and one notice naming the others, which do not start."""
    path = workdir / PROJECT_FILE
    data = _read_json(path, required=False)
    if data is None:
        return [], []
    if not isinstance(data, dict) or not isinstance(data.get("mcpServers", {}), dict):
        parse_servers(data, str(path), env)  # raises, naming the problem
    chosen: dict[str, Any] = {}
    left: list[str] = []
    for name, entry in _raw_servers(data).items():
        if approved.approves(_item(name), server_digest(name, entry)):
            chosen[name] = entry
        else:
            left.append(name)
    servers = parse_servers({"mcpServers": chosen}, str(path), env)
    if not left:
        return servers, []
    what = f"{PROJECT_FILE} server{'s' if len(left) > 1 else ''} {', '.join(left)}"
    return servers, [approved.notice(what, "not started")]


def _user_servers(home: Path, workdir: Path, env: Mapping[str, str]) -> list[ServerConfig]:
    """The user's servers in ``~/.claude.json``, then the workspace's local-scope ones."""
    path = home / ".claude.json"
    found = read_file(path, env, required=False)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return found
    project = data.get("projects", {}).get(str(workdir)) if isinstance(data, dict) else None
    if isinstance(project, dict) and "mcpServers" in project:
        found += parse_servers(project, f"{path} (projects[{str(workdir)!r}])", env)
    return found


def load_servers(
    workdir: Path,
    *,
    trusted: bool,
    home: Path,
    files: Iterable[Path | str] = (),
    env: Mapping[str, str],
    approved: Approval | None = None,
    strict: bool = False,
) -> tuple[tuple[ServerConfig, ...], tuple[str, ...]]:
    """Every server the run gets, by name (the last source wins), and the notices to
    show once (a ``.mcp.json`` ignored in an untrusted workspace, its servers new or
    changed since it was trusted). *approved* is what the user approved of the
    workspace (default: what the trust store says). *files* are ``--mcp-config``
    values: a file, or JSON text (starting with ``{``); with *strict*
    (``--strict-mcp-config``) they are the only source."""
    chosen: dict[str, ServerConfig] = {}
    notices: list[str] = []
    if not strict:
        chosen, notices = _file_servers(workdir, trusted=trusted, home=home, env=env,
                                        approved=approved)  # fmt: skip
    for value in files:
        for server in _given(value, env):
            chosen[server.name] = server
    filed = [s.name for s in chosen.values() if isinstance(s, SdkServer) and s.source != GIVEN_TEXT]
    if filed:
        notices.append(
            f"MCP server{'s' if len(filed) > 1 else ''} {', '.join(filed)} of type 'sdk' skipped:"
            " such a server lives in the program driving the run, which names it in the"
            " --mcp-config JSON text it passes, never in a file"
        )
    kept = (s for s in chosen.values() if not (isinstance(s, SdkServer) and s.name in filed))
    return tuple(kept), tuple(notices)


def _given(value: Path | str, env: Mapping[str, str]) -> list[ServerConfig]:
    """The servers of one ``--mcp-config``: JSON text, or a file that must exist."""
    if isinstance(value, str) and value.lstrip().startswith("{"):
        try:
            data = json.loads(value)
        except ValueError as exc:
            raise McpConfigError(f"--mcp-config: not valid JSON: {exc}") from None
        return parse_servers(data, GIVEN_TEXT, env)
    return read_file(Path(value), env, required=True)


def _file_servers(
    workdir: Path,
    *,
    trusted: bool,
    home: Path,
    env: Mapping[str, str],
    approved: Approval | None,
) -> tuple[dict[str, ServerConfig], list[str]]:
    """The servers of the user's files and (trusted, approved) the workspace's."""
    chosen: dict[str, ServerConfig] = {}
    notices: list[str] = []
    for server in _user_servers(home, workdir, env):
        chosen[server.name] = server
    project = workdir / PROJECT_FILE
    if trusted:
        servers, said = _project_servers(workdir, approved or approval(workdir), env)
        chosen.update((server.name, server) for server in servers)
        notices += said
    elif project.is_file():
        notices.append(
            f"{workdir} is not trusted, so its .mcp.json servers were ignored;"
            f" `coterie trust {workdir}` trusts it"
        )
    return chosen, notices
