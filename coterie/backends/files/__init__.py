"""The files backend (the default): a run's state in its run directory, on one host.

The post office is ``mailboxes/`` (:mod:`coterie.mailbox`), the board
``board/`` (:mod:`coterie.board`), the events ``events.jsonl``; the run's
lock says whether a process runs it. Modules: ``provider`` (what
:mod:`coterie.backends.choice` selects), ``stores``, ``reader`` (``runs``,
``tasks``, ``inbox``), ``source`` (``watch``, ``observe``), ``address`` (the
fault commands and the observer's questions to a live run).
"""

__all__: list[str] = []
