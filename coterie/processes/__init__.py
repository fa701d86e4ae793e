"""Every child process coterie starts: how it is started, recorded and ended.

This package is the one owner of process lifetimes. Whatever a run starts --
a tool's shell command, a hook's command, an MCP server over stdio, and
whatever those start in turn -- goes through :func:`open_group`, which

- starts it in a process group of its own (a new session), behind a gate:
  nothing of the program runs until the group is recorded durably in the
  run's ``procgroups/`` (:mod:`coterie.procgroups` owns those records and
  the start-time checks that keep a recycled pid safe);
- ends the whole group when its user is done, whichever way the user's
  block ends (done, timed out, cancelled by Ctrl-C, SIGTERM or the run's
  stop): SIGTERM, a short grace, SIGKILL; then forgets the record.

A coterie killed with -9 runs none of that; its records remain, and the next
start in the workspace (``coterie resume`` or any run) kills those groups
(:func:`coterie.procgroups.reap_workspace`). The users say only what they
need of a process (its argv, pipes, working directory, environment) and what
is polite before the end (an MCP server's stdin is closed first); none of
them signals a process itself. It must not know of tools, hooks or MCP.
"""

from coterie.processes.group import end_group, group_alive, open_group

__all__ = ["end_group", "group_alive", "open_group"]
