"""Reading a shell command well enough to judge it, without running it.

:func:`analyze` splits a command line into the simple commands it runs: on
``&&``, ``||``, ``;``, ``|``, ``|&``, ``&`` and newlines, and at subshell
parentheses, never inside quotes. It also digs out the commands hidden in
``$(...)``, backticks, ``<(...)``/``>(...)``, ``bash -c '...'``, ``eval ...``
``find -exec ...``, ``env -S '...'``, ``script -c '...'``, ``flock F -c '...'``,
``git -c alias.x='!...'``, ``alias x='...'``, ``trap '...'``, a shell fed a
here-string, and options or variables carrying a command (``tar --to-command``,
``ssh -o ProxyCommand``, ``gdb -ex 'shell ...'``, ``GIT_SSH_COMMAND=``:
:mod:`~coterie.tools.permissions.carriers`) (the *nested* commands; what
``ssh host CMD`` runs on another host is kept apart as *remote*), and notes
what makes a command impossible to approve by a rule alone (the *risks*:
substitutions, nested shells, here-documents, unbalanced quotes, and
``${...}`` parameter expansions, whose operators (``${X:-rm}``, ``${X/a/b}``,
``${!X}``) make any text: Claude Code refuses them too). ``$((...))``
arithmetic runs nothing, but the substitutions inside it are found. A
subshell ``( ... )`` is noted too: ``acceptEdits`` does not cover file
commands in one, as Claude Code does not.

:func:`command_views` gives the spellings of one simple command that a deny
rule must see through: leading ``VAR=value`` assignments, wrappers
(``env``, ``nohup``, ``timeout 5``, ``taskset 1``, ``chrt -o 0``, ``prlimit``,
``sudo``...: :mod:`~coterie.tools.permissions.wrappers`), shell keywords
(``then``, ``do``), ``\\rm`` and ``/bin/rm``, ``flock FILE``, ``chroot DIR``.

This is a conservative reader, not a shell: where it cannot tell, it
over-reports commands and risks (a deny rule may fire on a here-document
line), never under-reports them.
"""

from __future__ import annotations

import os
import re
import shlex

import attrs

from coterie.tools.permissions.carriers import carried
from coterie.tools.permissions.hidden import SHELLS, hidden_in
from coterie.tools.permissions.words import matching_close
from coterie.tools.permissions.wrappers import strip_wrapper

__all__ = ["ShellAnalysis", "analyze", "command_views", "tokens", "word_views"]

_MAX_DEPTH = 4
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=")
_KEYWORDS = frozenset(
    {"if", "then", "elif", "else", "do", "while", "until", "!", "{", "(", "coproc"}
)
_CLOSERS = frozenset({"fi", "done", "esac", "}", ")", ";;"})
_SHELLS = SHELLS


@attrs.frozen
class ShellAnalysis:
    """What a command line runs, as far as can be told without running it.

    ``commands`` are the top-level simple commands with the operator before
    each (``""`` for the first); ``nested`` the simple commands found inside
    substitutions and nested shells, and ``inner`` those command lines as
    written (to check pipelines in them); ``risks`` why no allow rule may
    approve it on its own.
    """

    commands: tuple[tuple[str, str], ...]
    nested: tuple[str, ...] = ()
    risks: tuple[str, ...] = ()
    inner: tuple[str, ...] = ()
    #: Simple commands run on another host (``ssh host CMD``): rules see them,
    #: but their paths are not this machine's.
    remote: tuple[str, ...] = ()
    #: Some part runs in a subshell ``( ... )``.
    subshell: bool = False

    @property
    def local_commands(self) -> tuple[str, ...]:
        """Top-level and nested simple commands run on this machine."""
        return tuple(c for c, _ in self.commands) + self.nested

    @property
    def all_commands(self) -> tuple[str, ...]:
        """Top-level, nested and remote simple commands together."""
        return self.local_commands + self.remote


def analyze(command: str, _depth: int = 0) -> ShellAnalysis:
    """Split *command* into simple commands and find what hides inside them."""
    # The shell removes a backslash-newline before reading words: `r\<newline>m` is rm.
    parts, inner, risks, subshell = _split(command.replace("\\\n", ""))
    elsewhere: list[str] = []
    for text, _ in parts:
        for hidden, why, remote in _hidden_commands(text):
            if why:
                risks.append(why)
            (elsewhere if remote else inner).append(hidden)
    nested: list[str] = []
    remote_commands: list[str] = []
    for text in inner:
        _add_nested(text, _depth, nested, remote_commands, risks)
    for text in elsewhere:
        _add_nested(text, _depth, remote_commands, remote_commands, risks)
    return ShellAnalysis(
        tuple(parts),
        tuple(nested),
        tuple(dict.fromkeys(risks)),
        tuple(dict.fromkeys(inner)),
        tuple(dict.fromkeys(remote_commands)),
        subshell,
    )


