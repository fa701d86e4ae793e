"""File contents by their SHA-256, each kept once (``checkpoints/objects/ab/cdef...``).

An object is written to a temporary file and renamed into place, so a crash
leaves either the whole object or none; a name that exists holds its content
(the name is the content's hash), so writing it again is skipped. Reading an
object checks its hash: a damaged object is an error, never restored.
"""

from __future__ import annotations

import hashlib
import os
from typing import TYPE_CHECKING

import attrs

from coterie.errors import CoterieError

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["DamagedObject", "ObjectStore", "hash_file"]

_CHUNK = 1 << 20


class DamagedObject(CoterieError):
    """An object whose content no longer has its hash (or is missing)."""


def hash_file(path: Path) -> str:
    """The SHA-256 of *path*'s content, hex."""
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


@attrs.frozen
class ObjectStore:
    """The objects under *root*."""

    root: Path

    def path(self, sha: str) -> Path:
        return self.root / sha[:2] / sha[2:]

    def has(self, sha: str) -> bool:
        return self.path(sha).exists()

    def put_file(self, source: Path) -> str:
        """Keep *source*'s content; its hash. The content is hashed as it is copied,
        so a file changing under the copy is kept as copied, under its own hash."""
        digest = hashlib.sha256()
        self.root.mkdir(parents=True, exist_ok=True)
        temp = self.root / f".tmp-{os.getpid()}-{id(digest)}"
        try:
            with source.open("rb") as src, temp.open("wb") as out:
                while chunk := src.read(_CHUNK):
                    digest.update(chunk)
                    out.write(chunk)
            sha = digest.hexdigest()
            target = self.path(sha)
            if target.exists():
                temp.unlink()
            else:
                target.parent.mkdir(exist_ok=True)
                os.replace(temp, target)
            return sha
        finally:
            temp.unlink(missing_ok=True)

    def read(self, sha: str) -> bytes:
        """The content of object *sha*; :class:`DamagedObject` if it is missing or
        no longer has that hash."""
        try:
            data = self.path(sha).read_bytes()
        except OSError as exc:
            raise DamagedObject(f"checkpoint object {sha[:12]} cannot be read: {exc}") from None
        if hashlib.sha256(data).hexdigest() != sha:
            raise DamagedObject(f"checkpoint object {sha[:12]} is damaged")
        return data
