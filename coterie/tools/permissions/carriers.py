"""Options and variables that carry a command of their own.

``tar --to-command='rm x'``, ``ssh -o ProxyCommand='rm x' h``, ``rsync -e``,
``gdb -ex 'shell rm x'``, ``zip -TT``, ``git rebase -x``, ``su -c``,
``GIT_SSH_COMMAND='rm x' git fetch``: the option's value is a command line
the program runs (through a shell, or split into words). :func:`carried`
digs each out, so that :func:`~coterie.tools.permissions.shell.analyze`
reads it as a nested command that deny rules see. ``ssh host CMD`` runs
``CMD`` on another host: it is a command too (``remote``), matched by rules
but not judged against this machine's paths.

Where the command cannot be read from the line (a script file, ``ssh -F
config``, ``LD_PRELOAD``, a gdb command coterie does not know),
:func:`unreadable` says why; the caller treats it as an unknown command,
refused when a Bash deny rule exists and never matched by a narrow allow rule.
"""

from __future__ import annotations

import re
import shlex

import attrs

__all__ = ["Carried", "carried", "unreadable"]

_ASSIGNMENT = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)\+?=(.*)$", re.DOTALL)
#: Variables whose value is a command line a program runs.
COMMAND_VARS = frozenset({
    "GIT_SSH_COMMAND", "GIT_SSH", "GIT_EXTERNAL_DIFF", "GIT_PAGER", "GIT_EDITOR",
    "GIT_SEQUENCE_EDITOR", "GIT_ASKPASS", "SSH_ASKPASS", "GIT_PROXY_COMMAND", "PAGER",
    "MANPAGER", "EDITOR", "VISUAL", "PROMPT_COMMAND", "RSYNC_RSH", "BROWSER", "SUDO_ASKPASS",
})  # fmt: skip
#: Variables that make a program load code or settings coterie cannot read.
OPAQUE_VARS = frozenset({
    "BASH_ENV", "ENV", "LD_PRELOAD", "LD_AUDIT", "TAR_OPTIONS", "GIT_CONFIG_COUNT",
    "GIT_CONFIG_PARAMETERS", "GIT_CONFIG", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM",
    "GIT_EXEC_PATH", "LESSOPEN", "LESSCLOSE", "SSH_CONFIG",
})  # fmt: skip
_DECLARERS = frozenset({"env", "export", "declare", "typeset", "readonly", "local"})


@attrs.frozen
class Carried:
    """One command line a program runs: its text, why it needs care, where it runs."""

    text: str
    why: str
    remote: bool = False


def _scan(
    words: list[str],
    short: str,
    long: frozenset[str],
    *,
    stop: bool = False,
    exact: frozenset[str] = frozenset(),
) -> tuple[list[tuple[str, str | None]], list[str]]:
    """``getopt`` reading: (option, value) pairs and operands.

    *short* lists the letters taking a value, *long* the long options taking
    one; a long option abbreviating one of them counts as it (over-reporting is
    safe), unless it is one of the program's own options named in *exact*
    (tar's ``--checkpoint`` is no abbreviation of ``--checkpoint-action``).
    With *stop*, the first operand ends the options.
    """
    options: list[tuple[str, str | None]] = []
    operands: list[str] = []
    i = 1
    while i < len(words):
        word = words[i]
        if word == "--":
            operands += words[i + 1 :]
            break
        if word.startswith("--") and len(word) > 2:
            name, eq, value = word.partition("=")
            full = next((o for o in sorted(long) if o.startswith(name) and len(name) > 3), None)
            full = None if name in exact else full
            if full is not None and not eq and i + 1 < len(words):
                value, eq = words[i + 1], "="
                i += 1
            options.append((full or name, value if eq else None))
        elif word.startswith("-") and len(word) > 1:
            for k, letter in enumerate(word[1:], start=1):
                if letter in short:
                    value = word[k + 1 :]
                    if not value and i + 1 < len(words):
                        value = words[i + 1]
                        i += 1
                    options.append(("-" + letter, value))
                    break
                options.append(("-" + letter, None))
        else:
            operands.append(word)
            if stop:
                operands += words[i + 1 :]
                break
        i += 1
    return options, operands


def _values(options: list[tuple[str, str | None]], *names: str) -> list[str]:
    return [v for o, v in options if o in names and v is not None]


