"""The extensions a command line gives a run before it starts: for expanding a
``/command`` prompt and for the interactive session's own commands.

They are read as the run will read them (:mod:`coterie.runtime.prepare`): the
settings with what the command line approves of the workspace
(:func:`coterie.trust.run_approval`: ``--setting-sources``), the plugins of
``--plugin-dir`` and those the settings enable, and the workspace's files only
when ``--setting-sources`` (if given) names ``project``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from coterie.extensions import load_extensions
from coterie.extensions.installed import run_plugins
from coterie.tools.permissions.settings import SOURCES, load_settings
from coterie.trust import run_approval

if TYPE_CHECKING:
    import argparse

    from coterie.extensions import Extensions

__all__ = ["command_line_extensions"]


def command_line_extensions(args: argparse.Namespace) -> Extensions:
    """The extensions of a run started by *args* (a resume gives no plugins)."""
    workdir = args.workdir.resolve()
    sources = getattr(args, "setting_sources", None)
    approved = run_approval(workdir, sources)
    settings = load_settings(workdir, sources=SOURCES if sources is None else sources,
                             approved=approved)  # fmt: skip
    return load_extensions(
        workdir,
        trusted=settings.trusted,
        approved=approved,
        read_project=sources is None or "project" in sources,
        plugins=run_plugins(getattr(args, "plugin_dir", ()), settings),
    )
