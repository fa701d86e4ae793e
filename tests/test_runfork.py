"""``fork_run``: a stopped run copied under a new id (the Agent SDK's fork_session)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from coterie.runs import (
    COMPLETED,
    RUNNING,
    create_run,
    fork_run,
    hold_run,
    read_config,
    transcript_path,
    write_state,
)

if TYPE_CHECKING:
    from pathlib import Path

CHOSEN = "0b5c2d6e-0000-4000-8000-00000000000f"


def stopped_run(workdir: Path, **config: object) -> Path:
    _run_id, run_dir = create_run(workdir, {"command": "run", **config})
    transcript_path(run_dir, "lead").parent.mkdir()
    transcript_path(run_dir, "lead").write_bytes(b"the conversation")
    write_state(run_dir, state=COMPLETED, request={"id": "r1", "text": "hi"})
    return run_dir


def test_the_copy_has_the_conversation_and_an_id_of_its_own(tmp_path: Path) -> None:
    source = stopped_run(tmp_path)
    fork = fork_run(tmp_path, source.name, CHOSEN)
    assert fork.name == CHOSEN
    assert read_config(fork, verified=True)["run_id"] == CHOSEN  # signed again
    assert read_config(source, verified=True)["run_id"] == source.name
    assert transcript_path(fork, "lead").read_bytes() == b"the conversation"
    assert not (fork / "lock").exists()
    assert json.loads((fork / "state.json").read_text())["state"] == COMPLETED
    assert fork_run(tmp_path, source.name).name not in (source.name, CHOSEN)


def test_a_run_that_is_not_settled_or_not_on_files_is_not_forked(tmp_path: Path) -> None:
    source = stopped_run(tmp_path)
    fork_run(tmp_path, source.name, CHOSEN)
    with pytest.raises(ValueError, match="exists already"):
        fork_run(tmp_path, source.name, CHOSEN)
    with hold_run(source), pytest.raises(ValueError, match="at work"):
        fork_run(tmp_path, source.name)
    write_state(source, state=RUNNING, request={"id": "r2", "text": "more"})
    with pytest.raises(ValueError, match="pending"):
        fork_run(tmp_path, source.name)
    remote = stopped_run(tmp_path, backend="redis://127.0.0.1:1/0")
    with pytest.raises(ValueError, match="on files"):
        fork_run(tmp_path, remote.name)