# -- the programs -------------------------------------------------------------------

_TAR_SHORT = "bCfFgHIKLNTVX"
_TAR_LONG = frozenset({
    "--checkpoint-action", "--to-command", "--use-compress-program", "--rsh-command",
    "--rmt-command", "--info-script", "--new-volume-script", "--file", "--directory",
})  # fmt: skip


#: tar's own options that read like abbreviations of the ones above.
_TAR_OWN = frozenset({"--checkpoint", "--to-stdout", "--totals"})


def _tar_words(words: list[str]) -> list[str]:
    """``tar cIf PROG a.tar`` (old style: letters whose values follow in order) as getopt's."""
    if len(words) < 2 or words[1].startswith("-"):
        return words
    out, values = [words[0]], iter(words[2:])
    taken = 0
    for letter in words[1]:
        out.append("-" + letter)
        if letter in _TAR_SHORT:
            out.append(next(values, ""))
            taken += 1
    return out + words[2 + taken :]


def _tar(words: list[str]) -> tuple[list[Carried], str | None]:
    options, _ = _scan(_tar_words(words), _TAR_SHORT, _TAR_LONG, exact=_TAR_OWN)
    found = [Carried(v, "a command tar runs") for v in _values(
        options, "--to-command", "-I", "--use-compress-program", "--rsh-command", "--rmt-command"
    )]  # fmt: skip
    for action in _values(options, "--checkpoint-action"):
        if action.startswith("exec="):
            found.append(Carried(action[5:], "a command tar runs at a checkpoint"))
    scripts = _values(options, "-F", "--info-script", "--new-volume-script")
    return found, ("tar runs the script file " + scripts[0]) if scripts else None


_SSH_SHORT = "BbcDEeFIiJLlmOoPpQRSWw"
_SSH_COMMAND_KEYS = frozenset({"proxycommand", "localcommand", "knownhostscommand"})
_SSH_OPAQUE_KEYS = frozenset({"pkcs11provider", "securitykeyprovider", "include", "match"})


def _ssh_options(options: list[tuple[str, str | None]]) -> tuple[list[Carried], str | None]:
    found: list[Carried] = []
    why: str | None = None
    for value in _values(options, "-o"):
        key = re.split(r"[\s=]", value.strip(), maxsplit=1)[0]
        setting = value.strip()[len(key) :].lstrip(" \t=")
        if key.lower() in _SSH_COMMAND_KEYS and setting.lower() != "none":
            found.append(Carried(setting, f"a command ssh runs ({key})"))
        elif key.lower() == "remotecommand":
            found.append(Carried(setting, "", remote=True))
        elif key.lower() in _SSH_OPAQUE_KEYS:
            why = f"ssh -o {key} loads what coterie cannot read"
    configs = [v for v in _values(options, "-F") if v not in ("none", "/dev/null")]
    if configs:
        why = f"ssh reads the configuration file {configs[0]}, which may name programs"
    if _values(options, "-I"):
        why = "ssh -I loads a library"
    return found, why


def _ssh(words: list[str]) -> tuple[list[Carried], str | None]:
    # ssh reads options before and after the host; the words after that are the command.
    options, operands = _scan(words, _SSH_SHORT, frozenset(), stop=True)
    if operands:
        more, operands = _scan(["ssh", *operands[1:]], _SSH_SHORT, frozenset(), stop=True)
        options += more
    found, why = _ssh_options(options)
    if operands:
        found.append(Carried(" ".join(operands), "", remote=True))
    return found, why


def _scp(words: list[str]) -> tuple[list[Carried], str | None]:
    options, _ = _scan(words, "cDFiJlOoPSX", frozenset())
    found, why = _ssh_options(options)
    found += [Carried(v, "the program scp runs as ssh") for v in _values(options, "-S")]
    found += [Carried(v, "the program sftp runs") for v in _values(options, "-D")]
    return found, why


def _rsync(words: list[str]) -> tuple[list[Carried], str | None]:
    options, _ = _scan(words, "eBfMT", frozenset({"--rsh", "--rsync-path", "--filter"}))
    found = [Carried(v, "the remote shell rsync runs") for v in _values(options, "-e", "--rsh")]
    found += [Carried(v, "", remote=True) for v in _values(options, "--rsync-path")]
    return found, None


