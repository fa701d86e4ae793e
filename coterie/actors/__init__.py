"""Actors: named behaviours with a durable mailbox, run under supervision.

This package owns the actor base (the receive loop with acknowledgement and
de-duplication by message id), the context an actor talks through (``send``,
``ask`` with a timeout, ``reply``, ``stop``), and :func:`actor_spec`, which
turns an actor into a supervisor child. It builds on ``coterie.mailbox`` and
``coterie.supervisors`` and must not reach into their private modules. The
concrete actor kinds (Lead, Teammate, GoalEvaluator, Scheduler,
AutoModeClassifier) live here as they arrive.
"""

from coterie.actors._actor import STOP, Actor, Behaviour, actor_spec
from coterie.actors._context import ActorContext, SeenIds
from coterie.actors.classifier import (
    AutoModeAsker,
    AutoModeClassifier,
    Classification,
    classifier_spec,
    classify_action,
)
from coterie.actors.evaluator import GoalEvaluator, evaluate_goal, evaluator_spec, goal_transcript

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
