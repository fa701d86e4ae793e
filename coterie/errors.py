"""Exceptions raised by coterie, split by whose fault they are.

Every exception subclasses :class:`CoterieError` *and* the nearest builtin, so
a broad ``except ValueError`` in user code still catches a bad actor name.
"""

from __future__ import annotations


class CoterieError(Exception):
    """Base of every error coterie raises on purpose."""


# -- the caller's fault: bad input, refused before anything is written ------


class InvalidActorName(CoterieError, ValueError):
    """An actor name does not match ``^[a-z0-9][a-z0-9_-]{0,63}$``."""


class UnknownActor(CoterieError, LookupError):
    """A message was addressed to an actor that has no mailbox in this run."""


class InvalidMessage(CoterieError, TypeError):
    """A message's body is not JSON-serialisable, or a field has the wrong type."""


# -- something on disk is wrong: not the caller's input, not a bug ----------


class MailboxError(CoterieError, OSError):
    """A mailbox directory holds something coterie did not write.

    Raised on open, before anything is changed, naming the offending file.
    Corruption *inside* a record log is never raised: it is skipped and
    reported (see :class:`coterie.mailbox.CorruptRecord`).
    """


# -- runtime outcomes --------------------------------------------------------


class AskTimeout(CoterieError, TimeoutError):
    """No reply to an :meth:`ActorContext.ask` arrived within its timeout."""


class SupervisorGaveUp(CoterieError, RuntimeError):
    """A supervisor exceeded its restart intensity and shut its children down.

    This is how a failure escalates: the parent supervisor sees its child
    supervisor crash with this error and applies its own strategy.
    """
