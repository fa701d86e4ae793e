"""Names and texts of a teammate's workspace, as pure functions (no git, no I/O).

A task's work lives on a branch of its own, ``coterie/<run-id>/<task-id>``;
the base the runtime publishes to a shared repository (``--repo``) is
``coterie/<run-id>/base``. Both are valid git ref names for every run id and
task id coterie makes (checked by :func:`check_ref_part`, which refuses
anything git would read as something else).
"""

from __future__ import annotations

import re

__all__ = [
    "BRANCH_PREFIX",
    "BadName",
    "base_branch",
    "check_ref_part",
    "commit_message",
    "merge_message",
    "task_branch",
    "task_of_branch",
]

#: Every branch coterie makes starts with this.
BRANCH_PREFIX = "coterie/"

# Letters, digits, '_', '-' and inner dots: no "..", no leading '-' or '.',
# no ".lock" ending, nothing git's check-ref-format refuses.
_PART = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}")
_TASK_BRANCH = re.compile(r"coterie/(?P<run>[^/]+)/(?P<task>task_[1-9][0-9]{0,8})")


class BadName(ValueError):
    """A run id or task id that cannot be part of a branch name."""


def check_ref_part(value: str) -> str:
    """*value* if it can be one component of a git ref name, else :class:`BadName`."""
    if not _PART.fullmatch(value) or ".." in value or value.endswith((".", ".lock")):
        raise BadName(f"{value!r} cannot be part of a git branch name")
    return value


def task_branch(run_id: str, task_id: str) -> str:
    """The branch the work on *task_id* of run *run_id* is committed on."""
    return f"{BRANCH_PREFIX}{check_ref_part(run_id)}/{check_ref_part(task_id)}"


def base_branch(run_id: str) -> str:
    """The branch holding the lead's HEAD for the clones of run *run_id* (``--repo``)."""
    return f"{BRANCH_PREFIX}{check_ref_part(run_id)}/base"


def task_of_branch(branch: str) -> tuple[str, str] | None:
    """(run id, task id) of a task branch made by :func:`task_branch`, else None."""
    found = _TASK_BRANCH.fullmatch(branch)
    return None if found is None else (found["run"], found["task"])


def _one_line(text: str, limit: int = 72) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def commit_message(task_id: str, subject: str, teammate: str, status: str) -> str:
    """The message of the commit the runtime makes when *teammate* settles *task_id*:
    a summary line naming the task, then where it came from (git trailers)."""
    outcome = "" if status == "completed" else f" ({status})"
    head = _one_line(f"{task_id}: {subject}{outcome}")
    return f"{head}\n\nCoterie-Task: {task_id}\nCoterie-Teammate: {teammate}\n"


def merge_message(branch: str, task_id: str, subject: str | None) -> str:
    """The message of the merge commit MergeTask makes (when not a fast-forward)."""
    about = f" ({_one_line(subject, 50)})" if subject else ""
    return f"Merge {branch}: {task_id}{about}\n\nCoterie-Task: {task_id}\n"
