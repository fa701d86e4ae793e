"""What a rewind to checkpoint N puts back, and what stops it: decided on snapshots alone.

For every checkpoint k from N on, the run changed the paths that differ
between the snapshot at its start and the one at its end (a checkpoint whose
end a crash cut short: up to the next one's start, the run's as far as anyone
can tell). Between one checkpoint's end and the next one's start (and after
the last end, until now) the run was not working: what changed then was
changed outside it. A rewind puts back every path the run changed since N,
as N's snapshot had it, and leaves every other path alone; a path changed
both by the run and outside it is a conflict, which refuses the rewind
unless it is forced (then the outside change is lost too).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

from coterie.checkpoints.snapshot import changed_paths

if TYPE_CHECKING:
    from collections.abc import Sequence

    from coterie.checkpoints.snapshot import Snapshot

__all__ = ["RewindPlan", "Span", "plan_rewind"]


@attrs.frozen
class Span:
    """One checkpoint's snapshots: before its work, and after (None: cut short)."""

    start: Snapshot
    end: Snapshot | None


@attrs.frozen
class RewindPlan:
    """The paths to put back as the target checkpoint had them, and the conflicts."""

    restore: frozenset[str]
    conflicts: frozenset[str]


def plan_rewind(spans: Sequence[Span], now: Snapshot, to: int) -> RewindPlan:
    """The rewind to *spans[to]* (0-based) given the workspace *now*."""
    run: set[str] = set()
    outside: set[str] = set()
    later = spans[to:]
    for i, span in enumerate(later):
        following = later[i + 1].start if i + 1 < len(later) else now
        if span.end is None:
            run |= changed_paths(span.start, following)
            continue
        run |= changed_paths(span.start, span.end)
        outside |= changed_paths(span.end, following)
    return RewindPlan(frozenset(run), frozenset(run & outside))
