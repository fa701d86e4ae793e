"""A teammate's permission policy and OS sandbox, rooted at its own checkout.

With ``--isolation worktree`` a teammate's tools work in its checkout, not
in the lead's workspace (docs/isolation.md). The tools' sandbox follows the
tool context's workspace; what the run's policy and Bash sandbox were built
for the lead's workspace is moved here, failing closed:

- a rule anchored at the lead's workspace (``/path`` in the project's
  settings) holds in the checkout too; deny and ask rules keep their
  original anchor as well (they only ever narrow), allow rules move;
- the Bash sandbox admits the checkout for writing instead of the workspace.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

from coterie.tools import Bubblewrap, PermissionPolicy

if TYPE_CHECKING:
    from collections.abc import Iterable
    from pathlib import Path

    from coterie.tools import Rule

__all__ = ["rooted_policy", "rooted_sandbox"]


def _moved(rules: Iterable[Rule], lead: Path, root: Path) -> list[Rule]:
    return [attrs.evolve(rule, root=root) for rule in rules if rule.root == lead]


def rooted_policy(policy: PermissionPolicy, lead: Path, root: Path) -> PermissionPolicy:
    """*policy* (built for the workspace *lead*) for an agent working in *root*.

    A copy: what a person grants at this agent's prompt holds for this agent."""
    allow = [rule for rule in policy.allow if rule.root != lead]
    return attrs.evolve(
        policy,
        allow=(*allow, *_moved(policy.allow, lead, root)),
        ask=(*policy.ask, *_moved(policy.ask, lead, root)),
        deny=(*policy.deny, *_moved(policy.deny, lead, root)),
    )


def rooted_sandbox(
    sandbox: Bubblewrap | None, root: Path, extra_dirs: Iterable[Path]
) -> Bubblewrap | None:
    """The Bash sandbox of an agent working in *root* (None: no sandbox)."""
    if sandbox is None:
        return None
    return Bubblewrap.from_settings(
        sandbox.settings,
        root,
        extra_dirs,
        sandbox.hidden,
        executable=sandbox.executable,
        read_deny_rules=sandbox.read_deny_rules,
    )
