"""Watched snapshots: with the kernel's file events a snapshot looks again only at what
changed, and still gives exactly what a walk of the whole workspace gives."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from coterie.checkpoints import CheckpointLog, ObjectStore, Snapshot, scan
from coterie.checkpoints.changes import IN_ISDIR, IN_Q_OVERFLOW, ChangeLog, Dirty
from coterie.checkpoints.watch import Watcher, open_watcher
from tests.checkpoints.test_snapshots import NAMES, _op, apply, put

IN_MODIFY, IN_CREATE, IN_MOVED_FROM, IN_DELETE = 0x2, 0x100, 0x40, 0x200

_probe = open_watcher(Path("."))
if _probe is None:  # pragma: no cover - not Linux
    if os.environ.get("CI") == "true":
        raise RuntimeError("CI must run the watcher's tests: inotify is not available")
    pytest.skip("inotify is not available here", allow_module_level=True)
_probe.close()


def watched(root: Path, store: ObjectStore) -> tuple[Watcher, Snapshot]:
    watcher = open_watcher(root)
    assert watcher is not None
    assert watcher.changes() is None  # nothing known yet: walk everything
    return watcher, scan(root, store, on_dir=watcher.watch)


def again(root: Path, store: ObjectStore, watcher: Watcher, last: Snapshot) -> Snapshot:
    return scan(root, store, last, dirty=watcher.changes(), on_dir=watcher.watch)


# Directory moves, on top of the file operations of the walk's own test.
_dir_op = st.one_of(
    st.tuples(
        st.just("mvdir"),
        st.sampled_from(["d", "d/g", "m", "n"]),
        st.sampled_from(["m", "n/o", "OUT"]),
    ),
    st.tuples(st.just("mkdirs"), st.sampled_from(["n/o/p", "d/g/q", "m"]), st.text(max_size=5)),
    st.tuples(st.just("todir"), st.sampled_from(NAMES), st.just("")),
)


def apply_dir(root: Path, op: tuple[str, str, str]) -> None:
    kind, rel, arg = op
    path = root / rel
    outside = root.parent / "outside"
    try:
        if kind == "mvdir" and path.is_dir() and not path.is_symlink():
            target = outside if arg == "OUT" else root / arg
            if not target.exists() and not str(target).startswith(f"{path}/"):
                target.parent.mkdir(parents=True, exist_ok=True)
                os.rename(path, target)
        elif kind == "mvdir" and rel == "m" and outside.is_dir() and not path.exists():
            os.rename(outside, path)  # moved back in from outside
        elif kind == "mkdirs":
            put(root, f"{rel}/made", arg)
        elif kind == "todir" and (path.is_file() or path.is_symlink()):
            path.unlink()
            put(root, f"{rel}/inside", "now a folder")
    except (NotADirectoryError, FileExistsError, IsADirectoryError, OSError):
        pass


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(st.lists(st.one_of(_op, _dir_op), max_size=8), min_size=1, max_size=5))
def test_a_watched_snapshot_is_what_a_walk_gives(
    tmp_path: Path, batches: list[list[tuple[str, str, str]]]
) -> None:
    shutil.rmtree(tmp_path, ignore_errors=True)
    root = tmp_path / "ws"
    store = ObjectStore(tmp_path / "objects")
    put(root, "a", "first\n")
    put(root, "d/f", "keep\n", 0o600)
    put(root, "d/g/h", "deep\n")
    watcher, last = watched(root, store)
    try:
        for ops in batches:
            for op in ops:
                (apply_dir if op[0] in ("mvdir", "mkdirs", "todir") else apply)(root, op)
            last = again(root, store, watcher, last)
            assert last.files == scan(root, store).files
    finally:
        watcher.close()


def test_only_what_changed_is_looked_at(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    for i in range(20):
        put(root, f"dir{i % 4}/f{i}", str(i))
    store = ObjectStore(tmp_path / "objects")
    watcher, _ = watched(root, store)
    put(root, "dir1/f1", "changed")
    (root / "dir2" / "f2").unlink()
    put(root, "new/deeper/g", "new")
    (root / "node_modules" / "pkg").mkdir(parents=True)  # never walked: changes nothing
    (root / "node_modules" / "pkg" / "x.js").write_text("x")
    assert watcher.changes() == Dirty(frozenset({"dir1/f1", "dir2/f2"}), frozenset({"new"}))
    watcher.close()


def test_the_log_of_a_session_uses_its_watcher_and_stays_exact(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    put(root, "a", "1")
    log = CheckpointLog(tmp_path / "run", watcher=open_watcher(root))
    try:
        first = log.begin(root, request="r1", text="one")
        put(root, "a", "2")
        put(root, "b/c", "3")
        second = log.begin(root, request="r2", text="two")
        assert set(log.load(second.start).files) == {"a", "b/c"}
        assert log.load(first.start).files["a"] != log.load(second.start).files["a"]
        assert log.load(second.start).files == scan(root, ObjectStore(tmp_path / "o")).files
    finally:
        log.close()
    assert log.watcher is not None
    assert not log.watcher.on


def test_a_closed_watcher_makes_every_snapshot_walk(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    put(root, "a", "1")
    store = ObjectStore(tmp_path / "objects")
    watcher, last = watched(root, store)
    watcher.close()
    put(root, "a", "2")
    assert watcher.changes() is None
    assert again(root, store, watcher, last).files == scan(root, store).files


def test_a_workspace_with_more_folders_than_the_budget_is_walked(tmp_path: Path) -> None:
    """The user's other programs keep their watches: past its budget the watcher stops
    and each snapshot walks the workspace, exactly as before."""
    root = tmp_path / "ws"
    for i in range(5):
        put(root, f"d{i}/f", str(i))
    store = ObjectStore(tmp_path / "objects")
    watcher = open_watcher(root, budget=3)
    assert watcher is not None
    assert watcher.changes() is None
    last = scan(root, store, on_dir=watcher.watch)
    assert not watcher.on
    put(root, "d4/f", "changed")
    assert again(root, store, watcher, last).files == scan(root, store).files
    roomy = open_watcher(root, budget=6)
    assert roomy is not None
    roomy.changes()
    scan(root, store, on_dir=roomy.watch)
    assert roomy.on
    roomy.close()


def test_overflow_and_the_workspace_going_mean_walk_everything() -> None:
    log = ChangeLog()
    log.watching(1, "")
    assert log.take() is None  # nothing known before the first walk
    log.event(1, IN_MODIFY, "a")
    assert log.take() == Dirty(frozenset({"a"}))
    log.event(0xFFFFFFFF, IN_Q_OVERFLOW, "")
    assert log.take() is None
    log.event(1, 0x400, "")  # IN_DELETE_SELF of the workspace
    assert log.take() is None


def test_a_folder_moved_away_stops_being_watched_with_everything_under_it() -> None:
    log = ChangeLog(frozenset({".git"}))
    for wd, rel in ((1, ""), (2, "d"), (3, "d/g"), (4, "dx")):
        log.watching(wd, rel)
    log.take()
    assert sorted(log.event(1, IN_MOVED_FROM | IN_ISDIR, "d")) == [2, 3]
    log.event(3, IN_MODIFY, "late")  # from the moved folder: its walk covers it
    log.event(4, IN_MODIFY, "kept")
    log.event(1, IN_CREATE | IN_ISDIR, ".git")  # a skipped folder: nothing to walk
    log.event(2, IN_DELETE, "old")
    assert log.take() == Dirty(frozenset({"dx/kept"}), frozenset({"d"}))


def test_a_folder_inside_one_walked_again_is_covered_by_it() -> None:
    log = ChangeLog()
    log.watching(1, "")
    log.watching(2, "n")
    log.take()
    log.event(1, IN_CREATE | IN_ISDIR, "n")
    log.event(2, IN_CREATE | IN_ISDIR, "o")
    log.event(2, IN_MODIFY, "f")
    log.event(1, IN_DELETE, "n-other")
    assert log.take() == Dirty(frozenset({"n-other"}), frozenset({"n"}))
