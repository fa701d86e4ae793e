"""The coterie home: per-user state that no tool may write (docs/context.md).

``$COTERIE_HOME``, else ``~/.coterie``. It holds each workspace's runs
(``projects/<workspace key>/runs/``, like Claude Code's
``~/.claude/projects/``), the trust store, and the key that signs each
run's configuration. It lives outside every workspace, so a checkout or an
agent working in one cannot rewrite the state that decides what a run may
do; the composition root also lists it among the paths no tool may write.

It also says where the user's Claude configuration folder is
(:func:`claude_dir`): ``$CLAUDE_CONFIG_DIR`` (how an Agent SDK host points
Claude Code at another one), else ``~/.claude``. The user's settings,
subagents, commands, skills and output styles are read there.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import re
import secrets
from pathlib import Path

__all__ = [
    "CLAUDE_CONFIG_ENV",
    "HOME_ENV",
    "claude_dir",
    "coterie_home",
    "private_dir",
    "sign",
    "verify",
    "workspace_key",
]

#: The environment variable that moves the coterie home.
HOME_ENV = "COTERIE_HOME"
_KEY_FILE = "signing.key"
#: The environment variable that moves the user's Claude configuration folder.
CLAUDE_CONFIG_ENV = "CLAUDE_CONFIG_DIR"


def coterie_home() -> Path:
    """The coterie home directory (not created here)."""
    override = os.environ.get(HOME_ENV)
    return Path(override).expanduser() if override else Path.home() / ".coterie"


def claude_dir(home: Path | None = None) -> Path:
    """The user's Claude configuration folder: ``$CLAUDE_CONFIG_DIR``, else
    ``.claude`` in *home* (default: the user's home directory). Given *home*
    (tests, a caller with a home of its own) it is ``home/.claude`` whatever
    the environment says."""
    if home is not None:
        return home / ".claude"
    override = os.environ.get(CLAUDE_CONFIG_ENV)
    return Path(override).expanduser() if override else Path(os.path.expanduser("~")) / ".claude"


def private_dir(path: Path) -> Path:
    """*path* as a directory only its owner can enter (0700): each missing folder on
    the way is made 0700, and *path* itself is set to 0700 even if it was there.
    A run's state and a teammate's checkout are the user's private copies; other
    local users must not read them."""
    missing = [p for p in (path, *path.parents) if not p.exists()]
    for folder in reversed(missing):
        with contextlib.suppress(FileExistsError):  # made meanwhile by another process
            folder.mkdir(mode=0o700)
    path.chmod(0o700)
    return path


def workspace_key(workdir: Path) -> str:
    """The folder name of *workdir*'s state under ``projects/``: its resolved path
    made readable (``/work/app`` → ``-work-app``), then a short hash of the exact
    path, so that two paths that read alike never share a folder."""
    path = str(Path(os.path.realpath(workdir)))
    readable = re.sub(r"[^A-Za-z0-9._-]", "-", path)[-80:]
    digest = hashlib.sha256(path.encode()).hexdigest()[:10]
    return f"{readable}-{digest}"


def _key() -> bytes:
    """The per-user signing key (created, mode 0600, on first use)."""
    path = coterie_home() / _KEY_FILE
    try:
        return path.read_bytes()
    except FileNotFoundError:
        pass
    private_dir(path.parent)
    key = secrets.token_bytes(32)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another process made it first: use theirs
        return path.read_bytes()
    try:
        os.write(fd, key)
        os.fsync(fd)
    finally:
        os.close(fd)
    return key


def sign(data: bytes) -> str:
    """An HMAC-SHA256 of *data* under the user's key (hex)."""
    return hmac.new(_key(), data, hashlib.sha256).hexdigest()


def verify(data: bytes, signature: str) -> bool:
    """Whether *signature* is :func:`sign`'s for *data*."""
    return hmac.compare_digest(sign(data), signature.strip())
