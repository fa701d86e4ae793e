"""Actors: named behaviours with a durable mailbox, run under supervision.

This package owns the actor base (the receive loop with acknowledgement and
de-duplication by message id), the context an actor talks through (``send``,
``ask`` with a timeout, ``reply``, ``stop``), and :func:`actor_spec`, which
turns an actor into a supervisor child. It builds on ``coterie.mailbox`` and
``coterie.supervisors`` and must not reach into their private modules. The
concrete actor kinds (Lead, Teammate, GoalEvaluator, Scheduler,
AutoModeClassifier) live here as they arrive.
"""

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from coterie.actors._actor import STOP, Actor, Behaviour, actor_spec
    from coterie.actors._context import ActorContext, SeenIds
    from coterie.actors.classifier import (
        AutoModeAsker,
        AutoModeClassifier,
        Classification,
        classifier_spec,
        classify_action,
    )
    from coterie.actors.evaluator import (
        GoalEvaluator,
        evaluate_goal,
        evaluator_spec,
        goal_transcript,
    )

__all__ = [
    "STOP",
    "Actor",
    "ActorContext",
    "AutoModeAsker",
    "AutoModeClassifier",
    "Behaviour",
    "Classification",
    "GoalEvaluator",
    "SeenIds",
    "actor_spec",
    "classifier_spec",
    "classify_action",
    "evaluate_goal",
    "evaluator_spec",
    "goal_transcript",
]


#: Where each public name is defined. Imported on first use (PEP 562), so that one
#: light module of the package can be imported by its full dotted path (the
#: command line's parser does) without loading the whole package.
_HOMES = {
    "STOP": "coterie.actors._actor",
    "Actor": "coterie.actors._actor",
    "Behaviour": "coterie.actors._actor",
    "actor_spec": "coterie.actors._actor",
    "ActorContext": "coterie.actors._context",
    "SeenIds": "coterie.actors._context",
    "AutoModeAsker": "coterie.actors.classifier",
    "AutoModeClassifier": "coterie.actors.classifier",
    "Classification": "coterie.actors.classifier",
    "classifier_spec": "coterie.actors.classifier",
    "classify_action": "coterie.actors.classifier",
    "GoalEvaluator": "coterie.actors.evaluator",
    "evaluate_goal": "coterie.actors.evaluator",
    "evaluator_spec": "coterie.actors.evaluator",
    "goal_transcript": "coterie.actors.evaluator",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, _, attribute = home.partition(":")
    value = getattr(importlib.import_module(module), attribute or name)
    globals()[name] = value  # once is enough
    return value
