"""The words and redirections of one simple command, as the shell will see them.

:func:`parse_simple` reads one simple command (a part :func:`~coterie.tools.
permissions.shell.analyze` split out) into its leading assignments, its
words and its redirections. Each :class:`Word` carries its value with quotes
removed and, above all, whether it is *literal*: whether the shell will run
it as written, or whether an expansion (a variable, a command substitution,
a glob, a brace expansion, ANSI-C or locale quoting) decides what it becomes.
A command word that is not literal names no command coterie can judge.

:func:`split_options` splits a command's words into options (with their
values) and operands; :func:`widens_globs` says whether a command makes later
globs name what they do not by default (``shopt -s dotglob``, ``GLOBIGNORE=``).

Like the rest of this package it reads, it never runs; where it cannot tell
it says "not literal", which callers treat as "could be anything".
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING

import attrs

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = [
    "Redirect", "Simple", "Word", "after_equals", "parse_simple", "split_options", "value_word",
    "widens_globs",
]  # fmt: skip

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=")
_WRITE_OPS = frozenset({">", ">>", ">|", "&>", "&>>", "<>"})
_OPERATORS = ("&>>", "<<<", "<<-", "&>", ">>", ">|", "<>", "<<", ">&", "<&", ">", "<")
#: Shell options making a glob name what it does not by default (dot files, any case).
_GLOB_OPTIONS = frozenset({"dotglob", "extglob", "nocaseglob", "globstar"})
#: Variables doing the same (``GLOBIGNORE`` set makes ``*`` match dot files too).
_GLOB_VARIABLES = frozenset({"GLOBIGNORE", "BASHOPTS"})


@attrs.frozen
class Word:
    """One shell word: its value with quotes removed, and whether it is literal.

    ``value`` has an unquoted leading ``~`` expanded. ``procsub`` marks a
    process substitution ``<(...)`` / ``>(...)``, which is a pipe, not a file.
    """

    value: str
    literal: bool = True
    raw: str = ""
    procsub: bool = False


@attrs.frozen
class Redirect:
    """One redirection: its operator, the file descriptor written before it, its target."""

    op: str
    fd: str
    target: Word | None

    @property
    def writes(self) -> bool:
        """Whether it opens its target for writing (``>``, ``>>``, ``&>``, ``<>``, ``>&file``)."""
        if self.target is None or self.target.procsub:
            return False
        if self.op == ">&":
            return not _is_fd(self.target)
        return self.op in _WRITE_OPS

    @property
    def reads(self) -> bool:
        """Whether it opens its target for reading (``<``, ``<>``, ``<&file``)."""
        if self.target is None or self.target.procsub:
            return False
        if self.op == "<&":
            return not _is_fd(self.target)
        return self.op in ("<", "<>")

    @property
    def feeds_text(self) -> bool:
        """A here-document or here-string: standard input is text from the command line."""
        return self.op in ("<<", "<<-", "<<<")


def _is_fd(word: Word) -> bool:
    return word.literal and (word.value == "-" or word.value.rstrip("-").isdigit())


@attrs.frozen
class Simple:
    """One simple command: ``NAME=value`` prefixes, the words, the redirections."""

    assignments: tuple[Word, ...]
    words: tuple[Word, ...]
    redirects: tuple[Redirect, ...]

    @property
    def literal_command(self) -> bool:
        """Whether the command word (if any) is literal."""
        return not self.words or self.words[0].literal


def matching_close(command: str, start: int, opener: str, closer: str) -> int:
    """Index of the *closer* matching the *opener* at *start*, or -1; quotes respected."""
    depth, i, quote = 0, start, None
    while i < len(command):
        c = command[i]
        if quote:
            if c == "\\" and quote == '"':
                i += 2
                continue
            if c == quote:
                quote = None
        elif c == "\\":
            i += 2
            continue
        elif c in "'\"":
            quote = c
        elif c == opener:
            depth += 1
        elif c == closer:
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return -1


def _closing(text: str, start: int, opener: str, closer: str) -> int:
    """Index just past the *closer* matching the *opener* at *start* (quotes
    respected), or the end of *text* when it is never closed."""
    end = matching_close(text, start, opener, closer)
    return len(text) if end < 0 else end + 1


class _Reader:
    """A cursor over one simple command's text that yields raw words."""

    def __init__(self, text: str) -> None:
        # A backslash-newline is removed before anything else (bash does too).
        self.text = re.sub(r"\\\n", "", text)
        self.i = 0

    def skip_space(self) -> None:
        while self.i < len(self.text) and self.text[self.i] in " \t\n":
            self.i += 1

    def operator(self) -> tuple[str, str] | None:
        """A redirection operator here (with its fd digits), consumed; else None."""
        m = re.match(r"\d*|\{[A-Za-z_][A-Za-z0-9_]*\}", self.text[self.i :])
        fd = m.group(0) if m else ""
        at = self.i + len(fd)
        for op in _OPERATORS:
            if self.text.startswith(op, at) and not self.text.startswith(op + "(", at):
                if op in ("<", ">") and self.text.startswith("(", at + 1):
                    continue
                self.i = at + len(op)
                return op, fd
        return None

    def word(self) -> Word:
        """The word starting here (possibly empty), consumed."""
        text, start = self.text, self.i
        out: list[str] = []
        literal, procsub = True, False
        if text.startswith(("<(", ">("), self.i):
            end = _closing(text, self.i + 1, "(", ")")
            self.i = end
            return Word(text[start:end], literal=False, raw=text[start:end], procsub=True)
        while self.i < len(text):
            c = text[self.i]
            if c in " \t\n" or (c in "<>" and not text.startswith(("<(", ">("), self.i)):
                break
            if c == "'":
                end = text.find("'", self.i + 1)
                end = len(text) if end < 0 else end
                out.append(text[self.i + 1 : end])
                self.i = end + 1
            elif c == '"':
                self.i += 1
                while self.i < len(text) and text[self.i] != '"':
                    d = text[self.i]
                    if d == "\\" and self.i + 1 < len(text) and text[self.i + 1] in '$`"\\\n':
                        out.append(text[self.i + 1])
                        self.i += 2
                        continue
                    if d in "$`":
                        literal = False
                        self.i = self._expansion(out)
                        continue
                    out.append(d)
                    self.i += 1
                self.i += 1
            elif c == "\\":
                out.append(text[self.i + 1 : self.i + 2])
                self.i += 2
            elif c in "$`":
                literal = False
                self.i = self._expansion(out)
            elif c in "<>":  # a process substitution inside a word
                literal = False
                end = _closing(text, self.i + 1, "(", ")")
                out.append(text[self.i : end])
                self.i = end
            else:
                if c in "*?[{":
                    literal = literal and not _expands(c, text, self.i)
                out.append(c)
                self.i += 1
        raw = text[start : self.i]
        value = "".join(out)
        if raw.startswith("~"):
            head, sep, tail = value.partition("/")
            value = os.path.expanduser(head) + sep + tail
        return Word(value, literal=literal, raw=raw, procsub=procsub)

    def _expansion(self, out: list[str]) -> int:
        """Consume one ``$...`` or backtick expansion at ``self.i``; return the new index."""
        text, i = self.text, self.i
        if text[i] == "`":
            end = text.find("`", i + 1)
            end = len(text) if end < 0 else end + 1
        elif text.startswith(("$(",), i):
            end = _closing(text, i + 1, "(", ")")
        elif text.startswith("${", i):
            end = _closing(text, i + 1, "{", "}")
        elif text.startswith(("$'", '$"'), i):
            quote = text[i + 1]
            j = i + 2
            while j < len(text) and text[j] != quote:
                j += 2 if text[j] == "\\" else 1
            end = j + 1
        else:
            m = re.match(r"\$([A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-])?", text[i:])
            end = i + (len(m.group(0)) if m else 1)
        out.append(text[i:end])
        return min(end, len(text))


