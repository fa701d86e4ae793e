"""The OS sandbox for Bash on Linux: bubblewrap, with Claude Code's ``sandbox.*`` settings.

Owns :class:`SandboxSettings` (the ``sandbox`` object of the settings files,
Claude Code's keys, checked), :class:`Bubblewrap` (the ``ShellSandbox`` that
turns ``bash -c COMMAND`` into a ``bwrap`` command line) and :func:`probe`.
It decides nothing about permissions (the policy does; it may use
:func:`is_excluded`, since nothing here imports the policy): it limits what
a running command can touch. Inside, for the command and all it starts: the
file system is read-only but for the workspace, the additional directories,
``filesystem.allowWrite`` and a private ``/tmp`` (new for every call); in
those, configuration that acts later stays read-only at any depth (``.claude/``,
``.mcp.json``, a ``.git`` file, ``.git/config`` and ``hooks``: found by one walk
per call, which also refuses to run when such a file has a hard link), and so
do shell start-up files; credential folders, the coterie home, the run's protected
paths, ``filesystem.denyRead`` and what Read deny rules cover are hidden;
``/run`` (docker's, D-Bus's and agents' sockets, which a read-only mount does
not stop) is empty, ``/proc`` belongs to a new PID namespace, ``/dev`` is
minimal; the network is a new empty namespace unless ``network.allowedDomains``
holds ``"*"`` (bubblewrap cannot filter by domain; see ``SandboxSettings.notes``).

It stays in the caller's process group for the group kill (no ``--new-session``: it
has no terminal to abuse); ``--die-with-parent`` and the PID namespace get the rest.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from coterie.errors import CoterieError
from coterie.home import coterie_home
from coterie.tools.permissions.places import ACTS_LATER

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence

    from coterie.tools._base import ToolContext

__all__ = [
    "CREDENTIAL_PATHS", "Bubblewrap", "NetworkSettings", "SandboxError", "SandboxSettings",
    "SandboxSettingsError", "is_excluded", "probe",
]  # fmt: skip

#: Below the home directory: what holds keys, tokens and passwords.
CREDENTIAL_PATHS = (
    ".ssh", ".aws", ".gnupg", ".config/gh", ".config/gcloud", ".azure", ".kube",
    ".docker", ".netrc", ".git-credentials", ".npmrc", ".pypirc", ".password-store",
    ".local/share/keyrings", ".claude/.credentials.json", ".claude.json",
)  # fmt: skip
#: Files a shell or git runs or reads for configuration: read-only wherever they are writable.
_STARTUP_FILES = (
    ".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".zshrc",
    ".zshenv", ".zprofile", ".zlogin", ".gitconfig", ".config/git",
)  # fmt: skip
#: How many entries of the writable trees are looked at to find Read-denied files.
SCAN_LIMIT = 100_000


class SandboxSettingsError(CoterieError, ValueError):
    """The ``sandbox`` settings have a wrong shape; the message names the key."""


class SandboxError(CoterieError, RuntimeError):
    """A command cannot be put in the sandbox; it must then not run at all."""


def _bad(where: str, key: str, want: str, value: object) -> SandboxSettingsError:
    return SandboxSettingsError(f"{where}{key}: expected {want}, got {value!r}")


def _flag(raw: dict[str, Any], key: str, where: str, default: bool) -> bool:
    value = raw.get(key, default)
    if not isinstance(value, bool):
        raise _bad(where, key, "a boolean", value)
    return value


def _strings(raw: dict[str, Any], key: str, where: str) -> tuple[str, ...]:
    value = raw.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise _bad(where, key, "a list of non-empty strings", value)
    return tuple(value)


def _port(raw: dict[str, Any], key: str, where: str) -> int | None:
    value = raw.get(key)
    # bool is an int in Python, and never a port number.
    if value is not None and (type(value) is not int or not 1 <= value <= 65535):
        raise _bad(where, key, "a port (1-65535)", value)
    return value


def _section(raw: dict[str, Any], key: str) -> dict[str, Any]:
    value = raw.get(key, {})
    if not isinstance(value, dict):
        raise _bad("sandbox.", key, "an object", value)
    return value


@attrs.frozen
class NetworkSettings:
    """``sandbox.network``: which network a sandboxed command may use."""

    allowed_domains: tuple[str, ...] = ()
    denied_domains: tuple[str, ...] = ()
    allow_unix_sockets: tuple[str, ...] = ()
    allow_all_unix_sockets: bool = False
    allow_local_binding: bool = False
    http_proxy_port: int | None = None
    socks_proxy_port: int | None = None

    @property
    def open(self) -> bool:
        """Shares the host's network: ``*`` allowed, no ``deniedDomains`` to filter."""
        return "*" in self.allowed_domains and not self.denied_domains


