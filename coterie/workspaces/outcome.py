"""What git said, read into facts, and what a merge's outcome tells the lead (pure).

``git status --porcelain=v1 -z`` is parsed by :func:`parse_status` into the
paths changed and the paths in conflict (both sides' codes per git's table:
``DD AU UD UA DU AA UU``). :class:`MergeOutcome` is what ``MergeTask``
reports; :meth:`MergeOutcome.describe` is the text the lead's model reads.
"""

from __future__ import annotations

from typing import Literal

import attrs

__all__ = ["CONFLICT_CODES", "MergeOutcome", "Status", "parse_status"]

#: The two-letter codes of ``git status`` for an unmerged path.
CONFLICT_CODES = frozenset({"DD", "AU", "UD", "UA", "DU", "AA", "UU"})


@attrs.frozen
class Status:
    """The paths ``git status`` lists: every changed one, and those in conflict."""

    changed: tuple[str, ...] = ()
    conflicts: tuple[str, ...] = ()

    @property
    def clean(self) -> bool:
        return not self.changed


def parse_status(output: str) -> Status:
    """Read ``git status --porcelain=v1 -z`` output. Entries are ``XY PATH`` and NUL
    ended; a rename or copy (``R``/``C`` in either column) is followed by its
    source path as one more entry. A malformed entry raises ``ValueError``."""
    changed: list[str] = []
    conflicts: list[str] = []
    entries = output.split("\0")
    if entries and entries[-1] == "":
        entries.pop()
    index = 0
    while index < len(entries):
        entry = entries[index]
        if len(entry) < 4 or entry[2] != " ":
            raise ValueError(f"not a porcelain status entry: {entry!r}")
        code, path = entry[:2], entry[3:]
        changed.append(path)
        if code in CONFLICT_CODES:
            conflicts.append(path)
        index += 1
        if "R" in code or "C" in code:
            if index >= len(entries):
                raise ValueError(f"rename entry {entry!r} without its source path")
            index += 1
    return Status(tuple(changed), tuple(conflicts))


MergeKind = Literal["fast-forward", "merged", "up-to-date", "conflict", "refused"]


@attrs.frozen
class MergeOutcome:
    """The outcome of merging a task's branch into the lead's workspace."""

    kind: MergeKind
    branch: str
    #: The lead's HEAD after the merge (before it, when nothing was merged).
    head: str | None = None
    #: The files both sides changed (``conflict``); the merge was aborted.
    conflicts: tuple[str, ...] = ()
    #: Why nothing was merged (``refused``): git's own words.
    reason: str = ""

    @property
    def merged(self) -> bool:
        return self.kind in ("fast-forward", "merged", "up-to-date")

    def describe(self) -> str:
        """What the lead's model is told."""
        short = (self.head or "")[:12]
        if self.kind == "fast-forward":
            return f"Fast-forwarded the workspace to {self.branch} (now at {short})."
        if self.kind == "merged":
            return f"Merged {self.branch} into the workspace with a merge commit ({short})."
        if self.kind == "up-to-date":
            return f"Nothing to merge: the workspace already contains {self.branch}."
        if self.kind == "conflict":
            files = "\n".join(f"  {path}" for path in self.conflicts)
            return (
                f"Merging {self.branch} conflicts with the workspace in:\n{files}\n"
                "The merge was aborted: the workspace is as it was and the branch is kept. "
                "To resolve, run `git merge " + self.branch + "` in the workspace, edit the "
                "conflicting files, then `git add` them and `git commit`; or create a task "
                "asking a teammate to rework the change on top of the current HEAD."
            )
        return f"Did not merge {self.branch}: {self.reason}"
