"""Where the mailbox's fsyncs run: now :mod:`coterie.journal` (``SyncRunner``, ``DISK``).

Kept only so that code written against the old location (``tests/conftest.py``
tunes ``DISK`` for every test) keeps working, with the very same runner
object; new code imports from :mod:`coterie.journal`. Delete this module
once nothing imports it.
"""

from coterie.journal import DISK, SyncRunner

__all__ = ["DISK", "SyncRunner"]
