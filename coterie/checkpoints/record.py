"""A run's checkpoints on disk: ``checkpoints/`` in the run directory.

- ``log.jsonl``: one line when a prompt starts (``{"n", "kind", "request",
  "text", "at", "start"}``: the checkpoint, numbered from 1, with the
  snapshot taken before the run worked on it) and one when its work ended
  (``{"n", "end"}``); a rewind is a checkpoint too (``kind: "rewind"``, with
  ``to``). A line cut off by a crash is ignored.
- ``snapshots/<id>.json``: each snapshot, written atomically before the line
  naming it: the first whole, each later one as what changed since the one
  before (``{"base", "set", "del"}``), a whole one again after
  :data:`FULL_EVERY` deltas, or once the deltas since the last whole one name
  more paths than it holds, so that disk per checkpoint follows what changed
  and loading one replays a bounded chain.
- ``objects/``: the file contents (:class:`~.store.ObjectStore`).

The files stay with the run, under the coterie home, never in the
workspace. Nothing here knows of prompts beyond their ids and text.
"""

from __future__ import annotations

import json
import os
import threading
import time
from typing import TYPE_CHECKING, Any

import attrs

from coterie.checkpoints.snapshot import Entry, Snapshot, scan
from coterie.checkpoints.store import ObjectStore
from coterie.checkpoints.watch import open_watcher
from coterie.errors import CoterieError
from coterie.fsutil import append_json_line, atomic_write, read_json_lines
from coterie.journal import SyncRunner

if TYPE_CHECKING:
    from pathlib import Path

    from coterie.checkpoints.watch import Watcher

__all__ = ["FULL_EVERY", "SCANS", "BadCheckpoint", "Checkpoint", "CheckpointLog", "checkpoint_log"]

#: A whole snapshot is written after this many deltas (loading replays at most this many;
#: a whole one of a large workspace costs tens of milliseconds, a delta a few).
FULL_EVERY = 256
#: Where a session takes its snapshots: in a worker thread (a snapshot may read many
#: files), never blocking the run's loop. Tests set ``inline_below`` to run them
#: inline, as they do the journal's fsyncs (a thread looks idle to autojump_clock).
SCANS = SyncRunner(inline_below=0.0)


class BadCheckpoint(CoterieError, ValueError):
    """No such checkpoint, or it cannot be rewound to the way asked."""


@attrs.frozen
class Checkpoint:
    """One checkpoint: a prompt (or a rewind) and the snapshots around its work."""

    n: int
    kind: str
    request: str
    text: str
    at: float
    start: int
    #: The snapshot once the work ended; None while it runs (or if a crash cut it short).
    end: int | None = None
    #: For a rewind: the checkpoint it went back to.
    to: int | None = None
    #: The host's id of the prompt (its stream-json user line's ``uuid``), by which
    #: the Agent SDK's ``rewind_files`` names it.
    message: str | None = None
    #: How long the run's other logs were (bytes, by path in the run directory: the
    #: teammates' transcripts, the board's log) when the checkpoint was taken, so a
    #: rewind can cut them back too; None for a checkpoint taken without them.
    marks: dict[str, int] | None = None

    @property
    def first_line(self) -> str:
        return self.text.strip().splitlines()[0] if self.text.strip() else ""


@attrs.frozen
class _Chain:
    """The deltas written since the last whole snapshot: how many paths that one holds,
    how many deltas, how many paths they name in all."""

    whole: int
    deltas: int
    named: int


