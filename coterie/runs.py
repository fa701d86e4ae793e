"""Run directories: where one run keeps its state, and how runs are found again.

A run lives under the coterie home, outside its workspace
(``$COTERIE_HOME/projects/<workspace key>/runs/<run_id>/``, see
:mod:`coterie.home`), where no tool may write::

    config.json     what was asked for (command, prompt, options), so that
                    ``coterie resume`` needs no flags
    config.sig      its signature under the user's key: a configuration
                    changed outside coterie is refused on resume
    state.json      where the run is: its pending request, its state and
                    result (replaced atomically)
    lock            held (flock) by the process running it: a run is live
                    exactly while this lock is held
    events.jsonl    the append-only event log
    mailboxes/      one durable mailbox directory per actor
    transcripts/    one durable transcript per agent
    context/        what compaction saved (spilled results, archives)

A run's ``state`` is ``running`` while a process works on it, then
``completed`` or ``failed``; a run whose state says ``running`` but whose
lock nobody holds was interrupted (Ctrl-C, a crash, kill -9) and can be
resumed.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import sys
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from coterie.errors import CoterieError
from coterie.fsutil import atomic_write
from coterie.home import coterie_home, private_dir, sign, verify, workspace_key
from coterie.ids import new_run_id

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

#: Where runs of an older coterie were kept, inside the workspace (no longer read).
LEGACY_RUNS = Path(".coterie") / "runs"
RUNNING, COMPLETED, FAILED, INTERRUPTED = "running", "completed", "failed", "interrupted"
DAMAGED = "damaged"


class UnknownRun(CoterieError, LookupError):
    """No run with that id in the workspace."""


class RunBusy(CoterieError, RuntimeError):
    """Another process is running this run right now."""


class DamagedRun(CoterieError, ValueError):
    """A run's ``config.json`` or ``state.json`` cannot be read: not valid JSON, not
    an object, nested too deep, or unreadable. The message names the file."""


class TamperedRun(CoterieError, PermissionError):
    """A run's ``config.json`` does not match its signature: it was changed outside
    coterie (or by a tool), so what it says the run may do cannot be trusted."""


def runs_root(workdir: Path) -> Path:
    """The folder holding every run of a workspace (under the coterie home)."""
    return coterie_home() / "projects" / workspace_key(workdir) / "runs"


def transcript_path(run_dir: Path, actor: str) -> Path:
    """Where the run keeps *actor*'s durable transcript."""
    return run_dir / "transcripts" / f"{actor}.log"


def actor_of_file(rel: str) -> str | None:
    """The actor a run directory's file at *rel* belongs to: its transcript, its
    subagents' (``transcripts/<actor>-sub-<hex>.log``), its teammate record, its
    Auto Mode counts; None for the run's own files."""
    folder, sep, name = rel.partition("/")
    stem, dot, ext = name.rpartition(".")
    if not sep or not dot or "/" in name:
        return None
    if folder == "transcripts" and ext == "log":
        return stem.split("-sub-", 1)[0]
    if folder in ("teammates", "auto-mode") and ext == "json":
        return stem
    return None


def teammate_files(name: str) -> Callable[[str], bool]:
    """Which of a run directory's files belong to teammate *name*."""
    return lambda rel: actor_of_file(rel) == name


def create_run(
    workdir: Path, config: dict[str, Any], run_id: str | None = None
) -> tuple[str, Path]:
    """Make a new run directory with its signed ``config.json``; returns (run_id, path).

    *run_id* is the id a caller chose (``--session-id``, a UUID as Claude Code
    takes it); a ``ValueError`` if it is not one or a run of this workspace has it."""
    run_id = new_run_id() if run_id is None else chosen_run_id(run_id)
    path = runs_root(workdir) / run_id
    private_dir(path.parent)
    try:
        path.mkdir(mode=0o700)  # a new run id: never there before
    except FileExistsError:
        raise ValueError(f"a run with id {run_id} exists already in this workspace") from None
    private_dir(path / "mailboxes")
    text = (json.dumps({"run_id": run_id, **config}, indent=2) + "\n").encode()
    atomic_write(path / "config.sig", (sign(text) + "\n").encode(), sync=True)
    atomic_write(path / "config.json", text, sync=True)
    return run_id, path


def chosen_run_id(text: str) -> str:
    """*text* as a run id a caller may choose: a UUID, written in its usual form."""
    try:
        value = uuid.UUID(text)
    except ValueError:
        raise ValueError(f"--session-id {text!r}: a session id is a UUID") from None
    return str(value)