@attrs.frozen
class SandboxSettings:
    """Claude Code's ``sandbox`` settings, as coterie applies them (``from_json``)."""

    enabled: bool = False
    auto_allow_bash: bool = True
    excluded_commands: tuple[str, ...] = ()
    allow_unsandboxed_commands: bool = True
    fail_if_unavailable: bool = False
    network: NetworkSettings = NetworkSettings()
    allow_write: tuple[str, ...] = ()
    deny_write: tuple[str, ...] = ()
    deny_read: tuple[str, ...] = ()

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> SandboxSettings:
        """Parse the merged ``sandbox`` object (unknown keys ignored, as Claude Code does);
        :class:`SandboxSettingsError` names a key whose value has a wrong shape."""
        if not isinstance(raw, dict):
            raise SandboxSettingsError(f"sandbox: expected an object, got {raw!r}")
        net = _section(raw, "network")
        fs = _section(raw, "filesystem")
        n, f = "sandbox.network.", "sandbox.filesystem."
        return cls(
            enabled=_flag(raw, "enabled", "sandbox.", False),
            auto_allow_bash=_flag(raw, "autoAllowBashIfSandboxed", "sandbox.", True),
            excluded_commands=_strings(raw, "excludedCommands", "sandbox."),
            allow_unsandboxed_commands=_flag(raw, "allowUnsandboxedCommands", "sandbox.", True),
            fail_if_unavailable=_flag(raw, "failIfUnavailable", "sandbox.", False),
            network=NetworkSettings(
                allowed_domains=_strings(net, "allowedDomains", n),
                denied_domains=_strings(net, "deniedDomains", n),
                allow_unix_sockets=_strings(net, "allowUnixSockets", n),
                allow_all_unix_sockets=_flag(net, "allowAllUnixSockets", n, False),
                allow_local_binding=_flag(net, "allowLocalBinding", n, False),
                http_proxy_port=_port(net, "httpProxyPort", n),
                socks_proxy_port=_port(net, "socksProxyPort", n),
            ),
            allow_write=_strings(fs, "allowWrite", f),
            deny_write=_strings(fs, "denyWrite", f),
            deny_read=_strings(fs, "denyRead", f),
        )

    @property
    def notes(self) -> tuple[str, ...]:
        """A line for each setting coterie cannot honour as Claude Code would, saying the
        stricter thing it does instead; for the runtime to print once."""
        net, off = self.network, "the network stays off for sandboxed commands"
        out, domains = [], ", ".join(d for d in net.allowed_domains if d != "*")
        if domains and not net.open:
            out.append(
                "sandbox.network.allowedDomains: bubblewrap cannot filter by domain, so"
                f' {off} ({domains} included); add "*" to allow every domain.'
            )
        if net.denied_domains and "*" in net.allowed_domains:
            out.append(f"sandbox.network.deniedDomains: no domain filter, so {off}.")
        if net.http_proxy_port or net.socks_proxy_port:
            out.append(f"sandbox.network.httpProxyPort/socksProxyPort: not supported; {off}.")
        if net.allow_unix_sockets and not net.allow_all_unix_sockets:
            out.append("sandbox.network.allowUnixSockets: not supported; /run stays hidden.")
        return tuple(out)

    def excludes(self, command: str) -> bool:
        """Whether *command* runs unsandboxed (``excludedCommands``; :func:`is_excluded`)."""
        return is_excluded(command, self.excluded_commands)