def _add_nested(
    text: str, depth: int, nested: list[str], remote: list[str], risks: list[str]
) -> None:
    if depth >= _MAX_DEPTH:
        risks.append("commands nested too deeply to check")
        nested.append(text)
        return
    sub = analyze(text, depth + 1)
    nested.extend(sub.local_commands)
    remote.extend(sub.remote)
    risks.extend(sub.risks)


def _split(command: str) -> tuple[list[tuple[str, str]], list[str], list[str], bool]:
    parts: list[tuple[str, str]] = []
    subshell = False
    inner: list[str] = []
    risks: list[str] = []
    buf: list[str] = []
    op = ""

    def flush(next_op: str) -> None:
        nonlocal op
        text = "".join(buf).strip()
        buf.clear()
        if not text:
            # `a | (b)`: the parenthesis must not hide that b reads a's output.
            op = op or next_op if parts else ""
            return
        if text not in _CLOSERS:
            parts.append((text, op))
        op = next_op

    # Here-documents whose delimiter is quoted: (delimiter, strip tabs, first part of the line).
    pending: list[tuple[str, bool, int]] = []
    i, n, quote = 0, len(command), None
    while i < n:
        c = command[i]
        nxt = command[i + 1] if i + 1 < n else ""
        if c == "\n" and not quote and pending:
            flush("\n")
            i = _here_bodies(command, i + 1, pending, parts, inner)
            pending.clear()
            continue
        if quote == "'":
            buf.append(c)
            quote = None if c == "'" else quote
            i += 1
            continue
        if c == "\\":
            buf.append(command[i : i + 2])
            i += 2
            continue
        if c == "$" and nxt == "{":
            risks.append("a parameter expansion ${...}")
        if c == "`" or (c == "$" and nxt == "(") or (c in "<>" and nxt == "(" and not quote):
            if c == "`":
                end = command.find("`", i + 1)
                body_start = i + 1
                risks.append("command substitution with backticks")
            else:
                end = matching_close(command, i + 1, "(", ")")
                body_start = i + 2
                if _arithmetic(command, i, end):
                    # `$((40+2))` runs nothing; substitutions inside it still run.
                    _held(command[i + 3 : end - 1], inner, risks)
                    buf.append(command[i : end + 1])
                    i = end + 1
                    continue
                if c == "$":
                    risks.append("command substitution $(...)")
                else:
                    risks.append(f"process substitution {c}(...)")
            if end < 0:
                risks.append("an unterminated substitution")
                end = n
            inner.append(command[body_start:end])
            buf.append(command[i : end + 1])
            i = end + 1
            continue
        if quote == '"':
            buf.append(c)
            quote = None if c == '"' else quote
            i += 1
            continue
        if c in "'\"":
            quote = c
            buf.append(c)
            i += 1
            continue
        if c == "#" and (not buf or buf[-1][-1:].isspace()):
            end = command.find("\n", i)
            i = n if end < 0 else end
            continue
        if c == "<" and nxt == "<" and "<" not in (command[i + 2 : i + 3], command[i - 1 : i]):
            # `<<`, not the here-string `<<<`. A quoted delimiter makes the body plain
            # data, skipped exactly; an unquoted one expands it, read as commands.
            m = _QUOTED_HEREDOC.match(command, i)
            if m:
                word = next(w for w in m.group("w1", "w2", "w3") if w is not None)
                pending.append((word, bool(m.group("dash")), len(parts)))
            else:
                risks.append("a here-document")
        if c in "&|" and nxt == c:
            flush(c + c)
            i += 2
            continue
        if c == "|":
            if buf and buf[-1].endswith(">"):  # `>|` clobbers; it is a redirection
                buf.append(c)
            else:
                flush("|&" if nxt == "&" else "|")
                i += 1 if nxt != "&" else 2
                continue
        elif c == "&":
            if (buf and buf[-1][-1:] in "<>") or nxt == ">":  # 2>&1, >&, &>
                buf.append(c)
            else:
                flush("&")
        elif c in ";\n()":
            subshell = subshell or c == "("
            flush(";" if c != "\n" else "\n")
        else:
            buf.append(c)
        i += 1
    if quote:
        risks.append("unbalanced quotes")
    flush("")
    return parts, inner, risks, subshell


_QUOTED_HEREDOC = re.compile(
    r"<<(?P<dash>-?)[ \t]*(?:'(?P<w1>[^']*)'|\"(?P<w2>[^\"]*)\"|\\(?P<w3>\w+))"
)


