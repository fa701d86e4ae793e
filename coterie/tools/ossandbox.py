"""The OS sandbox for Bash on Linux: bubblewrap, with Claude Code's ``sandbox.*`` settings.

This module owns three things: :class:`SandboxSettings` (the ``sandbox``
object of the settings files, parsed with Claude Code's key names and
checked), :class:`Bubblewrap` (the :class:`~coterie.tools.ShellSandbox` that
turns ``bash -c COMMAND`` into a ``bwrap`` command line) and :func:`probe`
(does bwrap work on this machine). It decides nothing about permissions:
the policy decides whether a command may run, this decides what a running
command can touch. It imports nothing of ``coterie.tools.permissions``, so
the policy may use :func:`is_excluded`.

Inside the sandbox, for every command and everything it starts:

* the whole file system is read-only (``--ro-bind / /``), except the
  workspace, the additional directories, ``filesystem.allowWrite`` and a
  private ``/tmp`` (an empty tmpfs, new for every call);
* inside those writable trees, ``.claude/``, ``.git/config``, ``.git/hooks``
  and shell start-up files stay read-only, so a command cannot widen the
  next run's permissions or plant code that git or a shell would run;
* credential folders (``~/.ssh``, ``~/.aws``, ``~/.gnupg``, ``~/.config/gh``,
  ...), the coterie home, the run's protected paths, ``filesystem.denyRead``
  and whatever the Read deny rules cover are hidden (an empty directory, or
  an empty file);
* ``/run`` is an empty tmpfs (it holds the sockets of docker, D-Bus and
  agents, which a read-only mount would not stop), ``/proc`` belongs to a new
  PID namespace (no other process's environment can be read), ``/dev`` is a
  minimal one;
* the network is a new, empty namespace (only a private loopback) unless
  ``network.allowedDomains`` holds ``"*"``. bubblewrap cannot filter by
  domain: any other list keeps the network off (see :attr:`SandboxSettings.notes`).

The command stays in the caller's process group (no ``--new-session``: the
command has no controlling terminal to abuse, since :func:`run_shell` starts
a new session), so the group kill reaches it; ``--die-with-parent`` and the
PID namespace make sure that whatever escapes the group dies with bwrap.
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

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence

    from coterie.tools._base import ToolContext

__all__ = [
    "CREDENTIAL_PATHS",
    "Bubblewrap",
    "NetworkSettings",
    "SandboxError",
    "SandboxSettings",
    "SandboxSettingsError",
    "is_excluded",
    "probe",
]

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
_PROBE_TIMEOUT = 10.0


class SandboxSettingsError(CoterieError, ValueError):
    """The ``sandbox`` settings have a wrong shape; the message names the key."""


class SandboxError(CoterieError, RuntimeError):
    """A command cannot be put in the sandbox; it must then not run at all."""


def _get(raw: dict[str, Any], key: str, kind: type | tuple[type, ...], where: str) -> Any:
    value = raw.get(key)
    if value is None:
        return None
    # bool is an int in Python, and never a port number.
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        name = kind.__name__ if isinstance(kind, type) else "/".join(k.__name__ for k in kind)
        want = {"bool": "a boolean", "int": "an integer", "dict": "an object"}.get(name, name)
        raise SandboxSettingsError(f"{where}{key}: expected {want}, got {value!r}")
    return value


def _flag(raw: dict[str, Any], key: str, where: str, default: bool) -> bool:
    value = _get(raw, key, bool, where)
    return default if value is None else bool(value)


def _strings(raw: dict[str, Any], key: str, where: str) -> tuple[str, ...]:
    value = raw.get(key)
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise SandboxSettingsError(
            f"{where}{key}: expected a list of non-empty strings, got {value!r}"
        )
    return tuple(value)


def _port(raw: dict[str, Any], key: str, where: str) -> int | None:
    value: int | None = _get(raw, key, int, where)
    if value is not None and not 1 <= value <= 65535:
        raise SandboxSettingsError(f"{where}{key}: expected a port (1-65535), got {value}")
    return value


def _section(raw: dict[str, Any], key: str) -> dict[str, Any]:
    value: dict[str, Any] | None = _get(raw, key, dict, "sandbox.")
    return value or {}


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
        """Whether the sandbox shares the host's network: ``allowedDomains`` holds ``*``
        and no ``deniedDomains`` asks for a filter bubblewrap cannot apply."""
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
        """Parse the merged ``sandbox`` object; unknown keys are ignored, as Claude Code does.

        Raises :class:`SandboxSettingsError` naming the key whose value has a wrong shape.
        """
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
        """One line for each setting coterie cannot honour as Claude Code would, and what
        it does instead (always the stricter thing); for the runtime to print once."""
        out = []
        domains = [d for d in self.network.allowed_domains if d != "*"]
        if domains and not self.network.open:
            out.append(
                "sandbox.network.allowedDomains: bubblewrap cannot filter by domain, so the"
                f" network stays off for sandboxed commands ({', '.join(domains)} not"
                ' reachable); add "*" to allow every domain.'
            )
        if self.network.denied_domains and "*" in self.network.allowed_domains:
            out.append(
                "sandbox.network.deniedDomains: bubblewrap cannot filter by domain, so the"
                " network stays off for sandboxed commands."
            )
        if self.network.http_proxy_port or self.network.socks_proxy_port:
            out.append(
                "sandbox.network.httpProxyPort/socksProxyPort: not supported; the sandbox"
                " has no route to a proxy on the host."
            )
        if self.network.allow_unix_sockets and not self.network.allow_all_unix_sockets:
            out.append(
                "sandbox.network.allowUnixSockets: not supported on Linux; the sockets"
                " under /run stay hidden."
            )
        return tuple(out)

    def excludes(self, command: str) -> bool:
        """Whether *command* runs unsandboxed (``excludedCommands``; :func:`is_excluded`)."""
        return is_excluded(command, self.excluded_commands)


# A single simple command of plain words: nothing that could chain, redirect or expand.
_PLAIN = re.compile(r"[A-Za-z0-9_./:=@%+,-]+(?:[ \t]+[A-Za-z0-9_./:=@%+,-]+)*")


def is_excluded(command: str, excluded: Iterable[str]) -> bool:
    """Whether *command* is one of the ``excludedCommands`` (it then runs unsandboxed).

    An entry (``docker``, ``docker compose``, ``docker:*``, ``docker *``) names
    leading words. Only a single simple command of plain words can match: a
    compound command, a redirection, a quote or an expansion never does, so no
    exclusion can carry another command out of the sandbox. This is narrower
    than any policy's reading, which is the safe direction: a command the
    policy treats as excluded (and asks about) but that this function does not
    still runs sandboxed.
    """
    text = command.strip()
    if not _PLAIN.fullmatch(text):
        return False
    words = text.split()
    for entry in excluded:
        lead = entry.strip().removesuffix(":*").removesuffix(" *").removesuffix("*").split()
        if lead and words[: len(lead)] == lead:
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
    """A :class:`~coterie.tools.ShellSandbox` running commands under ``bwrap``.

    Build it with :meth:`from_settings`; :meth:`wrap` is called for each
    command (it may look through the writable trees for Read-denied files, so
    call it off the event loop). Excluded commands come back unwrapped.
    """

    settings: SandboxSettings
    writable: tuple[Path, ...]
    read_only: tuple[Path, ...]
    hidden: tuple[Path, ...]
    executable: str = "bwrap"

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
    ) -> Bubblewrap:
        """The sandbox of a run in *workspace* with *extra_dirs* (``--add-dir``).

        *hidden* adds paths to hide (the runtime's protected paths, the literal
        paths of Read deny rules); credential folders under *home* (default:
        the user's), the coterie home and ``filesystem.denyRead`` are always hidden.
        """
        home = _real(home if home is not None else Path.home())
        workspace = _real(workspace)
        writable = [workspace, *(_real(d) for d in extra_dirs)]
        writable += [_settings_path(p, workspace, home) for p in settings.allow_write]
        read_only = [_settings_path(p, workspace, home) for p in settings.deny_write]
        for root in writable:
            # A missing .claude would let a command create settings for the next run.
            read_only += [root / ".claude", root / ".git" / "config", root / ".git" / "hooks"]
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
        )

    def wrap(self, argv: Sequence[str], ctx: ToolContext) -> list[str]:
        """The ``bwrap`` command line running *argv* in the sandbox, in ``ctx.workspace``.

        ``bash -c COMMAND`` with an excluded COMMAND comes back unchanged.
        Raises :class:`SandboxError` when the Read deny rules cannot be
        applied (too many files to look through): the command must not run then.
        """
        if len(argv) == 3 and argv[:2] == ["bash", "-c"] and self.settings.excludes(argv[2]):
            return list(argv)
        hidden = [*self.hidden, *(_real(p) for p in ctx.protected_paths)]
        if ctx.read_denied is not None:
            hidden += _denied_in(self.writable, ctx.read_denied)
        return [
            self.executable,
            *self._base(),
            *self._mounts(hidden),
            "--chdir", str(_real(ctx.workspace)),
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
            var_run = Path("/var/run")
            if var_run.is_dir() and not var_run.is_symlink():
                args += ["--tmpfs", "/var/run"]
            resolver = Path("/run/systemd/resolve")
            if self.settings.network.open and resolver.is_dir():
                # /etc/resolv.conf often points in there; the network is useless without it.
                args += ["--ro-bind", str(resolver), str(resolver)]
        return args

    def _mounts(self, hidden: Iterable[Path]) -> list[str]:
        args: list[str] = []
        # Parents first, so that a nested directory's bind lands on top of its parent's.
        for root in sorted(self.writable, key=lambda p: len(p.parts)):
            if root.is_dir():
                args += ["--bind", str(root), str(root)]
        for path in self.read_only:
            if _within(path, self.writable):
                args += self._read_only(path)
        # Hidden last: nothing may be mounted on top of them, inside them or over them.
        exists = [p for p in dict.fromkeys(hidden) if os.path.lexists(p)]
        for path in exists:
            if not any(path != o and path.is_relative_to(o) for o in exists):
                args += _hide(path)
        return args

    def _read_only(self, path: Path) -> list[str]:
        if os.path.lexists(path):
            real = _real(path)
            return ["--ro-bind", str(real), str(real)] if _within(real, self.writable) else []
        if path.name in (".claude", "hooks"):
            # bwrap would create the mount point in the host tree: an empty directory,
            # and a read-only one inside the sandbox, so nothing can be planted in it.
            parent = path.parent
            if path.name == ".claude" or parent.is_dir():
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


def _denied_in(roots: Iterable[Path], denied: Callable[[Path], bool]) -> list[Path]:
    """The files and directories under *roots* that *denied* covers (a denied directory
    is returned whole, not entered). Raises :class:`SandboxError` past ``SCAN_LIMIT`` entries."""
    found: list[Path] = []
    seen = 0
    stack = [r for r in roots if r.is_dir()]
    while stack:
        directory = stack.pop()
        try:
            entries = list(os.scandir(directory))
        except OSError:
            continue
        seen += len(entries)
        if seen > SCAN_LIMIT:
            raise SandboxError(
                f"more than {SCAN_LIMIT:,} files to look through for Read deny rules; the"
                " command cannot be sandboxed with them applied, so it was not run"
            )
        for entry in entries:
            path = Path(entry.path)
            if entry.is_symlink():
                continue  # its target is checked where it lives, or hidden as a credential
            if denied(path):
                found.append(path)
            elif entry.is_dir(follow_symlinks=False):
                stack.append(path)
    return found


def probe(executable: str = "bwrap") -> str | None:
    """None when bubblewrap can run a sandbox like :meth:`Bubblewrap.wrap`'s here,
    else one line saying why not (missing, user namespaces disabled, ...)."""
    found = shutil.which(executable)
    if found is None:
        return f"bubblewrap ({executable}) is not installed; on Debian: apt-get install bubblewrap"
    sandbox = Bubblewrap(SandboxSettings(enabled=True), (), (), (), executable=found)
    argv = [found, *sandbox._base(), "--", "true"]
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=_PROBE_TIMEOUT, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bubblewrap ({found}) cannot run: {exc}"
    if done.returncode != 0:
        why = done.stderr.strip().splitlines()[-1:] or [f"exit code {done.returncode}"]
        return f"bubblewrap ({found}) cannot create a sandbox here: {why[0]}"
    return None