# A single simple command of plain words: nothing that could chain, redirect or expand.
_PLAIN = re.compile(r"[A-Za-z0-9_./:=@%+,-]+(?:[ \t]+[A-Za-z0-9_./:=@%+,-]+)*")


def is_excluded(command: str, excluded: Iterable[str]) -> bool:
    """Whether *command* is one of the ``excludedCommands`` (it then runs unsandboxed).

    An entry is a name (``docker``: any ``docker ...``), words with a star
    (``docker:*``, ``docker compose *``) or exact words (``git push``). Only one
    simple command of plain words can match (no chaining, redirection, quote or
    expansion), so no exclusion carries another command out of the sandbox.
    Narrower than a policy's reading is the safe direction: that still runs sandboxed.
    """
    text = command.strip(" ")  # a newline is a command separator, not blank
    if not _PLAIN.fullmatch(text):
        return False
    words = text.split()
    for entry in excluded:
        lead = entry.strip().removesuffix(":*").removesuffix(" *").removesuffix("*").split()
        # As a Bash rule reads it: a name, or words then a star, is a prefix; else exact.
        prefix = len(lead) == 1 or entry.strip().endswith("*")
        if lead and (words[: len(lead)] == lead if prefix else words == lead):
            return True
    return False


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))


def _within(path: Path, roots: Iterable[Path]) -> bool:
    return any(path == r or path.is_relative_to(r) for r in roots)


def _settings_path(text: str, workspace: Path, home: Path) -> Path:
    """A ``sandbox.filesystem`` path: ``~/`` from home, ``/`` absolute, else from the workspace."""
    if text == "~" or text.startswith("~/"):
        return _real(home / text[2:])
    if text.startswith("//"):
        text = text[1:]
    return _real(workspace / text)


