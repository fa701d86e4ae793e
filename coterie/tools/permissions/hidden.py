"""Command strings one command runs that are not its own words.

``env -S 'rm x'``, ``script -c 'rm x'``, ``flock F -c 'rm x'``,
``git -c alias.x='!rm x'``, ``alias x='rm'``, ``trap 'rm x' EXIT`` and a shell
fed a here-string (``bash <<< 'rm x'``) each hold a command line of their
own; :func:`hidden_in` digs it out so that :func:`~coterie.tools.permissions.
shell.analyze` reads it as a nested command, and deny rules see it.
"""

from __future__ import annotations

from coterie.tools.permissions.words import parse_simple

__all__ = ["SHELLS", "hidden_in"]

#: Programs that run shell command lines.
SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "fish", "ash", "busybox"})


def _option_value(words: list[str], short: str, long: str) -> str | None:
    """The value of ``-X VALUE`` (also bundled, ``-qX VALUE``), ``-XVALUE`` or ``--long=VALUE``."""
    for i, word in enumerate(words[1:], start=1):
        if word == "--":
            return None
        bundled = word.startswith("-") and not word.startswith("--") and word.endswith(short[1])
        if word == long or bundled:
            return words[i + 1] if i + 1 < len(words) else None
        if word.startswith(long + "="):
            return word.partition("=")[2]
        if word.startswith(short) and len(word) > 2:
            return word[2:]
    return None


def hidden_in(program: str, words: list[str], text: str) -> list[tuple[str, str]]:
    """The command strings that *program* runs, which are not its own words."""
    found: list[tuple[str, str]] = []
    value: str | None = None
    if program == "env":
        value = _option_value(words, "-S", "--split-string")
        if value is not None:
            found.append((value, "env -S"))
    elif program == "script" or (program == "flock" and ("-c" in words or "--command" in words)):
        value = _option_value(words, "-c", "--command")
        if value is not None:
            found.append((value, f"{program} -c"))
    elif program == "git":
        for i, word in enumerate(words[:-1]):
            key, _, setting = words[i + 1].partition("=")
            if word == "-c" and key.lower().startswith("alias.") and setting.startswith("!"):
                found.append((setting[1:], "a git alias running a shell command"))
    elif program == "alias":
        for word in words[1:]:
            _, eq, body = word.partition("=")
            if eq:
                found.append((body, "an alias"))
    elif program == "trap" and len(words) > 2:
        found.append((words[1], "trap"))
    elif program in SHELLS and "-c" not in words[1:]:
        for redirect in parse_simple(text).redirects:
            if redirect.op == "<<<" and redirect.target is not None:
                found.append((redirect.target.value, "a shell reading a here-string"))
    return found
