"""The runtime's git runs no program a repository names: the allow list, pure and real.

The pure half checks :func:`coterie.workspaces.gitsafe.classify` against git's
documented keys that name a program (or pull in configuration, or send git
elsewhere): none is ever inert, whatever its subsection. The real half plants
each of them in a repository, pointing at a script that leaves a marker, and
runs every operation the runtime performs through its one git runner
(:mod:`coterie.workspaces.git`): the marker never appears, and each call
either works or is refused with the one-line reason.
"""

from __future__ import annotations

import ast
import inspect
import subprocess
from typing import TYPE_CHECKING

import pytest
from hypothesis import given
from hypothesis import strategies as st

from coterie.agent._prompt import context_reminder
from coterie.tools.permissions.gitread import repository_is_inert
from coterie.workspaces import GitError, gitsafe
from coterie.workspaces.git import (
    config_is_inert,
    git_command,
    git_sync,
    run_git,
    safe_git_config,
)
from coterie.workspaces.gitsafe import (
    RULES,
    SAFE_GIT_CONFIG,
    GitRefused,
    classify,
    has_submodule,
    parse_listing,
    plan,
    user_config,
)

if TYPE_CHECKING:
    from pathlib import Path

#: git's keys that name a program, pull in configuration or redirect git
#: (git-config(1), gitattributes(5), git-lfs aside); ``<>`` is any subsection.
PROGRAM_KEYS = (
    "core.fsmonitor", "core.hooksPath", "core.pager", "core.editor", "core.sshCommand",
    "core.askPass", "core.gitProxy", "core.alternateRefsCommand", "core.worktree",
    "sequence.editor", "pager.status", "pager.log", "credential.helper",
    "credential.<>.helper", "diff.external", "diff.<>.textconv", "diff.<>.command",
    "merge.<>.driver", "filter.<>.clean", "filter.<>.smudge", "filter.<>.process",
    "mergetool.<>.cmd", "mergetool.<>.path", "difftool.<>.cmd", "difftool.<>.path",
    "remote.<>.uploadpack", "remote.<>.receivepack", "remote.<>.vcs", "gpg.program",
    "gpg.openpgp.program", "gpg.x509.program", "gpg.ssh.program", "gpg.<>.program",
    "gpg.ssh.defaultKeyCommand", "uploadpack.packObjectsHook", "submodule.<>.update",
    "interactive.diffFilter", "trailer.<>.command", "trailer.<>.cmd", "commit.gpgSign",
    "tag.gpgSign", "tag.forceSignAnnotated", "push.gpgSign", "log.showSignature",
    "merge.verifySignatures", "include.path", "includeIf.<>.path", "url.<>.insteadOf",
    "url.<>.pushInsteadOf", "protocol.allow", "protocol.<>.allow", "sendemail.smtpServer",
    "sendemail.sendmailCmd", "sendemail.<>.smtpServer", "tar.<>.command", "guitool.<>.cmd",
    "web.browser", "browser.<>.cmd", "browser.<>.path", "man.<>.cmd", "man.<>.path",
    "help.browser", "instaweb.httpd", "imap.tunnel", "branch.<>.mergeOptions",
    "pull.twohead", "pull.octopus", "init.templateDir", "submodule.recurse",
    "fetch.recurseSubmodules", "push.recurseSubmodules", "status.submoduleSummary",
    "diff.ignoreSubmodules", "lfs.customtransfer.<>.path", "lfs.extension.<>.clean",
)  # fmt: skip

_subsections = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="\0\n"), max_size=20
)
_variables = st.from_regex(r"[A-Za-z][A-Za-z0-9-]{0,15}", fullmatch=True)


def _key(shape: str, sub: str) -> str:
    return shape.replace("<>", sub)


@given(shape=st.sampled_from(PROGRAM_KEYS), sub=_subsections)
def test_no_program_naming_key_is_ever_inert(shape: str, sub: str) -> None:
    assert classify(_key(shape, sub)) != "inert"
    assert classify(_key(shape, sub).lower()) != "inert"


@given(shape=st.sampled_from(sorted(k for k, v in RULES.items() if v == "inert")),
       sub=_subsections, variable=_variables)  # fmt: skip
def test_every_key_the_allow_list_names_is_inert(shape: str, sub: str, variable: str) -> None:
    key = _key(shape, sub).replace("*", variable)
    assert classify(key) == "inert"
    assert plan([key]) == list(SAFE_GIT_CONFIG)