def _here_bodies(
    command: str,
    start: int,
    pending: list[tuple[str, bool, int]],
    parts: list[tuple[str, str]],
    inner: list[str],
) -> int:
    """Skip the bodies of quoted here-documents (no expansion: data), from *start*.

    A body read by a shell on its line (``bash <<'EOF'``, ``cat <<'EOF' | sh``)
    is commands, and becomes a nested command line. Returns where reading goes on.
    """
    i = start
    for delimiter, strip, first in pending:
        lines: list[str] = []
        while i < len(command):
            end = command.find("\n", i)
            end = len(command) if end < 0 else end
            line = command[i:end]
            i = end + 1
            if (line.lstrip("\t") if strip else line) == delimiter:
                break
            lines.append(line)
        programs = {v.split(" ", 1)[0] for text, _ in parts[first:] for v in command_views(text)}
        if programs & SHELLS:
            inner.append("\n".join(lines))
    return min(i, len(command))


def tokens(text: str) -> list[str]:
    """Shell words of one simple command (quotes removed); whitespace split if unbalanced."""
    try:
        return shlex.split(text, comments=False, posix=True)
    except ValueError:
        return text.split()


def _strip_one(words: list[str]) -> list[str] | None:
    """*words* with one layer of wrapping removed, or ``None`` if there is none."""
    if not words:
        return None
    first = words[0]
    if _ASSIGNMENT.match(first) or first in _KEYWORDS:
        return words[1:]
    if first.startswith("\\") and len(first) > 1:
        return [first[1:], *words[1:]]
    if "/" in first and not first.endswith("/"):
        return [os.path.basename(first), *words[1:]]
    if first in ("(", "{") or first.startswith(("(", "{")):
        return [first.lstrip("({"), *words[1:]] if first.lstrip("({") else words[1:]
    if first == "function":
        return words[2:]  # `function f { ...`: the body follows the name
    return strip_wrapper(words)


def word_views(text: str) -> list[list[str]]:
    """The words of one simple command, then again with each layer of wrapping removed."""
    return _word_views(text)


def _word_views(text: str) -> list[list[str]]:
    words = tokens(text)
    views = [words] if words else []
    for _ in range(16):  # bounded: each step removes at least one thing
        stripped = _strip_one(words)
        if stripped is None or stripped == words:
            break
        words = stripped
        if words:
            views.append(words)
    return views


def command_views(text: str) -> list[str]:
    """The ways to read one simple command that a deny or ask rule should see."""
    views = [" ".join(text.split())] + [" ".join(w) for w in _word_views(text)]
    return list(dict.fromkeys(v for v in views if v))


def _arithmetic(command: str, i: int, end: int) -> bool:
    """Whether the ``$(`` at *i*, closed at *end*, is ``$((...))`` arithmetic, not
    ``$( (cmd); cmd )``: the inner parenthesis must close just before *end*."""
    return (
        command.startswith("$((", i)
        and end > 0
        and matching_close(command, i + 2, "(", ")") == end - 1
    )


def _held(expression: str, inner: list[str], risks: list[str]) -> None:
    """The substitutions inside an arithmetic *expression*: bash runs them first."""
    i = 0
    if "${" in expression:
        risks.append("a parameter expansion ${...}")
    while i < len(expression):
        if expression.startswith("$(", i):
            end = matching_close(expression, i + 1, "(", ")")
            if end < 0:
                risks.append("an unterminated substitution")
                end = len(expression)
            if _arithmetic(expression, i, end):
                _held(expression[i + 3 : end - 1], inner, risks)
            else:
                risks.append("command substitution $(...)")
                inner.append(expression[i + 2 : end])
            i = end + 1
        elif expression[i] == "`":
            end = expression.find("`", i + 1)
            end = len(expression) if end < 0 else end
            risks.append("command substitution with backticks")
            inner.append(expression[i + 1 : end])
            i = end + 1
        else:
            i += 1


def _hidden_commands(text: str) -> list[tuple[str, str, bool]]:
    """Commands one simple command runs through a nested shell, eval, find -exec,
    a command-carrying option and the like: (text, risk, runs on another host)."""
    found: list[tuple[str, str, bool]] = []
    for words in _word_views(text):
        program = words[0]
        found.extend((t, why, False) for t, why in hidden_in(program, words, text))
        found.extend((c.text, c.why, c.remote) for c in carried(words))
        if program in _SHELLS and "-c" in words[1:]:
            at = words.index("-c", 1)
            if at + 1 < len(words):
                found.append((words[at + 1], "a nested shell (-c)", False))
        elif program == "eval" and len(words) > 1:
            found.append((" ".join(words[1:]), "eval", False))
        elif program in ("find", "fd"):
            for j, word in enumerate(words):
                if word in ("-exec", "-execdir", "-ok", "-okdir", "-x", "--exec"):
                    end = next(
                        (k for k in range(j + 1, len(words)) if words[k] in (";", "+")),
                        len(words),
                    )
                    found.append((shlex.join(words[j + 1 : end]), "", False))
    return list(dict.fromkeys(found))