_GDB_VALUED = frozenset({
    "ex", "eval-command", "iex", "init-eval-command", "x", "command", "ix", "init-command",
    "p", "pid", "c", "core", "cd", "d", "directory", "s", "symbols", "e", "exec", "se", "tty",
    "i", "interpreter", "D", "data-directory", "b", "l",
})  # fmt: skip
_GDB_SAFE = frozenset({
    "run", "r", "start", "starti", "bt", "backtrace", "where", "info", "i", "print", "p",
    "break", "b", "tbreak", "continue", "c", "next", "n", "step", "s", "finish", "quit", "q",
    "kill", "k", "x", "list", "l", "frame", "f", "up", "down", "disassemble", "display",
    "thread", "echo", "detach", "set", "handle", "catch", "watch", "delete", "attach",
    "file", "core-file", "symbol-file", "show", "nexti", "stepi", "ni", "si", "until",
})  # fmt: skip


def _gdb(words: list[str]) -> tuple[list[Carried], str | None]:
    found: list[Carried] = []
    why: str | None = None
    commands: list[str] = []
    operands: list[str] = []
    i = 1
    while i < len(words):
        word = words[i]
        name, eq, value = word.lstrip("-").partition("=")
        if word in ("--args", "-args"):
            found.append(Carried(shlex.join(words[i + 1 :]), "the program gdb runs"))
            break
        if word.startswith("-") and name in _GDB_VALUED:
            if not eq and i + 1 < len(words):
                value = words[i + 1]
                i += 1
            if name in ("ex", "eval-command", "iex", "init-eval-command"):
                commands.append(value)
            elif name in ("x", "command", "ix", "init-command"):
                why = f"gdb runs the command file {value}"
        elif not word.startswith("-"):
            operands.append(word)
        i += 1
    for command in commands:
        text = command.strip()
        first = text.split(None, 1)[0] if text else ""
        rest = text[len(first) :].strip()
        if text.startswith("!"):
            found.append(Carried(text[1:], "a shell command gdb runs"))
        elif first and "shell".startswith(first) and len(first) >= 3:
            found.append(Carried(rest, "a shell command gdb runs"))
        elif first in ("run", "r", "start", "starti") and re.search(r"[$`;|&<>()]", rest):
            why = "gdb starts the program through a shell with these arguments"
        elif first and first not in _GDB_SAFE:
            why = f"gdb runs its command {first!r}, which coterie cannot read"
        elif first == "set" and rest.startswith(("logging", "history")):
            why = "gdb writes a file coterie cannot see"
        if first in ("run", "r", "start", "starti") and operands:
            found.append(Carried(shlex.quote(operands[0]), "the program gdb runs"))
    return found, why


def _zip(words: list[str]) -> tuple[list[Carried], str | None]:
    found = []
    for i, word in enumerate(words[1:], start=1):
        name, eq, value = word.partition("=")
        if name in ("-TT", "--unzip-command") or (name.startswith("-TT") and not eq):
            if not eq:
                value = word[3:] if name.startswith("-TT") and len(word) > 3 else ""
                value = value or (words[i + 1] if i + 1 < len(words) else "")
            found.append(Carried(value, "the command zip tests with"))
    return found, None


_GIT_GLOBAL_VALUED = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace"})


def _git(words: list[str]) -> tuple[list[Carried], str | None]:
    found: list[Carried] = []
    why = None
    i = 1
    while i < len(words) and words[i].startswith("-"):
        if words[i].startswith("--exec-path="):
            why = "`git --exec-path` runs git's programs from another directory"
        i += 2 if words[i] in _GIT_GLOBAL_VALUED else 1
    sub, args = (words[i], words[i + 1 :]) if i < len(words) else ("", [])
    for j, word in enumerate(args):
        name, eq, value = word.partition("=")
        nxt = args[j + 1] if j + 1 < len(args) else ""
        if name in ("--upload-pack", "--receive-pack", "--exec") or (
            sub == "clone" and name == "-u"
        ):
            found.append(Carried(value if eq else nxt, f"a program git {sub} runs"))
        elif (sub == "rebase" and name in ("-x", "--exec")) or (
            sub == "difftool" and name in ("-x", "--extcmd")
        ):
            found.append(Carried(value if eq else nxt, f"a command git {sub} runs"))
        elif sub == "filter-branch" and name.endswith("-filter"):
            found.append(Carried(value if eq else nxt, "a command git filter-branch runs"))
        elif word.startswith("-x") and len(word) > 2 and sub in ("rebase", "difftool"):
            found.append(Carried(word[2:], f"a command git {sub} runs"))
    if sub == "bisect" and args[:1] == ["run"]:
        found.append(Carried(shlex.join(args[1:]), "a command git bisect runs"))
    if sub == "submodule" and "foreach" in args:
        found.append(Carried(" ".join(args[args.index("foreach") + 1 :]), "git submodule foreach"))
    return found, why


