"""Claude Code's hooks: the user's own programs run at points of a run.

This package owns the ``hooks`` key of the settings files (:mod:`.config`:
parsing, with a clear error naming the file), the matchers (:mod:`.matching`),
the sans-io reading of what a hook answered and the combination of several
answers to one event (:mod:`.outcome`), the thin Trio layer that runs the
handlers (:mod:`.runner`: command handlers in a process group of their own,
``http`` handlers POSTing the same JSON, ``callback`` handlers calling a
Python function of the embedding program: :mod:`.callbacks`; ``prompt`` and
``agent`` handlers asking the run's model: :mod:`.judgement` reads the
answers, :class:`.judge.Judge` asks, :class:`.readtools.ReadOnlyTools` are an
agent hook's tools; ``async: true`` commands in the background:
:mod:`.background`) and the :class:`Hooks` of a run with the
:class:`AgentHooks` each actor fires them through (:mod:`.fire`).

It knows nothing of agents or actors, and of tools only what
:mod:`.readtools` borrows (imported when a run builds them): the runtime builds one
:class:`Hooks` per run and gives each agent its :class:`AgentHooks`; the
places that fire an event (the tool registry, the permission gate, the turn
loop, the task tools, the teammate, the subagent launcher, the session) read
the :class:`Verdict` they get back.
"""

from __future__ import annotations

from coterie.hooks.callbacks import HookMatcher, callback_hooks
from coterie.hooks.catalogue import EVENTS, HookEvent
from coterie.hooks.config import Handler, HookConfig, HookGroup, HooksConfigError, load_hooks
from coterie.hooks.fire import Actor, AgentHooks, Hooks
from coterie.hooks.matching import matches
from coterie.hooks.outcome import Outcome, Verdict, combine, read_result
from coterie.hooks.runner import HookCallback

__all__ = [
    "EVENTS",
    "Actor",
    "AgentHooks",
    "Handler",
    "HookCallback",
    "HookConfig",
    "HookEvent",
    "HookGroup",
    "HookMatcher",
    "Hooks",
    "HooksConfigError",
    "Outcome",
    "Verdict",
    "callback_hooks",
    "combine",
    "load_hooks",
    "matches",
    "read_result",
]