def find_run(workdir: Path, run_id: str, *, notify: Callable[[str], None] | None = None) -> Path:
    """The directory of run *run_id* (a unique prefix is enough); raises :class:`UnknownRun`.

    A run recorded in a workspace that no longer exists (the folder was moved
    or renamed) is adopted by *workdir*: see :func:`adopt_moved_run`, which
    tells the user so through *notify* (default: a line on stderr).
    """
    root = runs_root(workdir)
    if run_id and (root / run_id / "config.json").is_file():
        return root / run_id
    matches = sorted(p for p in root.glob(f"{run_id}*") if (p / "config.json").is_file())
    if len(matches) == 1 and run_id:
        return matches[0]
    if not matches and run_id:
        moved = adopt_moved_run(workdir, run_id, notify=notify)
        if moved is not None:
            return moved
    known = [p.name for p in _run_dirs(root)][-5:]
    hint = f"; recent runs: {', '.join(known)}" if known else "; this workspace has no runs"
    what = "is ambiguous" if matches else "not found"
    raise UnknownRun(f"run {run_id!r} {what} in {root}{hint} (see `coterie runs`)")


def adopt_moved_run(
    workdir: Path, run_id: str, *, notify: Callable[[str], None] | None = None
) -> Path | None:
    """Move run *run_id* of another project under *workdir*'s, if its workspace moved.

    Runs are kept under their workspace's path, so a renamed workspace loses
    its runs. A run id is unique across projects: if exactly one project holds
    it (or a unique prefix of it) and that run's recorded workspace no longer
    exists, the run was moved with its folder, and it is the run meant. It is
    then moved to *workdir*'s runs, its ``config.json`` says *workdir* (paths
    inside the old workspace, such as a scenario, follow it) and is signed
    again, so every later command finds it here. ``None`` if no project holds
    the id; :class:`UnknownRun` when it is ambiguous (several projects hold it,
    or its workspace still exists: then it is not this one's to take).
    """
    here = runs_root(workdir)
    found = sorted(
        p
        for p in (coterie_home() / "projects").glob(f"*/runs/{run_id}*")
        if p.parent != here and (p / "config.json").is_file()
    )
    if not found:
        return None
    if len(found) > 1:
        where = ", ".join(str(p) for p in found)
        raise UnknownRun(
            f"run {run_id!r} is not in this workspace and matches runs of several projects"
            f" ({where}); resume it from its own workspace"
        )
    (old,) = found
    config = read_config(old, verified=True)
    recorded = Path(str(config.get("workdir", "")))
    if not str(recorded) or recorded.exists():
        raise UnknownRun(
            f"run {old.name} belongs to the workspace {recorded}, which still exists;"
            f" resume it from there (cd {recorded}), not from {workdir}"
        )
    if is_live(old):
        raise RunBusy(f"run {old.name} is being run by another process right now")
    new = here / old.name
    private_dir(here)
    os.rename(old, new)  # same file system (both under the coterie home): atomic
    moved = {key: _rebase(value, recorded, workdir) for key, value in config.items()}
    text = (json.dumps(moved, indent=2) + "\n").encode()
    # Signed first, as create_run does: coterie itself changed it, so it stays valid.
    atomic_write(new / "config.sig", (sign(text) + "\n").encode(), sync=True)
    atomic_write(new / "config.json", text, sync=True)
    line = (
        f"note: run {old.name} was recorded in {recorded}, which no longer exists;"
        f" it goes on in {workdir}, where it was resumed from"
    )
    if notify is not None:
        notify(line)
    else:
        print(line, file=sys.stderr)
    return new


def rebased(config: dict[str, Any], old: Path, new: Path) -> dict[str, Any]:
    """A run's *config* with every path inside the *old* workspace moved into *new*."""
    return {key: _rebase(value, old, new) for key, value in config.items()}


def fork_run(workdir: Path, run_id: str, new_id: str | None = None) -> Path:
    """A copy of stopped run *run_id* under a new id (*new_id*, a UUID, or a fresh
    one), its conversation and board as they are: the Agent SDK's ``fork_session``.
    The original is left as it was. A ``ValueError`` for a run at work or with a
    request pending (a copy would do that work twice), or an id taken already."""
    source = find_run(workdir, run_id)
    if is_live(source):
        raise ValueError(f"run {source.name} is at work; fork it once it has stopped")
    state = read_state(source)
    if state.get("request") and state.get("state") not in (COMPLETED, FAILED):
        raise ValueError(
            f"run {source.name} has a request pending; finish it (coterie resume"
            f" {source.name}) before forking it"
        )
    config = read_config(source, verified=True)
    if config.get("backend"):
        raise ValueError(f"run {source.name} lives on a server ({config['backend']}): only a"
                         " run on files can be forked")  # fmt: skip
    fork_id = new_run_id() if new_id is None else chosen_run_id(new_id)
    target = source.parent / fork_id
    if target.exists():
        raise ValueError(f"a run with id {fork_id} exists already in this workspace")
    # Not its lock (the fork is not held) nor its process groups (nothing runs).
    shutil.copytree(source, target, ignore=shutil.ignore_patterns("lock", "procgroups"))
    write_config(target, {**config, "run_id": fork_id})
    return target