@given(section=_variables, sub=_subsections, variable=_variables)
def test_an_unknown_key_is_refused_with_one_line_naming_it(
    section: str, sub: str, variable: str
) -> None:
    known = {k.partition(".")[0] for k in RULES}
    if section.lower() in known:
        return
    key = f"{section}.{sub}.{variable}" if sub else f"{section}.{variable}"
    assert classify(key) == "refused"
    with pytest.raises(GitRefused) as refused:
        plan(["core.bare", key])
    assert key in str(refused.value)
    assert "could make git run a program" in str(refused.value)


def test_neutralised_keys_get_their_overrides_per_subsection() -> None:
    config = plan([
        "filter.lfs.clean", "filter.lfs.process", "diff.pic.textconv", "protocol.ext.allow",
        "protocol.weird.allow", "credential.https://h.helper",
    ])  # fmt: skip
    assert ("filter.lfs.clean", "") in config
    assert ("filter.lfs.required", "false") in config
    assert config.count(("filter.lfs.clean", "")) == 1
    assert ("diff.pic.textconv", "") in config
    assert ("protocol.ext.allow", "never") in config
    assert ("protocol.weird.allow", "never") in config
    assert ("protocol.allow", "never") in config
    assert ("credential.https://h.helper", "") in config
    assert ("core.hooksPath", "/dev/null") in config
    assert ("commit.gpgSign", "false") in config


def test_the_listing_is_parsed_with_and_without_values() -> None:
    text = "local\0core.bare\nfalse\0local\0core.x\0worktree\0a.b.c\nline1\nline2\0"
    assert parse_listing(text) == [
        ("local", "core.bare", "false"),
        ("local", "core.x", None),
        ("worktree", "a.b.c", "line1\nline2"),
    ]


def test_the_users_settings_are_passed_on_but_not_a_local_identity() -> None:
    listed = "user.name\nAda\0user.email\nada@e.invalid\0credential.helper\nstore\0"
    assert user_config(listed, ["core.bare"]) == [
        ("user.name", "Ada"), ("user.email", "ada@e.invalid"), ("credential.helper", "store"),
    ]  # fmt: skip
    assert user_config(listed, ["User.Name"]) == [
        ("user.email", "ada@e.invalid"), ("credential.helper", "store"),
    ]  # fmt: skip
    assert user_config("", []) == []


def test_a_gitlink_in_the_index_is_a_submodule() -> None:
    blob = "100644 " + "a" * 40 + " 0\tREADME"
    assert not has_submodule(f"{blob}\0")
    assert has_submodule(f"{blob}\x00160000 {'b' * 40} 0\tsub\x00")
    assert not has_submodule("")


def test_the_decisions_run_nothing() -> None:
    """The allow list is sans-io: running git is :mod:`coterie.workspaces.git`'s alone."""
    tree = ast.parse(inspect.getsource(gitsafe))
    imported = {
        alias.name.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    } | {
        str(node.module).split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
    }
    assert not imported & {"subprocess", "trio", "pathlib", "shutil"}


# --- real git -------------------------------------------------------------------


def _git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@e.invalid", *args],
        cwd=cwd, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return done.stdout