@attrs.frozen
class Bubblewrap:
    """A :class:`~coterie.tools.ShellSandbox` running commands under ``bwrap``; build it
    with :meth:`from_settings`. Call :meth:`wrap` off the event loop (it may scan)."""

    settings: SandboxSettings
    writable: tuple[Path, ...]
    read_only: tuple[Path, ...]
    hidden: tuple[Path, ...]
    executable: str = "bwrap"
    #: Whether Read deny rules exist, so that ``ctx.read_denied`` must be applied.
    read_deny_rules: bool = True

    @classmethod
    def from_settings(
        cls,
        settings: SandboxSettings,
        workspace: Path,
        extra_dirs: Iterable[Path] = (),
        hidden: Iterable[Path] = (),
        *,
        home: Path | None = None,
        executable: str = "bwrap",
        read_deny_rules: bool = True,
    ) -> Bubblewrap:
        """The sandbox of a run in *workspace* with *extra_dirs* (``--add-dir``).

        *hidden* adds paths to hide (the runtime's protected paths, the literal
        paths of Read deny rules); credential folders under *home* (default:
        the user's), the coterie home and ``filesystem.denyRead`` are always hidden.
        With *read_deny_rules* false (no Read deny rule exists), the walk of
        :meth:`wrap` does not apply ``ctx.read_denied``.
        """
        home = _real(home if home is not None else Path.home())
        workspace = _real(workspace)
        writable = [workspace, *(_real(d) for d in extra_dirs)]
        writable += [_settings_path(p, workspace, home) for p in settings.allow_write]
        read_only = [_settings_path(p, workspace, home) for p in settings.deny_write]
        # Even a missing .claude: a command could create settings for the next run.
        read_only.append(workspace / ".claude")
        for root in writable:
            read_only += [root / ".git" / "config", root / ".git" / "hooks"]
            read_only += [root / name for name in _STARTUP_FILES]
        read_only += [home / name for name in _STARTUP_FILES]
        secret = [home / name for name in CREDENTIAL_PATHS]
        secret += [_real(coterie_home()), *(_real(p) for p in hidden)]
        secret += [_settings_path(p, workspace, home) for p in settings.deny_read]
        return cls(
            settings=settings,
            writable=tuple(dict.fromkeys(writable)),
            read_only=tuple(dict.fromkeys(read_only)),
            hidden=tuple(dict.fromkeys(secret)),
            executable=executable,
            read_deny_rules=read_deny_rules,
        )

    def wrap(
        self,
        argv: Sequence[str],
        ctx: ToolContext,
        *,
        command: str | None = None,
        cwd: Path | None = None,
        unsandboxed: bool = False,
    ) -> list[str]:
        """The ``bwrap`` command line running *argv* sandboxed in *cwd* (default
        ``ctx.workspace``); an excluded *command* (default: that of ``bash -c
        COMMAND``) comes back unchanged, and so does any when *unsandboxed* (the
        call's ``dangerouslyDisableSandbox``) and ``allowUnsandboxedCommands`` is
        not false (with it false the flag is ignored, as in Claude Code). Raises
        :class:`SandboxError` when the Read deny rules or the protection of
        configuration cannot be applied (too many files, or a protected file with
        another name): then do not run."""
        if command is None and len(argv) == 3 and argv[:2] == ["bash", "-c"]:
            command = argv[2]
        if command is not None and self.settings.excludes(command):
            return list(argv)
        if unsandboxed and self.settings.allow_unsandboxed_commands:
            return list(argv)
        hidden = [*self.hidden, *(_real(p) for p in ctx.protected_paths)]
        denied = ctx.read_denied if self.read_deny_rules else None
        found, config = _scan(self.writable, denied)
        return [
            self.executable,
            *self._base(),
            # With the folders outside the workspace a person let this one command
            # write in: bound as the workspace is, under the same read-only and hidden
            # places (a home admitted keeps its start-up files and credentials shut).
            *self._mounts([*hidden, *found], config, tuple(_real(r) for r in ctx.call_roots)),
            "--chdir", str(_real(cwd or ctx.workspace)),
            "--",
            *argv,
        ]  # fmt: skip

    def _base(self) -> list[str]:
        args = ["--die-with-parent", "--unshare-all"]
        if self.settings.network.open:
            args.append("--share-net")
        args += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
        args += ["--tmpfs", "/tmp", "--tmpfs", "/dev/shm", "--setenv", "TMPDIR", "/tmp"]
        if not self.settings.network.allow_all_unix_sockets:
            args += ["--tmpfs", "/run"]
            if os.path.isdir("/var/run") and not os.path.islink("/var/run"):
                args += ["--tmpfs", "/var/run"]
            # /etc/resolv.conf often points in there; the network is useless without it.
            if self.settings.network.open and os.path.isdir(resolver := "/run/systemd/resolve"):
                args += ["--ro-bind", resolver, resolver]
        return args

    def _mounts(
        self, hidden: Iterable[Path], config: Iterable[Path] = (), admitted: tuple[Path, ...] = ()
    ) -> list[str]:
        args: list[str] = []
        writable = tuple(dict.fromkeys([*self.writable, *admitted]))
        # Parents first, so that a nested directory's bind lands on top of its parent's.
        for root in sorted(writable, key=lambda p: len(p.parts)):
            if root.exists():
                args += ["--bind", str(root), str(root)]
        read_only = dict.fromkeys([*self.read_only, *config])
        for path in (p for p in read_only if _within(p, writable)):
            args += self._read_only(path, writable)
        # Hidden last: nothing may be mounted on top of them, inside them or over them.
        exists = [p for p in dict.fromkeys(hidden) if os.path.lexists(p)]
        for path in exists:
            if not any(path != o and path.is_relative_to(o) for o in exists):
                args += _hide(path)
        return args

    def _read_only(self, path: Path, writable: tuple[Path, ...]) -> list[str]:
        if os.path.lexists(path):
            real = _real(path)
            return ["--ro-bind", str(real), str(real)] if _within(real, writable) else []
        if path == self.writable[0] / ".claude" or (path.name == "hooks" and path.parent.is_dir()):
            # bwrap creates the mount point in the host tree (an empty directory), and
            # inside the sandbox it is read-only, so nothing can be planted in it.
            return ["--tmpfs", str(path), "--remount-ro", str(path)]
        return []


