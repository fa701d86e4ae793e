"""Snapshots and restores: whatever a run does to the files, rewinding to a checkpoint
gives back exactly the tree of that moment (paths, contents, permissions, links)."""

from __future__ import annotations

import os
import shutil
from typing import TYPE_CHECKING

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from coterie.checkpoints import ObjectStore, Snapshot, changed_paths, restore, scan
from coterie.checkpoints.restore import RestoreRefused

if TYPE_CHECKING:
    from pathlib import Path

NAMES = ["a", "b", "c", "d/e", "d/f", "d/g/h", "x y"]


def put(root: Path, rel: str, text: str, mode: int = 0o644) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_symlink():
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path)
    path.write_text(text)
    path.chmod(mode)


def same_tree(a: Snapshot, b: Snapshot) -> bool:
    return set(a.files) == set(b.files) and not changed_paths(a, b)


_op = st.one_of(
    st.tuples(st.just("write"), st.sampled_from(NAMES), st.text(max_size=20)),
    st.tuples(st.just("append"), st.sampled_from(NAMES), st.text(min_size=1, max_size=5)),
    st.tuples(st.just("delete"), st.sampled_from(NAMES), st.just("")),
    st.tuples(st.just("chmod"), st.sampled_from(NAMES), st.just("")),
    st.tuples(st.just("rename"), st.sampled_from(NAMES), st.sampled_from(NAMES)),
    st.tuples(st.just("link"), st.sampled_from(NAMES), st.sampled_from(NAMES)),
    st.tuples(st.just("rmtree"), st.just("d"), st.just("")),
)


def apply(root: Path, op: tuple[str, str, str]) -> None:
    kind, rel, arg = op
    path = root / rel
    try:
        if kind == "write":
            put(root, rel, arg)
        elif kind == "append" and path.is_file() and not path.is_symlink():
            with path.open("a") as f:
                f.write(arg)
        elif kind == "delete" and (path.is_file() or path.is_symlink()):
            path.unlink()
        elif kind == "chmod" and path.is_file() and not path.is_symlink():
            path.chmod(0o755 if not os.access(path, os.X_OK) else 0o600)
        elif kind == "rename" and (path.is_file() or path.is_symlink()) and rel != arg:
            target = root / arg
            if not target.exists() and not target.is_symlink():
                target.parent.mkdir(parents=True, exist_ok=True)
                os.replace(path, target)
        elif kind == "link" and not path.exists() and not path.is_symlink():
            path.parent.mkdir(parents=True, exist_ok=True)
            os.symlink(arg, path)
        elif kind == "rmtree":
            shutil.rmtree(path, ignore_errors=True)
    except (NotADirectoryError, FileExistsError, IsADirectoryError):
        pass  # a path through a file: the operation simply does not happen


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(st.lists(_op, max_size=6), min_size=1, max_size=4), st.data())
def test_rewinding_to_any_checkpoint_gives_its_tree_back(
    tmp_path: Path, prompts: list[list[tuple[str, str, str]]], data: st.DataObject
) -> None:
    root = tmp_path / "ws"
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir()
    store = ObjectStore(tmp_path / "objects")
    put(root, "a", "first\n")
    put(root, "d/f", "keep\n", 0o600)
    checkpoints: list[Snapshot] = []
    last: Snapshot | None = None
    for ops in prompts:
        last = scan(root, store, last)
        checkpoints.append(last)
        for op in ops:
            apply(root, op)
    now = scan(root, store, last)
    n = data.draw(st.integers(0, len(checkpoints) - 1))
    try:
        restore(root, checkpoints[n], changed_paths(checkpoints[n], now), store)
    except RestoreRefused:
        return  # a folder became a link: refused before anything changed
    assert same_tree(scan(root, store), checkpoints[n])


def test_only_moved_files_are_read_again(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    put(root, "a", "1")
    put(root, "b", "2")
    store = ObjectStore(tmp_path / "objects")
    first = scan(root, store)
    (root / "b").write_text("22")
    second = scan(root, store, first)
    assert second.files["a"] is first.files["a"]  # reused, not hashed again
    assert changed_paths(first, second) == {"b"}


def test_files_the_run_did_not_change_are_left_alone(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    put(root, "mine", "before")
    put(root, "theirs", "before")
    store = ObjectStore(tmp_path / "objects")
    checkpoint = scan(root, store)
    put(root, "mine", "after")
    put(root, "theirs", "changed by someone else")
    restore(root, checkpoint, {"mine"}, store)
    assert (root / "mine").read_text() == "before"
    assert (root / "theirs").read_text() == "changed by someone else"


def test_a_folder_turned_into_a_link_is_never_written_through(tmp_path: Path) -> None:
    root, outside = tmp_path / "ws", tmp_path / "outside"
    put(root, "d/f", "x")
    outside.mkdir()
    store = ObjectStore(tmp_path / "objects")
    checkpoint = scan(root, store)
    shutil.rmtree(root / "d")
    os.symlink(outside, root / "d")
    restore(root, checkpoint, changed_paths(checkpoint, scan(root, store)), store)
    assert not (outside / "f").exists()
    assert (root / "d" / "f").read_text() == "x"  # the link went first, the folder came back


def test_git_is_left_out_and_a_damaged_object_is_never_restored(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    put(root, ".git/config", "x")
    put(root, "a", "1")
    store = ObjectStore(tmp_path / "objects")
    snap = scan(root, store)
    assert set(snap.files) == {"a"}
    sha = snap.files["a"].sha
    assert sha is not None
    store.path(sha).write_bytes(b"tampered")
    (root / "a").write_text("2")
    with pytest.raises(Exception, match="damaged"):
        restore(root, snap, {"a"}, store)
    assert (root / "a").read_text() == "2"


def test_a_workspace_over_the_limits_is_refused_before_anything_is_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from coterie.checkpoints import SnapshotTooLarge, snapshot

    root = tmp_path / "ws"
    for name in "abc":
        put(root, name, "x")
    monkeypatch.setattr(snapshot, "MAX_FILES", 2)
    store = ObjectStore(tmp_path / "objects")
    with pytest.raises(SnapshotTooLarge, match="3 files"):
        scan(root, store)
    assert not store.root.exists()