@attrs.define
class CheckpointLog:
    """The checkpoints of the run whose directory is *run_dir*."""

    run_dir: Path
    #: Where file contents are kept (default: ``checkpoints/objects`` of the run).
    objects: Path | None = None
    _last: Snapshot | None = None
    #: The last snapshot written and its id (the base of the next delta).
    _saved: tuple[int, Snapshot] | None = None
    _chain: _Chain = _Chain(0, 0, 0)
    #: Why no checkpoint is taken in this session (the workspace is too large);
    #: None while they are.
    off: str | None = None
    #: What tells a snapshot what changed in the workspace since the last one
    #: (:func:`~.watch.open_watcher`); without it each snapshot walks everything.
    watcher: Watcher | None = None
    _scanning: threading.Lock = attrs.field(init=False, factory=threading.Lock)

    @property
    def folder(self) -> Path:
        return self.run_dir / "checkpoints"

    @property
    def store(self) -> ObjectStore:
        return ObjectStore(self.objects if self.objects is not None else self.folder / "objects")

    def checkpoints(self) -> list[Checkpoint]:
        """Every checkpoint, oldest first."""
        found: dict[int, Checkpoint] = {}
        for line in self._lines():
            n = line.get("n")
            if not isinstance(n, int):
                continue
            if "start" in line and n not in found:
                found[n] = Checkpoint(
                    n=n,
                    kind=str(line.get("kind", "prompt")),
                    request=str(line.get("request", "")),
                    text=str(line.get("text", "")),
                    at=float(line.get("at", 0.0)),
                    start=int(line["start"]),
                    to=line.get("to"),
                    message=line.get("message"),
                    marks=_marks(line.get("marks")),
                )
            elif "end" in line and n in found:
                found[n] = attrs.evolve(found[n], end=int(line["end"]))
        return [found[n] for n in sorted(found)]

    def snapshot_now(self, workspace: Path) -> Snapshot:
        """A snapshot of *workspace* now (reusing the hashes of the last one taken;
        with the :attr:`watcher`, looking again only at what changed since)."""
        with self._scanning:
            watcher = self.watcher
            if watcher is not None and watcher.root != workspace:
                watcher = None  # it watches another folder
            last = self._last
            dirty = watcher.changes() if watcher is not None else None
            if last is None:
                last, dirty = self._latest(), None  # the watcher's changes are since no snapshot
            on_dir = watcher.watch if watcher is not None else None  # new folders too
            try:
                self._last = scan(workspace, self.store, last, dirty=dirty, on_dir=on_dir)
            except BaseException:
                if watcher is not None:
                    watcher.lost()  # the changes taken are not in any snapshot
                raise
            return self._last

    def close(self) -> None:
        """Stop watching the workspace (the log stays readable)."""
        if self.watcher is not None:
            self.watcher.close()

    def begin(self, workspace: Path, *, request: str, text: str, kind: str = "prompt",
              to: int | None = None, message: str | None = None,
              marks: dict[str, int] | None = None) -> Checkpoint:  # fmt: skip
        """Take checkpoint n+1: the snapshot of *workspace* before the work on *request*
        (and the *marks* of the run's other logs then)."""
        snapshot = self.snapshot_now(workspace)
        sid = self.save(snapshot)
        done = self.checkpoints()
        point = Checkpoint(
            n=(done[-1].n + 1) if done else 1,
            kind=kind,
            request=request,
            text=text,
            at=time.time(),
            start=sid,
            to=to,
            message=message,
            marks=marks,
        )
        line = {k: v for k, v in attrs.asdict(point).items() if k != "end" and v is not None}
        self._append(line)
        return point

    def end(self, workspace: Path, n: int) -> None:
        """Record the snapshot of *workspace* once the work of checkpoint *n* ended."""
        self._append({"n": n, "end": self.save(self.snapshot_now(workspace))})

    # -- snapshots -----------------------------------------------------------------

    def save(self, snapshot: Snapshot) -> int:
        """Write *snapshot* (as a delta on the last one written); its id."""
        folder = self.folder / "snapshots"
        folder.mkdir(parents=True, exist_ok=True)
        ids = self._snapshot_ids()
        sid = (ids[-1] + 1) if ids else 1
        data: dict[str, Any] | None = None
        chain = _Chain(0, 0, 0)
        if ids:
            cached = self._saved
            if cached is not None and cached[0] == ids[-1]:
                base, chain = cached[1], self._chain
            else:
                base, chain = self._load(ids[-1])
            before = base.files
            changed = {  # an entry a scan kept is the same object: `is` settles most
                path: attrs.asdict(entry)
                for path, entry in snapshot.files.items()
                if (old := before.get(path)) is not entry and old != entry
            }
            gone = sorted(set(before) - set(snapshot.files))
            chain = _Chain(chain.whole, chain.deltas + 1, chain.named + len(changed) + len(gone))
            if chain.deltas < FULL_EVERY and chain.named <= chain.whole:
                data = {"base": ids[-1], "set": changed, "del": gone}
        if data is None:
            data = {"full": snapshot.to_json()}
            chain = _Chain(len(snapshot.files), 0, 0)
        atomic_write(folder / f"{sid}.json", json.dumps(data).encode(), sync=True)
        self._saved, self._chain = (sid, snapshot), chain
        return sid

    def load(self, sid: int) -> Snapshot:
        """Snapshot *sid*, rebuilt from its whole ancestor and the deltas since."""
        return self._load(sid)[0]

    def _load(self, sid: int) -> tuple[Snapshot, _Chain]:
        chain: list[dict[str, Any]] = []
        current: int | None = sid
        while current is not None:
            data = json.loads((self.folder / "snapshots" / f"{current}.json").read_text())
            chain.append(data)
            current = None if "full" in data else int(data["base"])
        files = {p: Entry(**f) for p, f in chain[-1]["full"].items()}
        named = 0
        for delta in reversed(chain[:-1]):
            for path in delta["del"]:
                files.pop(path, None)
            files.update({p: Entry(**f) for p, f in delta["set"].items()})
            named += len(delta["del"]) + len(delta["set"])
        return Snapshot(files), _Chain(len(chain[-1]["full"]), len(chain) - 1, named)

    def _latest(self) -> Snapshot | None:
        ids = self._snapshot_ids()
        return self.load(ids[-1]) if ids else None

    def _snapshot_ids(self) -> list[int]:
        try:
            names = os.listdir(self.folder / "snapshots")
        except FileNotFoundError:
            return []
        return sorted(int(n[:-5]) for n in names if n.endswith(".json") and n[:-5].isdigit())

    # -- the log -------------------------------------------------------------------

    def _lines(self) -> list[dict[str, Any]]:
        return read_json_lines(self.folder / "log.jsonl")

    def _append(self, line: dict[str, Any]) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        append_json_line(self.folder / "log.jsonl", line)


def _marks(raw: object) -> dict[str, int] | None:
    """A checkpoint line's ``marks``, if it has them whole."""
    if not isinstance(raw, dict):
        return None
    if not all(isinstance(k, str) and isinstance(v, int) for k, v in raw.items()):
        return None
    return dict(raw)


def checkpoint_log(run_dir: Path, watch: Path | None = None) -> CheckpointLog:
    """The checkpoints of the run in *run_dir*, their contents kept with the project's
    (runs of one workspace share them: a file unchanged between runs is kept once).
    With *watch* (the workspace of a live session), its changes are watched between
    snapshots (:mod:`.watch`; close the log when the session ends)."""
    return CheckpointLog(
        run_dir,
        objects=run_dir.parent.parent / "checkpoint-objects",
        watcher=open_watcher(watch) if watch is not None else None,
    )