def _hide(path: Path) -> list[str]:
    """Mounts that make *path* an empty read-only directory or an empty file."""
    try:
        mode = os.stat(path).st_mode
    except OSError:  # a dangling symlink: nothing behind it to hide
        return []
    target = str(_real(path))
    if stat.S_ISDIR(mode):
        return ["--tmpfs", target, "--remount-ro", target]
    return ["--ro-bind", "/dev/null", target]


def _scan(
    roots: Iterable[Path], denied: Callable[[Path], bool] | None
) -> tuple[list[Path], list[Path]]:
    """One walk of the writable *roots*: what *denied* covers (a denied directory whole,
    not entered) and the configuration that acts later at any depth, to bind read-only
    (``.claude``, ``.mcp.json``, a ``.git`` file; a ``.git`` directory's config, worktree
    config and hooks). :class:`SandboxError` past ``SCAN_LIMIT`` entries, or when a
    protected file has another name: a hard link would write past a read-only bind."""
    hidden: list[Path] = []
    config: list[Path] = []
    seen = 0
    stack = [str(r) for r in roots if r.is_dir()]
    while stack:
        directory = stack.pop()
        try:
            entries = list(os.scandir(directory))
        except OSError:
            continue
        seen += len(entries)
        if seen > SCAN_LIMIT:
            raise SandboxError(
                f"over {SCAN_LIMIT:,} files to look through for Read deny rules and for"
                " configuration (.claude, .mcp.json, .git) to keep read-only"
            )
        for entry in entries:
            name = entry.name.casefold()
            if denied is not None and not entry.is_symlink() and denied(Path(entry.path)):
                hidden.append(Path(entry.path))
                continue
            if name in ACTS_LATER:
                path = Path(entry.path)
                protected = [path]
                if name == ".git" and entry.is_dir(follow_symlinks=False):
                    protected = [path / n for n in ("config", "config.worktree", "hooks")]
                config += protected
                _refuse_linked(protected)
            if name != ".git" and entry.is_dir(follow_symlinks=False):
                stack.append(entry.path)  # .git's objects are many, and never what a rule means
    return hidden, config


def _refuse_linked(paths: Iterable[Path]) -> None:
    """:class:`SandboxError` if a regular file in *paths* (or below them) has another name."""
    stack = list(paths)
    while stack:
        path = stack.pop()
        try:
            st = os.lstat(path)
        except OSError:
            continue
        if stat.S_ISDIR(st.st_mode):
            stack += (Path(e.path) for e in os.scandir(path))
        elif stat.S_ISREG(st.st_mode) and st.st_nlink > 1:
            raise SandboxError(
                f"{path} is protected configuration and has another name (a hard link), through"
                " which a command could change it; remove the other name first (find"
                f" -samefile {path})"
            )


def probe(executable: str = "bwrap") -> str | None:
    """None when bubblewrap can run a sandbox like :meth:`Bubblewrap.wrap`'s here,
    else one line saying why not (missing, user namespaces disabled, ...)."""
    found = shutil.which(executable)
    if found is None:
        return f"bubblewrap ({executable}) is not installed; on Debian: apt-get install bubblewrap"
    sandbox = Bubblewrap(SandboxSettings(enabled=True), (), (), (), executable=found)
    argv = [found, *sandbox._base(), "--", "true"]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bubblewrap ({found}) cannot run: {exc}"
    if done.returncode != 0:
        why = done.stderr.strip().splitlines()[-1:] or [f"exit code {done.returncode}"]
        return f"bubblewrap ({found}) cannot create a sandbox here: {why[0]}"
    return None