def _expands(c: str, text: str, i: int) -> bool:
    """Whether the unquoted *c* at *i* starts a glob or a brace expansion."""
    if c in "*?":
        return True
    # Both brackets must lie in the same word: `[ -f x ]` runs the command `[`.
    rest = re.split(r"[ \t\n]", text[i:], maxsplit=1)[0]
    if c == "[":
        return "]" in rest[1:]
    if c == "{":
        close = rest.find("}")
        inner = rest[1:close] if close > 0 else ""
        return close > 0 and ("," in inner or ".." in inner)
    return False


def parse_simple(text: str) -> Simple:
    """Read one simple command into assignments, words and redirections."""
    reader = _Reader(text)
    assignments: list[Word] = []
    words: list[Word] = []
    redirects: list[Redirect] = []
    while True:
        reader.skip_space()
        if reader.i >= len(reader.text):
            break
        start = reader.i
        found = reader.operator()
        if found is not None:
            op, fd = found
            reader.skip_space()
            target = reader.word() if reader.i < len(reader.text) else None
            redirects.append(Redirect(op, fd, target if target and target.raw else None))
            continue
        reader.i = start
        word = reader.word()
        if not word.raw:
            reader.i += 1  # a stray character no rule above consumed
            continue
        if not words and _NAME.match(word.raw):
            assignments.append(word)
        else:
            words.append(word)
    return Simple(tuple(assignments), tuple(words), tuple(redirects))


