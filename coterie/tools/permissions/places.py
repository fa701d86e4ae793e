"""The protected places of an agent: what no tool may write, and what only a person may.

Three kinds of protected place:

- *guarded* paths, refused to every writer in every mode (bypassPermissions
  included): the run's own state (``ToolContext.protected_paths``, under the
  coterie home), the coterie home and ``~/.claude`` themselves (trust and
  user settings), the user's shell start-up files (``~/.bashrc``,
  ``~/.profile``, ``~/.zshrc``...) and credential folders (``~/.ssh``,
  ``~/.gnupg``, ``~/.aws``...), which would run code or leak keys later;
- *configuration that acts later* (:data:`ACTS_LATER`, :func:`acts_later`):
  ``.claude`` (settings, hooks, agents, skills, commands, output styles),
  ``.mcp.json`` and ``.git`` (a repository's config and hooks, or a
  worktree's ``.git`` file) at ANY depth of the workspace or an additional
  directory, and everything in them: a later run, or git run by the
  runtime, obeys them (``core.fsmonitor``, ``allow Bash``, a skill's
  ``allowed-tools``, an MCP server started before any tool call). A write
  there is asked in every mode (bypassPermissions included); headless that
  is a denial. ``.claude/CLAUDE.md`` is prompt, not permission: writable;
- everything outside the workspace and the additional directories (the
  sandbox), refused.

The rule is declared here once; the file tools (through the policy), the
shell reader (:mod:`~coterie.tools.permissions.protect`) and the OS sandbox
(:mod:`coterie.tools.ossandbox`) all apply it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import attrs

from coterie.home import claude_dir
from coterie.tools.sandbox import allowed_roots

if TYPE_CHECKING:
    from collections.abc import Sequence

    from coterie.tools._base import ToolContext

__all__ = [
    "ACTS_LATER", "CONFIG_REASON", "HOME_GUARDED", "SCAN_LIMIT", "Places", "acts_later",
    "config_below",
    "guarded_reason",
]  # fmt: skip

#: Names of configuration a later run or the runtime obeys: a file or directory
#: so named at any depth below a root is protected, with everything in it.
#: Compared case-folded (a case-insensitive file system opens ``.Claude`` too).
ACTS_LATER = (".claude", ".mcp.json", ".git")
#: How many entries below a written directory are looked at for configuration;
#: past it the write is asked (it may reach some).
SCAN_LIMIT = 20_000
#: Below the home directory: files whose change runs code at the next login or
#: shell, or which hold credentials and settings granting permissions.
HOME_GUARDED = (
    ".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".zshrc",
    ".zshenv", ".zprofile", ".zlogin", ".zlogout", ".kshrc", ".cshrc", ".tcshrc",
    ".inputrc", ".config/fish", ".ssh", ".gnupg", ".aws", ".azure", ".kube", ".docker",
    ".config/gcloud", ".config/gh", ".netrc", ".gitconfig", ".config/git", ".npmrc",
    ".pypirc", ".git-credentials", ".claude", ".coterie", ".config/autostart",
    ".config/systemd", ".local/bin", ".pam_environment", ".xprofile", ".xinitrc",
)  # fmt: skip


@attrs.frozen
class Places:
    """The resolved workspace, the roots the sandbox admits, and the guarded paths."""

    workspace: Path
    roots: tuple[Path, ...]
    guarded: tuple[Path, ...]

    @classmethod
    def of(cls, ctx: ToolContext) -> Places:
        """The places of the agent owning *ctx* (home read from the environment now)."""
        home = Path(os.path.realpath(os.path.expanduser("~")))
        guarded = [Path(os.path.realpath(p)) for p in ctx.protected_paths]
        guarded += [Path(os.path.realpath(home / name)) for name in HOME_GUARDED]
        # The user's Claude folder moved by CLAUDE_CONFIG_DIR (settings, hooks): never written.
        guarded.append(Path(os.path.realpath(claude_dir())))
        if os.environ.get("COTERIE_HOME"):
            guarded.append(Path(os.path.realpath(os.path.expanduser(os.environ["COTERIE_HOME"]))))
        roots = tuple(allowed_roots(ctx))
        return cls(roots[0], roots, tuple(dict.fromkeys(guarded)))

    def guarded_reason(self, path: Path) -> str | None:
        """Why *path* may never be written, or ``None``."""
        return guarded_reason(path, self.guarded)

    def asked(self, path: Path) -> bool:
        """Whether *path* (resolved) is configuration that acts later, below a root."""
        return any(
            path.is_relative_to(root) and acts_later(path.relative_to(root).parts)
            for root in self.roots
        )

    def asked_reason(self, path: Path) -> str | None:
        """Why changing *path* needs a person's approval (:meth:`asked`), or ``None``."""
        return CONFIG_REASON.format(path) if self.asked(path) else None


#: Why a write to configuration that acts later needs a person ({} is the path).
CONFIG_REASON = (
    "{} is configuration that a later run or git obeys (.claude, .mcp.json or .git, at any"
    " depth); changing it needs explicit approval."
)


def acts_later(parts: Sequence[str]) -> bool:
    """Whether the path of *parts* (below a root) is or lies in configuration that acts later.

    The first component named in :data:`ACTS_LATER` decides; ``.claude/CLAUDE.md``
    alone is memory (prompt, not permission) and stays writable.
    """
    folded = [p.casefold() for p in parts]
    for i, part in enumerate(folded):
        if part in ACTS_LATER:
            return not (part == ".claude" and folded[i + 1 :] == ["claude.md"])
    return False


def config_below(directory: Path, limit: int = SCAN_LIMIT) -> tuple[list[Path], bool]:
    """Configuration that acts later found below *directory* (not entered), and whether
    all of it was looked at (``False`` past *limit* entries). Symlinks are not followed."""
    found: list[Path] = []
    seen = 0
    stack = [directory]
    while stack:
        try:
            entries = list(os.scandir(stack.pop()))
        except OSError:
            continue
        seen += len(entries)
        if seen > limit:
            return found, False
        for entry in entries:
            if entry.name.casefold() in ACTS_LATER:
                found.append(Path(entry.path))
            elif entry.is_dir(follow_symlinks=False):
                stack.append(Path(entry.path))
    return found, True


def guarded_reason(path: Path, guarded: Sequence[Path]) -> str | None:
    """Why *path* (resolved) is a guarded path no tool may write, or ``None``."""
    for place in guarded:
        if path == place or path.is_relative_to(place):
            return (
                f"{path} is a protected path ({place}: coterie's run state, its home or"
                " the user's shell start-up files, credentials or settings); no tool"
                " may change it, in any mode."
            )
    return None
