"""The trust store: answers per folder, inherited by subfolders, fail-closed."""

from __future__ import annotations

import json
import threading
from typing import TYPE_CHECKING

import pytest

from coterie.home import HOME_ENV
from coterie.trust import (
    TrustRefused,
    TrustStoreError,
    can_trust,
    is_trusted,
    named_notice,
    run_approval,
    set_trust,
    trust_entries,
    trust_entry,
    trust_file,
)

if TYPE_CHECKING:
    from pathlib import Path


@pytest.fixture(autouse=True)
def own_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test has a coterie home and a HOME of its own."""
    monkeypatch.setenv(HOME_ENV, str(tmp_path / "coterie-home"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "projects" / "app"
    folder.mkdir(parents=True)
    return folder


def test_nothing_is_trusted_at_first(project: Path) -> None:
    assert not is_trusted(project)
    assert trust_entry(project) is None
    assert trust_entries() == []


def test_trust_is_recorded_under_the_coterie_home(project: Path, tmp_path: Path) -> None:
    set_trust(project, trusted=True)
    assert is_trusted(project)
    assert trust_file() == tmp_path / "coterie-home" / "trust.json"
    stored = json.loads(trust_file().read_text())
    assert stored["folders"][str(project.resolve())]["trusted"] is True


def test_trusting_a_folder_trusts_its_subfolders(project: Path) -> None:
    (project / "src" / "lib").mkdir(parents=True)
    set_trust(project, trusted=True)
    assert is_trusted(project / "src" / "lib")
    assert not is_trusted(project.parent)


def test_the_nearest_answer_decides(project: Path) -> None:
    """A "no" for a subfolder holds under a trusted parent (and the reverse)."""
    (project / "vendor").mkdir()
    set_trust(project, trusted=True)
    set_trust(project / "vendor", trusted=False)
    assert not is_trusted(project / "vendor")
    assert is_trusted(project)
    set_trust(project.parent, trusted=False)
    assert is_trusted(project)


def test_revoking_is_recorded_and_replaces_the_answer(project: Path) -> None:
    set_trust(project, trusted=True)
    entry = set_trust(project, trusted=False)
    assert not is_trusted(project)
    assert trust_entries() == [entry]


def test_a_symlink_is_the_folder_it_points_to(project: Path, tmp_path: Path) -> None:
    link = tmp_path / "link"
    link.symlink_to(project)
    set_trust(link, trusted=True)
    assert is_trusted(project)
    assert trust_entry(project) is not None
    assert trust_entries()[0].folder == project.resolve()


@pytest.mark.parametrize("which", ["home", "root", "above home"])
def test_the_home_directory_and_above_cannot_be_trusted(tmp_path: Path, which: str) -> None:
    folder = {"home": tmp_path / "home", "root": tmp_path.parents[-1], "above home": tmp_path}
    assert can_trust(folder[which]) is not None
    with pytest.raises(TrustRefused, match="home directory"):
        set_trust(folder[which], trusted=True)
    assert not is_trusted(folder[which])


def test_a_hand_written_trust_of_the_home_directory_does_not_count(tmp_path: Path) -> None:
    trust_file().parent.mkdir(parents=True)
    home = str((tmp_path / "home").resolve())
    trust_file().write_text(json.dumps({"folders": {home: {"trusted": True}}}))
    assert not is_trusted(tmp_path / "home")


@pytest.mark.parametrize(
    "content", ["{not json", "[]", '{"folders": []}', '{"folders": {"/x": {"trusted": "yes"}}}']
)
def test_an_unreadable_store_trusts_nothing(project: Path, content: str) -> None:
    trust_file().parent.mkdir(parents=True)
    trust_file().write_text(json.dumps({"folders": {str(project): {"trusted": True}}}))
    assert is_trusted(project)
    trust_file().write_text(content)
    assert not is_trusted(project)
    with pytest.raises(TrustStoreError, match=r"trust\.json"):
        trust_entries()
    with pytest.raises(TrustStoreError):
        set_trust(project, trusted=True)  # never overwrites what it cannot read


def test_answers_given_at_once_are_all_kept(tmp_path: Path) -> None:
    folders = [tmp_path / f"p{i}" for i in range(16)]
    threads = []
    for folder in folders:
        folder.mkdir()
        threads.append(threading.Thread(target=set_trust, args=(folder, True)))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all(is_trusted(folder) for folder in folders)


# -- run_approval: the command line naming the workspace's files ------------------


@pytest.mark.parametrize(
    ("sources", "named"),
    [
        (None, False),
        ((), False),
        (("user",), False),
        (("project",), True),
        (("local",), True),
        (("user", "project", "local"), True),
    ],
)
def test_naming_project_or_local_approves_everything_for_the_run(
    project: Path, sources: tuple[str, ...] | None, named: bool
) -> None:
    approved = run_approval(project, sources)
    assert approved.named is named
    assert approved.trusted is named
    assert approved.approves(".claude/settings.json", "sha256:anything") is named
    assert (named_notice(approved) is not None) is named
    assert not is_trusted(project)  # nothing recorded


def test_a_recorded_no_beats_the_command_line(project: Path) -> None:
    set_trust(project, trusted=False)
    approved = run_approval(project, ("project",))
    assert not approved.trusted
    assert not approved.named


def test_the_home_folder_is_not_trusted_by_the_command_line(tmp_path: Path) -> None:
    approved = run_approval(tmp_path / "home", ("project", "local"))
    assert not approved.trusted


def test_a_trusted_folder_named_needs_no_notice(project: Path) -> None:
    set_trust(project, trusted=True, items={})
    approved = run_approval(project, ("project",))
    assert approved.approves("new-file", "sha256:x")
    assert named_notice(approved) is None
