"""The hard deny list: shell commands no rule, mode or human answer can allow.

These are the commands whose damage reaches beyond the workspace and cannot
be undone: deleting or re-permissioning the root, the home directory or a
top-level system directory; privilege escalation; formatting disks and
writing raw devices; fork bombs; piping a download into a shell; shutting
the machine down. Every simple command of a line is checked, in every
spelling :func:`command_views` knows (``env``, ``nohup``, ``\\rm``,
``/bin/rm``...), including commands nested in substitutions and ``bash -c``
(not what ``ssh host CMD`` runs on another host: this list guards this machine).
"""

from __future__ import annotations

import os
import posixpath
import re

from coterie.tools.permissions.shell import ShellAnalysis, analyze, command_views, tokens

__all__ = ["hard_deny_reason"]

_FORK_BOMB = re.compile(r"(\S+)\s*\(\s*\)\s*\{[^}]*\1\s*\|\s*\1\s*&")
_RAW_DEVICE = re.compile(r">\s*/dev/(sd|hd|vd|xvd|nvme|mmcblk|disk|dm-|md|loop)\w*")
_DOWNLOADERS = frozenset({"curl", "wget", "fetch", "aria2c"})
_INTERPRETERS = re.compile(
    r"^(sh|bash|zsh|dash|ksh|fish|ash|python[0-9.]*|perl|ruby|node|php|source|\.)$"
)
_SUBSTITUTED_DOWNLOAD = re.compile(r"(<\(|\$\(|`)\s*(\S+/)?(curl|wget|fetch|aria2c)\b")
_PRIVILEGE = frozenset({"sudo", "su", "doas", "pkexec", "runuser"})
_DISK_TOOLS = re.compile(r"^(mkfs(\..*)?|mke2fs|mkswap|wipefs|fdisk|sfdisk|parted|blkdiscard)$")
_POWER = frozenset({"shutdown", "reboot", "halt", "poweroff"})
_RECURSIVE_OWNERSHIP = frozenset({"chmod", "chown", "chgrp"})


def _is_recursive(words: list[str]) -> bool:
    return any(
        w in ("--recursive", "-R", "-r")
        or (w.startswith("-") and not w.startswith("--") and ("r" in w or "R" in w))
        for w in words
    )


def _dangerous_target(word: str) -> bool:
    """``/``, ``~``, ``$HOME`` or a top-level directory such as ``/usr``, in any spelling."""
    if any(ch in word for ch in "<>"):
        return False  # a redirection, not an operand
    home = os.path.expanduser("~")
    text = re.sub(r"^(\$HOME|\$\{HOME\}|~)(?=/|$)", home, word)
    if not text.startswith("/"):
        return False
    text = re.sub(r"/+", "/", text)
    text = re.sub(r"(/\.?\*)+$", "", text) or "/"  # `/*` and `/.*` delete what `/` holds
    norm = posixpath.normpath(text)
    return norm == "/" or norm.count("/") == 1 or norm == posixpath.normpath(home)


def _check_words(words: list[str]) -> str | None:
    program, args = words[0], words[1:]
    operands = [w for w in args if not w.startswith("-")]
    if program in _PRIVILEGE:
        return f"`{program}` runs commands with elevated privileges"
    if _DISK_TOOLS.match(program):
        return f"`{program}` formats or repartitions disks"
    if program in _POWER or (program in ("init", "telinit") and operands[:1] in (["0"], ["6"])):
        return f"`{program}` shuts down or reboots the machine"
    if program == "dd" and any(w.startswith("of=/dev/") for w in args):
        return "`dd of=/dev/...` overwrites a raw device"
    if program == "rm":
        if "--no-preserve-root" in args:
            return "`rm --no-preserve-root` deletes the root directory"
        if _is_recursive(args) and any(_dangerous_target(w) for w in operands):
            return "recursive `rm` of /, the home directory or a top-level system directory"
    if (
        program in _RECURSIVE_OWNERSHIP
        and _is_recursive(args)
        and any(_dangerous_target(w) for w in operands)
    ):
        return f"recursive `{program}` of /, the home directory or a system directory"
    if program == "find" and ("-delete" in args or "-exec" in args or "-execdir" in args):
        # find's start points come before its first expression word.
        first_expr = next((i for i, w in enumerate(args) if w.startswith("-")), len(args))
        if any(_dangerous_target(w) for w in args[:first_expr]):
            return "`find` deleting or running commands over /, home or a system directory"
    return None


def _check_pipelines(analysis: ShellAnalysis) -> str | None:
    previous: list[str] = []
    for text, op in analysis.commands:
        programs = [v.split(" ", 1)[0] for v in command_views(text)]
        if (
            op in ("|", "|&")
            and any(p in _DOWNLOADERS for p in previous)
            and any(_INTERPRETERS.match(p) for p in programs)
        ):
            return "piping a download straight into a shell or interpreter runs unreviewed code"
        previous = programs
    return None


def _check_download_exec(command: str, analysis: ShellAnalysis) -> str | None:
    # `bash <(curl ...)`, `sh -c "$(wget -O- ...)"`, `python3 <(curl ...)`
    if not _SUBSTITUTED_DOWNLOAD.search(command):
        return None
    for text, _ in analysis.commands:
        for view in command_views(text):
            if _INTERPRETERS.match(view.split(" ", 1)[0]):
                return "running a downloaded script in a shell or interpreter runs unreviewed code"
    return None


def hard_deny_reason(command: str, _depth: int = 0) -> str | None:
    """Why *command* is on the hard deny list, or ``None`` if it is not."""
    if _FORK_BOMB.search(command):
        return "a fork bomb exhausts the machine's processes"
    if _RAW_DEVICE.search(command):
        return "redirecting output onto a disk device destroys its data"
    analysis = analyze(command)
    reason = _check_pipelines(analysis) or _check_download_exec(command, analysis)
    if reason:
        return reason
    if _depth < 4:
        # Pipelines inside `$(...)` or `bash -c '...'` are only seen as written.
        for text in analysis.inner:
            reason = hard_deny_reason(text, _depth + 1)
            if reason:
                return reason
    # Not the commands `ssh host CMD` runs elsewhere: this list guards this machine.
    for text in analysis.local_commands:
        for view in command_views(text):
            words = tokens(view)
            if words:
                reason = _check_words(words)
                if reason:
                    return reason
    return None
