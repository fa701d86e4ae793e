"""Checkpoints: what the workspace held at each prompt of a run, and putting it back.

A checkpoint is a snapshot of the whole workspace (every regular file and
symbolic link, with its mode; ``.git`` left out), taken whatever changed the
files: Write and Edit, Bash commands, subagents, teammates. This package owns

- :mod:`.store`: the content-addressed store of file contents in the run
  directory (``checkpoints/objects/``), each content kept once;
- :mod:`.snapshot`: taking a snapshot (:func:`~.snapshot.scan`: a stat walk,
  hashing only files whose size, time or inode moved since the last one) and
  comparing two (:func:`~.snapshot.changed_paths`);
- :mod:`.changes` and :mod:`.watch`: what changed since the last snapshot, from
  the kernel's file events (inotify), so that a later one looks again only at
  that (the pure bookkeeping, and the thin layer reading the events);
- :mod:`.restore`: putting chosen paths back as a snapshot had them;
- :mod:`.record`: a run's checkpoints on disk (the log, delta-coded snapshots);
- :mod:`.conversation`: cutting a stopped run's conversations back besides the
  lead's rewind (to a message: ``resume_session_at``; a team's teammates and
  board, to a checkpoint);
- :mod:`.rewind`: what a rewind puts back and what refuses it (pure);
- :mod:`.rewinding`: listing a stopped run's checkpoints and rewinding it
  (files, and the lead's conversation).

The session takes a checkpoint as each request starts and records the
workspace again when its work ends (:class:`coterie.runtime.AgentSession`).

Snapshots are plain data (:class:`~.snapshot.Snapshot`): the decisions of a
rewind (what the run changed, what changed outside it) are made on them
alone.
"""

from coterie.checkpoints.conversation import conversation_marks, resume_at
from coterie.checkpoints.record import (
    SCANS,
    BadCheckpoint,
    Checkpoint,
    CheckpointLog,
    checkpoint_log,
)
from coterie.checkpoints.restore import RestoreRefused, restore
from coterie.checkpoints.rewind import RewindPlan, Span, plan_rewind
from coterie.checkpoints.rewinding import (
    CheckpointRow,
    RewindRefused,
    RewindReport,
    cut_point,
    list_checkpoints,
    plan_files,
    rewind_checkpoints,
    rewind_files,
    rewind_run,
)
from coterie.checkpoints.snapshot import Entry, Snapshot, SnapshotTooLarge, changed_paths, scan
from coterie.checkpoints.store import DamagedObject, ObjectStore

__all__ = [
    "SCANS",
    "BadCheckpoint",
    "Checkpoint",
    "CheckpointLog",
    "CheckpointRow",
    "DamagedObject",
    "Entry",
    "ObjectStore",
    "RestoreRefused",
    "RewindPlan",
    "RewindRefused",
    "RewindReport",
    "Snapshot",
    "SnapshotTooLarge",
    "Span",
    "changed_paths",
    "checkpoint_log",
    "conversation_marks",
    "cut_point",
    "list_checkpoints",
    "plan_files",
    "plan_rewind",
    "restore",
    "resume_at",
    "rewind_checkpoints",
    "rewind_files",
    "rewind_run",
    "scan",
]