@pytest.fixture
def lab(tmp_path: Path) -> dict[str, Path]:
    """A repository with a branch that conflicts with main on ``data.bin`` (which
    ``.gitattributes`` gives a merge, filter and diff driver), a bare remote, a
    script that leaves a marker, and an include file that names the script."""
    marker = tmp_path / "ran"
    script = tmp_path / "evil.sh"
    script.write_text(f'#!/bin/sh\necho "$0 $*" >> {marker}\nexit 1\n')
    script.chmod(0o755)
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    (repo / ".gitattributes").write_text("data.bin merge=drv filter=flt diff=dif\n")
    (repo / "data.bin").write_text("base\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "base")
    _git(repo, "checkout", "-qb", "other")
    (repo / "data.bin").write_text("theirs\n")
    _git(repo, "commit", "-qam", "theirs")
    _git(repo, "checkout", "-q", "main")
    (repo / "data.bin").write_text("ours\n")
    _git(repo, "commit", "-qam", "ours")
    bare = tmp_path / "bare.git"
    _git(tmp_path, "init", "-q", "--bare", str(bare))
    include = tmp_path / "included"
    include.write_text(f"[core]\n\tfsmonitor = {script}\n")
    return {"repo": repo, "marker": marker, "script": script, "bare": bare, "include": include}


def _planted(key: str, lab: dict[str, Path]) -> list[tuple[str, str]]:
    """The configuration that makes *key* name the lab's script (plus what it needs)."""
    s, bare = str(lab["script"]), lab["bare"]
    special = {
        "include.path": [("include.path", str(lab["include"]))],
        "includeIf.<>.path": [(f"includeIf.gitdir:{lab['repo']}/.path", str(lab["include"]))],
        "url.<>.insteadOf": [(f"url.ext::{s} %S .insteadOf", f"file://{bare}"),
                             ("protocol.ext.allow", "always")],
        "url.<>.pushInsteadOf": [(f"url.ext::{s} %S .pushInsteadOf", f"file://{bare}"),
                                 ("protocol.ext.allow", "always")],
        "protocol.allow": [("protocol.allow", "always"), ("remote.origin.url", f"ext::{s} %S")],
        "protocol.<>.allow": [("protocol.ext.allow", "always"),
                              ("remote.origin.url", f"ext::{s} %S")],
        "commit.gpgSign": [("commit.gpgSign", "true"), ("gpg.program", s)],
        "tag.gpgSign": [("tag.gpgSign", "true"), ("gpg.program", s)],
        "push.gpgSign": [("push.gpgSign", "true"), ("gpg.program", s)],
        "gpg.ssh.program": [("commit.gpgSign", "true"), ("gpg.format", "ssh"),
                            ("gpg.ssh.program", s), ("user.signingKey", "key::x")],
        "submodule.<>.update": [("submodule.x.update", f"!{s}")],
        "core.worktree": [("core.worktree", str(lab["script"].parent))],
        "merge.<>.driver": [("merge.drv.driver", f"{s} %O %A %B")],
        "remote.<>.receivepack": [("remote.origin.url", f"file://{bare}"),
                                  ("remote.origin.receivepack", s)],
        "remote.<>.uploadpack": [("remote.origin.url", f"file://{bare}"),
                                 ("remote.origin.uploadpack", s)],
        "credential.<>.helper": [("credential.https://127.0.0.1.helper", s)],
    }  # fmt: skip
    if key in special:
        return special[key]
    subsection = {"diff": "dif", "filter": "flt", "merge": "drv", "remote": "origin"}
    section = key.partition(".")[0]
    return [(key.replace("<>", subsection.get(section, "x")), s)]


def _operations(lab: dict[str, Path]) -> list[tuple[Path, tuple[str, ...]]]:
    """Every kind of git command the runtime runs (and a few it could), in order."""
    repo, bare, tmp = lab["repo"], lab["bare"], lab["repo"].parent
    return [
        (repo, ("status", "--porcelain")),
        (repo, ("add", "-A")),
        (repo, ("commit", "-q", "--allow-empty", "-m", "more")),
        (repo, ("-c", "user.name=t", "-c", "user.email=t@e", "merge", "-q", "--no-edit", "other")),
        (repo, ("merge", "--abort")),
        (repo, ("push", "-q", f"file://{bare}", "HEAD:refs/heads/pushed")),
        (repo, ("push", "-q", "origin", "HEAD:refs/heads/pushed2")),
        (repo, ("fetch", "-q", "origin")),
        (repo, ("push", "-q", "ssh://127.0.0.1:1/x", "HEAD")),
        (repo, ("worktree", "add", "-q", "--detach", str(tmp / "wt"), "HEAD")),
        (tmp, ("clone", "-q", f"file://{repo}", str(tmp / "clone"))),
        (repo, ("diff", "HEAD~1")),
        (repo, ("log", "-p", "-2")),
        (repo, ("submodule", "update")),
    ]  # fmt: skip


@pytest.mark.parametrize("key", PROGRAM_KEYS)
def test_a_planted_key_never_runs_its_program(key: str, lab: dict[str, Path]) -> None:
    repo, marker = lab["repo"], lab["marker"]
    planted = _planted(key, lab)
    for name, value in planted:
        _git(repo, "config", "--add", name, value)
    (repo / "data.bin").write_text("changed\n")
    refused = [name for name, _ in planted if classify(name.lower()) == "refused"]
    for cwd, args in _operations(lab):
        why = _refusal(cwd, args)
        if why is None:
            assert not refused or cwd != repo, f"git {args} ran despite {refused}"
        else:
            assert refused, f"git {args} refused though nothing is refused: {why}"
            assert "\n" not in why
            assert "could make git run a program" in why
        assert not marker.exists(), f"git {' '.join(args)} ran {marker.read_text()}"
    argv, env = _command_or_none(repo, ("credential", "fill"))
    if argv:
        subprocess.run(argv, cwd=repo, env=env, input="protocol=https\nhost=127.0.0.1\n\n",
                       capture_output=True, text=True, check=False, timeout=30)  # fmt: skip
    assert not marker.exists()


def _refusal(cwd: Path, args: tuple[str, ...]) -> str | None:
    """Run ``git ARGS`` as the runtime does; the reason if it was refused."""
    try:
        git_sync(cwd, *args, check=False)
    except GitError as exc:
        return str(exc)
    return None


def _command_or_none(repo: Path, args: tuple[str, ...]) -> tuple[list[str], dict[str, str]]:
    try:
        return git_command(repo, args)
    except GitRefused:
        return [], {}


def test_the_runtimes_git_still_works_under_neutralised_keys(lab: dict[str, Path]) -> None:
    repo, marker, s = lab["repo"], lab["marker"], str(lab["script"])
    planted = [
        ("filter.flt.clean", s), ("filter.flt.smudge", s), ("filter.flt.required", "true"),
        ("core.fsmonitor", s), ("commit.gpgSign", "true"), ("gpg.program", s),
        ("core.hooksPath", "."),
    ]  # fmt: skip
    for name, value in planted:
        _git(repo, "config", name, value)
    (repo / "pre-commit").write_text(f"#!/bin/sh\n{s}\n")
    (repo / "pre-commit").chmod(0o755)
    (repo / "data.bin").write_text("changed\n")
    git_sync(repo, "add", "-A")
    git_sync(repo, "commit", "-q", "-m", "works")
    assert _git(repo, "show", "HEAD:data.bin") == "changed\n"  # stored as it is
    assert not marker.exists()
    assert not config_is_inert(repo)  # the model's own git status would run them


def test_the_users_identity_comes_from_their_own_global_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("GIT_CONFIG_GLOBAL", raising=False)
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    (tmp_path / ".gitconfig").write_text(
        "[user]\n\tname = Ada\n\temail = ada@example.invalid\n[alias]\n\tx = !nothing\n"
    )
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    config = safe_git_config(repo)
    assert ("user.name", "Ada") in config
    assert not any(k.startswith("alias.") for k, _ in config)  # only the listed keys
    _git(repo, "config", "user.name", "Local Name")
    assert ("user.name", "Ada") not in safe_git_config(repo)  # the repository's wins
    out = run_git(repo, "config", "user.name")
    assert out is not None
    assert out.stdout == "Local Name\n"


def test_an_unreadable_configuration_refuses(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    (repo / ".git" / "config").write_text("[core\n")
    with pytest.raises(GitRefused, match="cannot be read"):
        safe_git_config(repo)
    assert not config_is_inert(repo)


def test_a_plain_repository_is_inert_and_runs(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    _git(repo, "remote", "add", "origin", "https://example.invalid/x.git")
    assert config_is_inert(repo)
    out = run_git(repo, "status", "--short")
    assert out is not None
    assert out.returncode == 0


def test_the_snapshot_names_the_key_it_would_not_run_git_under(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    _git(repo, "config", "include.path", str(tmp_path / "more"))
    prompt = context_reminder(repo, trusted=True, home=tmp_path)
    assert (
        "Git repository: not checked (the repository's git configuration sets include.path,"
        " which could make git run a program; the runtime will not run git here)"
    ) in prompt


def test_the_models_git_passes_only_where_every_key_is_inert(tmp_path: Path) -> None:
    """Its git runs with the repository's configuration as it is: a key the runtime
    would override (an fsmonitor) is enough to ask."""
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    _git(repo, "config", "pull.rebase", "true")
    assert repository_is_inert(repo)
    _git(repo, "config", "core.fsmonitor", "true")
    assert not repository_is_inert(repo)
    _git(repo, "config", "--unset", "core.fsmonitor")
    _git(repo, "config", "include.path", "elsewhere")
    assert not repository_is_inert(repo)


def test_a_submodule_makes_the_models_git_ask(tmp_path: Path) -> None:
    """``git status`` runs itself in each submodule, under the submodule's own
    configuration (not read here): the model's git asks."""
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    _git(repo, "commit", "-q", "--allow-empty", "-m", "x")
    assert repository_is_inert(repo)
    head = _git(repo, "rev-parse", "HEAD").strip()
    _git(repo, "update-index", "--add", "--cacheinfo", f"160000,{head},sub")
    assert not repository_is_inert(repo)
    assert repository_is_inert(tmp_path)  # no repository: git runs nothing of one