def _su(words: list[str]) -> tuple[list[Carried], str | None]:
    options, _ = _scan(words, "cgGsuw", frozenset({"--command", "--session-command"}))
    texts = _values(options, "-c", "--command", "--session-command")
    return [Carried(t, f"a command {words[0]} runs") for t in texts], None


_SED_EXECUTES = re.compile(
    r"(?:^|[;\n{}])\s*(?:[0-9$,~+!]|/(?:[^/\\]|\\.)*/|\\(.)(?:(?!\1).)*\1|\s)*e(?:\s|$|;)"
    r"|s(?P<d>[^\s\\\w])(?:(?!(?P=d))[^\\]|\\.)*(?P=d)(?:(?!(?P=d))[^\\]|\\.)*(?P=d)"
    r"[gpiImM0-9w]*e",
    re.DOTALL,
)


def _sed(words: list[str]) -> tuple[list[Carried], str | None]:
    options, operands = _scan(words, "efl", frozenset({"--expression", "--file"}))
    scripts = _values(options, "-e", "--expression")
    if _values(options, "-f", "--file"):
        return [], "sed runs a script file, whose `e` commands run shell commands"
    if not scripts and operands:
        scripts = operands[:1]
    if any(_SED_EXECUTES.search(s) for s in scripts):
        return [], "sed's `e` command runs shell commands coterie cannot read"
    return [], None


_PROGRAMS = {
    "tar": _tar,
    "bsdtar": _tar,
    "ssh": _ssh,
    "scp": _scp,
    "sftp": _scp,
    "rsync": _rsync,
    "gdb": _gdb,
    "zip": _zip,
    "git": _git,
    "su": _su,
    "runuser": _su,
    "sg": _su,
    "sed": _sed,
}


def _variables(words: list[str]) -> tuple[list[Carried], str | None]:
    """Program-naming variables set before the command or by ``env``/``export``."""
    found: list[Carried] = []
    why = None
    start = 1 if words and words[0] in _DECLARERS else 0
    skip = False
    for word in words[start:]:
        m = _ASSIGNMENT.match(word)
        if skip or (m is None and start and word.startswith("-")):
            skip = word in ("-u", "--unset", "-C", "--chdir", "-S", "--split-string")
            continue
        if m is None:
            break  # the command itself: its arguments are its own
        name, value = m.groups()
        if name in COMMAND_VARS:
            found.append(Carried(value, f"the command {name} names"))
        elif name in OPAQUE_VARS:
            why = f"{name} makes a program run or read what coterie cannot see"
    return found, why


def _read(words: list[str]) -> tuple[list[Carried], str | None]:
    if not words:
        return [], None
    found, why = _variables(words)
    reader = _PROGRAMS.get(words[0])
    if reader is not None:
        more, also = reader(words)
        found += more
        why = why or also
    return found, why


_PLAIN = re.compile(r"[\w./:=@%+,-]+(?: +[\w./:=@%+,-]+)*")


def carried(words: list[str]) -> list[Carried]:
    """The command lines the simple command *words* runs through its options.

    A carried command of plain words (``tar -I 'zstd -19'``) is a simple
    command like any other, for allow rules too; anything else (``;``, quotes,
    expansions) keeps its reason, so that no narrow allow rule approves it.
    """
    return [
        attrs.evolve(c, why="") if _PLAIN.fullmatch(c.text.strip()) else c
        for c in _read(words)[0]
        if c.text.strip()
    ]


def unreadable(words: list[str]) -> str | None:
    """Why a command the simple command *words* runs cannot be read, or ``None``."""
    return _read(words)[1]