def write_config(run_dir: Path, config: dict[str, Any]) -> None:
    """Write *config* as the run's ``config.json``, signed under this user's key
    (the signature first, as :func:`create_run` does): coterie itself wrote it."""
    text = (json.dumps(config, indent=2) + "\n").encode()
    atomic_write(run_dir / "config.sig", (sign(text) + "\n").encode(), sync=True)
    atomic_write(run_dir / "config.json", text, sync=True)


def _rebase(value: Any, old: Path, new: Path) -> Any:
    """*value* with a path inside the *old* workspace moved into *new* (lists too)."""
    if isinstance(value, list):
        return [_rebase(item, old, new) for item in value]
    if isinstance(value, str) and value.startswith("/"):
        path = Path(value)
        if path == old or path.is_relative_to(old):
            return str(new / path.relative_to(old))
    return value


def read_config(run_dir: Path, *, verified: bool = False) -> dict[str, Any]:
    """The run's ``config.json``; with *verified*, only if it matches its signature
    (else :class:`TamperedRun`): what a resume runs with must be what coterie wrote."""
    path = run_dir / "config.json"
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise DamagedRun(f"{path}: cannot be read ({exc.strerror or exc})") from None
    if verified:
        try:
            signature = (run_dir / "config.sig").read_text()
        except FileNotFoundError:
            signature = ""
        if not verify(raw, signature):
            raise TamperedRun(
                f"run {run_dir.name}: {path} was changed outside coterie (it does not match"
                " its signature), so it is not resumed; start a new run instead"
            )
    return _parse(path, raw)


def read_state(run_dir: Path) -> dict[str, Any]:
    """The run's ``state.json`` (empty before the first request); :class:`DamagedRun`
    if it cannot be read."""
    path = run_dir / "state.json"
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise DamagedRun(f"{path}: cannot be read ({exc.strerror or exc})") from None
    return _parse(path, raw)


def _parse(path: Path, raw: bytes) -> dict[str, Any]:
    try:
        data = json.loads(raw)
    except RecursionError:
        raise DamagedRun(f"{path}: damaged (nested too deeply to be a run file)") from None
    except ValueError as exc:
        raise DamagedRun(f"{path}: damaged (not valid JSON: {exc})") from None
    if not isinstance(data, dict):
        raise DamagedRun(f"{path}: damaged (not a JSON object)")
    return data


def write_state(run_dir: Path, **changes: Any) -> dict[str, Any]:
    """Merge *changes* into ``state.json`` durably (temp file, fsync, rename)."""
    state = {**read_state(run_dir), **changes, "updated_at": time.time()}
    atomic_write(run_dir / "state.json", (json.dumps(state, indent=2) + "\n").encode(), sync=True)
    return state


@contextlib.contextmanager
def hold_run(run_dir: Path) -> Iterator[None]:
    """Hold the run's lock while working on it; raises :class:`RunBusy` if another has it.

    The lock is an flock, so the kernel releases it when the process dies,
    however it dies: a killed run is never left looking live.
    """
    fd = os.open(run_dir / "lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise RunBusy(f"run {run_dir.name} is being run by another process right now") from None
        yield
    finally:
        os.close(fd)


def is_live(run_dir: Path) -> bool:
    """Whether some process holds the run's lock right now."""
    try:
        fd = os.open(run_dir / "lock", os.O_RDONLY)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


@attrs.frozen
class RunInfo:
    """One line of ``coterie runs``."""

    run_id: str
    path: Path
    command: str
    state: str
    request: str
    result: str | None
    updated_at: float | None

    @property
    def where(self) -> str | None:
        """Where it ran, when a listing spans workspaces (never: it is this one's)."""
        return None

    def to_dict(self) -> dict[str, Any]:
        return {**attrs.asdict(self), "path": str(self.path)}


def run_info(run_dir: Path) -> RunInfo:
    """What a run is and where it stands (state ``damaged``, with the reason as
    its request, when its files cannot be read: one run never hides the others)."""
    try:
        config, state = read_config(run_dir), read_state(run_dir)
    except DamagedRun as exc:
        return RunInfo(run_dir.name, run_dir, "?", DAMAGED, str(exc), None, None)
    status = str(state.get("state", RUNNING))
    if status == RUNNING and not is_live(run_dir):
        status = INTERRUPTED
    request = state.get("request") or {}
    result = state.get("result") or {}
    return RunInfo(
        run_id=run_dir.name,
        path=run_dir,
        command=str(config.get("command", "?")),
        state=status,
        request=str(request.get("text") or config.get("prompt") or config.get("goal") or ""),
        result=result.get("result") if isinstance(result, dict) else None,
        updated_at=state.get("updated_at"),
    )


def list_runs(workdir: Path) -> list[RunInfo]:
    """Every run of the workspace, oldest first (run ids sort by creation time)."""
    return [run_info(p) for p in _run_dirs(runs_root(workdir))]


def _run_dirs(root: Path) -> list[Path]:
    if not root.is_dir():
        return []
    return sorted(p for p in root.iterdir() if (p / "config.json").is_file())
