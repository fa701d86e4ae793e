"""What ``cp``, ``ln``, ``install`` and ``rsync`` write, and what they copy.

The destination is written. A hard link (``ln`` without ``-s``, ``cp -l``,
``cp --link``) gives its source a second name, so the source is written too:
a write through ``gc`` after ``cp -l .git/config gc`` is a write to
``.git/config``. A copy or a symbolic link puts what its source is under a
new name (``cp -r sub n`` makes ``n/.claude``; ``ln -s ../.git d`` makes
``d/.git``): those sources are *copied*, which the path judge asks about when
they are configuration.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from coterie.tools.permissions.words import Word

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["placing"]


def placing(
    name: str, options: Sequence[tuple[str, Word | None]], operands: Sequence[Word]
) -> tuple[list[Word], tuple[Word, ...]]:
    """The paths *name* (``cp``, ``ln``, ``install``, ``rsync``) writes, and those it copies."""
    flags = {o for o, _ in options}
    # rsync's -t keeps times; cp, ln and install's names the target directory.
    targeted = name != "rsync" and bool(flags & {"-t", "--target-directory"})
    writes: list[Word] = []
    if not targeted:
        writes.append(operands[-1] if len(operands) > 1 or name != "ln" else operands[0])
    sources = list(operands if targeted else operands[:-1])
    hard = (name == "ln" and not flags & {"-s", "--symbolic"}) or (
        name == "cp" and bool(flags & {"-l", "--link"})
    )
    if hard:
        return writes + sources, ()
    if name == "ln" and not targeted and len(operands) > 1:
        sources += _link_targets(sources, operands[-1])
    return writes, tuple(sources)


def _link_targets(sources: list[Word], dest: Word) -> list[Word]:
    """What the relative targets of ``ln -s`` name: they are taken from the link's
    directory, *dest* itself (a directory) or the directory holding it."""
    found: list[Word] = []
    for source in sources:
        if source.value.startswith("/"):
            continue
        for base in (dest.value, os.path.dirname(dest.value)):
            value = os.path.join(base, source.value)
            literal = source.literal and dest.literal
            found.append(Word(value, literal=literal, raw=f"{source.raw} (from {dest.raw})"))
    return found
