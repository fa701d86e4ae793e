"""EnterWorktree / ExitWorktree: an agent moves its work into a git worktree and back.

EnterWorktree makes a worktree of the workspace's repository on a branch of
its own (:mod:`coterie.workspaces.agentworktree`: ``.worktrees/NAME`` on
``worktree-NAME``, locked while in use) and moves the agent there: its file
tools resolve relative paths against it, its sandbox is narrowed to it, its
Bash runs in it. ExitWorktree takes the agent back to the workspace it left,
keeping the worktree and its branch (``action: "keep"``) or removing both
(``"remove"``, refused while the worktree holds changed files or commits that
its workspace's branch lacks, unless ``discard_changes`` is true).

Both change the agent's own context only; entering writes a worktree into
the repository, so both declare :attr:`Effect.WORKSPACE` (asked about like a
write outside acceptEdits). The worktree is inside the workspace, so the
run's sandbox and OS sandbox admit it; permission rules written relative to
the workspace (``Edit(./src/**)``) do not name the worktree's copies.
Deferred, as in Claude Code.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from coterie.tools._base import ToolResult
from coterie.tools.capabilities import Capabilities, Effect
from coterie.workspaces.agentworktree import (
    BRANCH_PREFIX,
    open_worktree,
    release_worktree,
    remove_worktree,
    unfinished_work,
    worktree_of,
)
from coterie.workspaces.git import GitError

if TYPE_CHECKING:
    from coterie.tools._base import ToolContext

__all__ = ["EnterWorktreeTool", "ExitWorktreeTool"]

_CAPS = Capabilities(Effect.WORKSPACE, deferred=True)

_ENTER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {
            "type": "string",
            "description": "The worktree's name (letters, digits, '.', '_', '-'; default: a"
            " fresh one); entering an existing one goes back to it",
        },
        "path": {
            "type": "string",
            "description": "A worktree folder to enter again (one a previous EnterWorktree made)",
        },
    },
    "additionalProperties": False,
}


class EnterWorktreeTool:
    """Creates a git worktree of the workspace on a new branch and works there."""

    name = "EnterWorktree"
    description = (
        "Create an isolated git worktree of the workspace's repository on a new branch"
        " (worktree-NAME, from HEAD) and move your work into it: relative paths and Bash"
        " commands then act in the worktree, not the workspace. Use ExitWorktree to come back,"
        " keeping or removing it."
    )
    input_schema = _ENTER_SCHEMA
    capabilities = _CAPS

    async def run(self, input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Make or re-enter the worktree, and root the agent's tools there."""
        if worktree_of(ctx.workspace) is not None:
            return ToolResult(
                f"You are already in the worktree {ctx.workspace}: ExitWorktree first.",
                is_error=True,
            )
        name = input.get("name")
        if input.get("path"):
            found = worktree_of(ctx.workspace / str(input["path"]))
            if found is None:
                return ToolResult(
                    f"{input['path']} is not a worktree EnterWorktree made.", is_error=True
                )
            name = found[1]
        try:
            tree = await open_worktree(ctx.workspace, str(name) if name else None)
        except (GitError, ValueError) as exc:
            return ToolResult(f"No worktree made: {exc}", is_error=True)
        ctx.workspace = tree.path
        ctx.shell_cwd = tree.path
        how = "Created" if tree.created else "Entered the existing"
        return ToolResult(
            f"{how} worktree at {tree.path} on branch {tree.branch}. You now work in it:"
            " relative paths and Bash commands act there. ExitWorktree (keep or remove)"
            f" takes you back to {tree.origin}."
        )


_EXIT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "action": {
            "type": "string",
            "enum": ["keep", "remove"],
            "description": "keep: leave the worktree and its branch for later; remove: delete both",
        },
        "discard_changes": {
            "type": "boolean",
            "description": "With remove: delete it even though it holds uncommitted changes or"
            " commits not on the workspace's branch",
        },
    },
    "required": ["action"],
    "additionalProperties": False,
}


class ExitWorktreeTool:
    """Leaves the worktree EnterWorktree made, keeping or removing it."""

    name = "ExitWorktree"
    description = (
        "Leave the worktree you entered with EnterWorktree and go back to the workspace."
        ' action "keep" leaves the worktree and its branch in place; "remove" deletes them,'
        " and is refused while they hold work the workspace's branch lacks unless"
        " discard_changes is true."
    )
    input_schema = _EXIT_SCHEMA
    capabilities = _CAPS

    async def run(self, input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Go back to the workspace, keeping or removing the worktree."""
        found = worktree_of(ctx.workspace)
        if found is None:
            return ToolResult("You are not in a worktree (EnterWorktree makes one).", True)
        action = input.get("action")
        if action not in ("keep", "remove"):
            return ToolResult(f'action must be "keep" or "remove", not {action!r}.', True)
        origin, name = found
        path, branch = ctx.workspace, BRANCH_PREFIX + name
        try:
            if action == "remove":
                lost = await unfinished_work(path, branch, origin)
                if lost and not input.get("discard_changes"):
                    return ToolResult(
                        f"Not removed: {path} holds {lost.changed} changed file(s) and"
                        f" {lost.commits} commit(s) not on the workspace's branch. Commit and"
                        ' merge them, use action "keep", or set discard_changes to true.',
                        is_error=True,
                    )
                await remove_worktree(path, branch, origin)
            else:
                await release_worktree(path)
        except GitError as exc:
            return ToolResult(f"The worktree could not be left as asked: {exc}", is_error=True)
        ctx.workspace = origin
        ctx.shell_cwd = origin
        if action == "remove":
            return ToolResult(f"Removed the worktree {path} and branch {branch}; back in {origin}.")
        return ToolResult(
            f"Left the worktree; it is kept at {path} on branch {branch}. Back in {origin}."
        )