# -- options and values ---------------------------------------------------------


def split_options(
    words: Sequence[Word], spec_values: frozenset[str], end_at_operand: bool = False
) -> tuple[list[tuple[str, Word | None]], list[Word]]:
    """Options (each with its value, if it takes one) and operands."""
    options: list[tuple[str, Word | None]] = []
    operands: list[Word] = []
    i = 0
    while i < len(words):
        w = words[i]
        v = w.value
        if v == "--":
            operands.extend(words[i + 1 :])
            break
        if v.startswith("-") and len(v) > 1 and not operands_only(end_at_operand, operands):
            name, eq, _ = v.partition("=")
            if eq:
                options.append((name, w))
            elif v in spec_values and i + 1 < len(words):
                options.append((v, words[i + 1]))
                i += 1
            elif not v.startswith("--") and len(v) > 2:
                # Bundled short options: `-rn`, or `-n5` whose tail is a value.
                for k, letter in enumerate(v[1:]):
                    flag = "-" + letter
                    if flag in spec_values:
                        has_tail = k + 2 < len(v)
                        if not has_tail and i + 1 < len(words):
                            options.append((flag, words[i + 1]))
                            i += 1
                        else:
                            options.append((flag, w))
                        break
                    options.append((flag, None))
            else:
                options.append((v, None))
        else:
            operands.append(w)
        i += 1
    return options, operands


def operands_only(end_at_operand: bool, operands: list[Word]) -> bool:
    """After the first operand, ``find``-style commands take no more options."""
    return end_at_operand and bool(operands)


def value_word(name: str, word: Word | None) -> Word | None:
    """The value of an option, as a word (``--out=f`` carries it after the ``=``)."""
    if word is None:
        return None
    if word.value.startswith(name + "=") or (word.value.startswith("-") and "=" in word.value):
        return after_equals(word)
    if word.value.startswith(name) and len(word.value) > len(name) and not name.startswith("--"):
        return attrs.evolve(word, value=word.value[len(name) :])  # `-ofile`
    return word


def after_equals(word: Word) -> Word:
    """The value after ``=`` in ``of=~/x`` or ``--out=~/x``: bash expands that ``~`` too."""
    value = word.value.partition("=")[2]
    if value.startswith("~"):
        head, sep, tail = value.partition("/")
        value = os.path.expanduser(head) + sep + tail
    return attrs.evolve(word, value=value)


def widens_globs(simple: Simple) -> bool:
    """Whether *simple* makes later globs name files they do not name by default:
    ``shopt -s dotglob`` (``extglob``, ``nocaseglob``, ``globstar``, or options not
    literal), ``bash -O dotglob``, ``GLOBIGNORE=...`` or ``BASHOPTS=...`` set."""
    values = [w.value for w in simple.words]
    if any(w.value.partition("=")[0] in _GLOB_VARIABLES for w in simple.assignments):
        return True
    if any(v.partition("=")[0] in _GLOB_VARIABLES for v in values[1:]):
        return True  # `export GLOBIGNORE=.`, `env BASHOPTS=dotglob bash -c ...`
    if not values or not (values[0] == "shopt" or "-O" in values):
        return False
    return bool(_GLOB_OPTIONS & set(values)) or not all(w.literal for w in simple.words)
