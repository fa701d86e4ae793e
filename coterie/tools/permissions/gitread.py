"""Which ``git`` invocations only read: subcommands, listing forms, and the options to refuse.

``git status``, ``diff``, ``log``, ``show``... read; ``git branch``, ``tag``,
``remote``, ``stash``, ``config`` read only in their listing forms (an
operand creates, deletes or renames). Global options that run programs
(``-c core.pager=...``, ``-p``) and subcommand options that write a file or
run one (``--output``, ``--ext-diff``, ``--textconv``, ``grep -O``) make any
of them not read-only. Even then git runs what the repository's
``.git/config`` names (fsmonitor, textconv, external diff, a pager...), with
that configuration as it is (not the runtime's overrides of
:mod:`coterie.workspaces.gitsafe`), which is why the policy lets them pass
without a prompt only in a trusted workspace whose configuration is all
inert (:func:`repository_is_inert`: every key on
:mod:`coterie.workspaces.gitsafe`'s allow list, none that would need
overriding).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

from coterie.workspaces import config_is_inert

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    from coterie.tools.permissions.words import Word

__all__ = ["git_reads", "repository_is_inert"]


def _s(*names: str) -> frozenset[str]:
    return frozenset(names)


#: ``git`` subcommands that only read, and the options that would make them write or run programs.
_GIT_READ = frozenset(
    {
        "status", "diff", "log", "show", "blame", "shortlog", "describe", "rev-parse",
        "rev-list", "ls-files", "ls-tree", "cat-file", "show-ref", "for-each-ref",
        "merge-base", "name-rev", "count-objects", "check-ignore", "check-attr",
        "diff-tree", "diff-files", "diff-index", "grep", "version", "whatchanged",
    }
)  # fmt: skip
_GIT_LISTING = {
    # Read-only only in these forms: anything else creates, deletes or renames.
    "branch": _s("--list", "-l", "-a", "-r", "-v", "-vv", "--all", "--show-current", "--merged"),
    "tag": _s("--list", "-l", "-n", "--contains", "--points-at"),
    "remote": _s("-v", "--verbose", "get-url"),
    "stash": _s("list", "show"),
    "worktree": _s("list",),
    "config": _s("--get", "--get-all", "--list", "-l", "--get-regexp", "get", "list"),
    "reflog": _s("show",),
}  # fmt: skip
#: Global options that run programs (``-c core.pager=...``, a forced pager).
_GIT_GLOBAL_FORBIDDEN = _s("-c", "--config-env", "--exec-path", "-p", "--paginate")
#: Subcommand options that write a file or run a program.
_GIT_FORBIDDEN = _s(
    "--output", "--ext-diff", "--textconv", "-O", "--open-files-in-pager", "--upload-pack",
)  # fmt: skip
_GIT_GLOBAL_VALUES = _s("-C", "--git-dir", "--work-tree", "--namespace")


def git_reads(args: Sequence[Word]) -> tuple[Word, ...] | None:
    """The paths ``git ARGS`` reads if it only reads (``-C dir``, pathspecs), else ``None``."""
    reads: list[Word] = []
    i = 0
    while i < len(args) and args[i].value.startswith("-"):
        option = args[i].value
        if option.partition("=")[0] in _GIT_GLOBAL_FORBIDDEN:
            return None
        if option in _GIT_GLOBAL_VALUES and i + 1 < len(args):
            reads.append(args[i + 1])
            i += 1
        elif "=" in option and option.partition("=")[0] in _GIT_GLOBAL_VALUES:
            reads.append(attrs.evolve(args[i], value=option.partition("=")[2]))
        i += 1
    if i >= len(args) or not args[i].literal:
        return None
    sub, rest = args[i].value, list(args[i + 1 :])
    for w in rest:
        if not w.literal and w.value.startswith("-"):
            return None
        option = w.value.partition("=")[0]
        if option in _GIT_FORBIDDEN:
            return None
    if sub in _GIT_READ:
        operands = [w for w in rest if not w.value.startswith("-")]
        return (*reads, *operands)
    listing = _GIT_LISTING.get(sub)
    if listing is not None:
        if sub in ("branch", "tag", "remote"):
            # An operand creates, deletes or renames: only the bare listing forms read.
            listed = all(w.value in listing for w in rest)
        elif sub == "reflog":
            listed = not rest or rest[0].value in listing
        else:  # `git stash` alone stashes; `git config` needs its reading form
            listed = bool(rest) and rest[0].value in listing
        if listed:
            return tuple(reads)
    return None


def repository_is_inert(directory: Path) -> bool:
    """Whether the model's read-only git may run in *directory* without a prompt, as
    far as the repository is concerned: every key of its configuration (local,
    worktree, included) is inert. A key the runtime would override (an fsmonitor, a
    filter driver) is not enough: the model's git runs without the overrides."""
    return config_is_inert(directory)
