"""The judgement of one path a Bash command writes, copies or reads.

:class:`PathJudge` applies the protected places of
:mod:`~coterie.tools.permissions.places` (guarded paths refused, configuration
that acts later asked, the sandbox's roots) and the Read / Edit / Write rules
to a shell word naming a path, literal, glob or brace expression, against
each directory the command may be in. A write through a hard link (a regular
file with more than one name) is asked too: coterie cannot tell cheaply that
no other name is protected.
"""

from __future__ import annotations

import fnmatch
import glob
import os
import re
import stat
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import attrs

from coterie.tools.permissions.places import (
    ACTS_LATER,
    CONFIG_REASON,
    SCAN_LIMIT,
    Places,
    config_below,
    guarded_reason,
)
from coterie.tools.sandbox import check_inside

if TYPE_CHECKING:
    from collections.abc import Sequence

    from coterie.tools.permissions.rules import Rule
    from coterie.tools.permissions.words import Word

__all__ = ["OUTSIDE", "Finding", "PathJudge", "Verdict"]

_DEVICES = frozenset(
    {"/dev/null", "/dev/zero", "/dev/stdout", "/dev/stderr", "/dev/stdin", "/dev/tty", "/dev/full"}
)
_FD = re.compile(r"^/(dev|proc/self)/fd/\d+$")
_MAGIC = re.compile(r"[*?\[{]")


@attrs.frozen
class Verdict:
    """What one path word came to: a denial, a question, and whether it stays inside."""

    denial: Finding | None = None
    question: Finding | None = None
    inside: bool = True


@attrs.frozen
class Finding:
    """One reason to stop: denied, or needing approval; ``reason`` is for the model."""

    behavior: Literal["deny", "ask"]
    reason: str
    rule: str
    #: For a question about writing outside the workspace (``outside-workspace``): the
    #: folder a person's yes lets this one command write in.
    reach: Path | None = None


def _could_reach(prefix: Path, pattern: Sequence[str], target: Path) -> bool:
    """Whether the glob *prefix*/*pattern* may name *target*, something in it, or above it."""
    if prefix.is_relative_to(target):
        return True
    if not target.is_relative_to(prefix):
        return False
    rel = target.relative_to(prefix).parts
    for i, segment in enumerate(s for s in pattern if s):
        if segment == "**" or i >= len(rel):
            return True
        glob = re.sub(r"\{[^}]*\}", "*", segment)
        if rel[i].startswith(".") and not glob.startswith("."):
            return False  # the shell's globs skip dot files unless spelled
        if not fnmatch.fnmatchcase(rel[i], glob):
            return False
    return True


#: The rule of a question about a path outside the workspace (only a person answers it).
OUTSIDE = "outside-workspace"


def _folder_of(path: Path) -> Path:
    """The folder a write of *path* needs: the one holding it, or the nearest that
    exists (the command may create the rest)."""
    folder = path.parent
    while not folder.is_dir() and folder != folder.parent:
        folder = folder.parent
    return folder


@attrs.define
class PathJudge:
    """Judges the paths one command writes and reads, under the rules given."""

    places: Places
    read_deny: Sequence[Rule]
    deny: Sequence[Rule]
    ask: Sequence[Rule]

    def write(self, word: Word, cwds: Sequence[Path], cwd_known: bool) -> Verdict:
        """The verdict on a command writing the path *word* names."""
        if word.literal and (word.value in _DEVICES or _FD.match(word.value)):
            return Verdict()
        spots = self._spots(word, cwds, cwd_known, creating=True)
        if spots is None:
            return Verdict(
                question=Finding(
                    "ask",
                    f"coterie cannot tell where {word.raw} leads (it is expanded or read when the"
                    " command runs), so this write needs approval.",
                    "unknown-path",
                ),
                inside=False,
            )
        for prefix, pattern in spots:
            verdict = self._write_spot(prefix, pattern)
            if verdict.denial or verdict.question or not verdict.inside:
                return verdict
        return Verdict()

    def copied(self, word: Word, cwds: Sequence[Path], cwd_known: bool) -> Verdict:
        """The verdict on a command copying what *word* names somewhere (``cp``, ``rsync``,
        ``install``): a copy of configuration (``cp -r sub x`` with ``sub/.claude``,
        ``cp .mcp.json sub/``) makes new configuration, so it is asked."""
        spots = self._spots(word, cwds, cwd_known)
        for prefix, pattern in spots or ():
            question = self._asked(prefix, pattern, linked=False)
            if question is not None:
                return Verdict(question=Finding("ask", question, "protected-path"))
        if spots is None:
            reason = f"coterie cannot tell what {word.raw} names, and a copy of configuration"
            reason += " (.claude, .mcp.json, .git) makes new configuration; this needs approval."
            return Verdict(question=Finding("ask", reason, "unknown-path"))
        return Verdict()

    def read(
        self, word: Word, cwds: Sequence[Path], cwd_known: bool, *, recursive: bool
    ) -> Verdict:
        """The verdict on a command reading the path *word* names."""
        if word.literal and (word.value in _DEVICES or _FD.match(word.value)):
            return Verdict()
        spots = self._spots(word, cwds, cwd_known)
        if spots is None:
            question = None
            if self.read_deny:
                question = Finding(
                    "ask",
                    f"coterie cannot tell which file {word.raw} names, and a Read deny rule"
                    f" ({self.read_deny[0].describe()}) may cover it; this needs approval.",
                    self.read_deny[0].text,
                )
            return Verdict(question=question, inside=False)
        inside = True
        for prefix, pattern in spots:
            for rule in self.read_deny:
                if self._rule_reaches(rule, prefix, pattern, recursive=recursive):
                    return Verdict(denial=_denied(rule, prefix, pattern, "read"))
            inside = inside and check_inside(prefix, self.places.roots) and ".." not in pattern
        return Verdict(inside=inside)

    def _write_spot(self, prefix: Path, pattern: Sequence[str]) -> Verdict:
        for place in self.places.guarded:
            if _could_reach(prefix, pattern, place):
                reason = guarded_reason(place, (place,)) or ""
                return Verdict(denial=Finding("deny", reason, "protected-path"))
        reach = _folder_of(prefix)
        never = (Path(os.path.realpath(os.path.expanduser("~"))), Path("/"))
        if not check_inside(prefix, self.places.roots) and not pattern and reach not in never:
            # One named path outside, not in the home folder itself or the root: a
            # question only a person may answer, whose yes lets this command write in
            # its folder (the OS sandbox binds it, start-up files and credentials shut).
            roots = ", ".join(str(r) for r in self.places.roots)
            reason = (
                f"{prefix} is outside the workspace and the additional directories ({roots});"
                " the command may write there only if the user approves it."
            )
            return Verdict(question=Finding("ask", reason, OUTSIDE, reach=reach), inside=False)
        if not check_inside(prefix, self.places.roots) or ".." in pattern:
            roots = ", ".join(str(r) for r in self.places.roots)
            return Verdict(
                denial=Finding(
                    "deny",
                    f"{_show(prefix, pattern)} is outside the workspace and the additional"
                    f" directories ({roots}); commands may only write inside them.",
                    "sandbox",
                ),
                inside=False,
            )
        for rule in (*self.read_deny, *(r for r in self.deny if r.tool in ("Edit", "Write"))):
            if rule.takes_path and self._rule_reaches(rule, prefix, pattern, recursive=False):
                return Verdict(denial=_denied(rule, prefix, pattern, "write"))
        question = self._asked(prefix, pattern)
        if question is not None:
            return Verdict(question=Finding("ask", question, "protected-path"))
        for rule in self.ask:
            if (
                rule.tool in ("Edit", "Write")
                and rule.takes_path
                and self._rule_reaches(rule, prefix, pattern, recursive=False)
            ):
                return Verdict(
                    question=Finding(
                        "ask", f"An ask rule requires approval: {rule.describe()}.", rule.text
                    )
                )
        return Verdict()

    def _asked(self, prefix: Path, pattern: Sequence[str], *, linked: bool = True) -> str | None:
        """Why writing the spot needs approval: it may reach configuration that acts
        later (in it, named by the glob, or below a directory it names), or write
        through a hard link."""
        shown = _show(prefix, pattern)
        if self.places.asked(prefix) or any(_may_name_config(s) for s in pattern):
            return CONFIG_REASON.format(shown)
        if os.path.isdir(prefix):
            # A directory written (`rm -rf`, `mv`, `cp -r x/. d`, a glob naming some):
            # whatever configuration lies below it may be replaced or removed.
            found, complete = config_below(prefix)
            reached = [f for f in found if _could_reach(prefix, pattern, f)]
            if reached or not complete:
                where = reached[0] if reached else f"more than {SCAN_LIMIT:,} files below"
                return CONFIG_REASON.format(f"{shown} may reach {where}, which")
        other = _hard_linked(prefix, pattern) if linked else None
        if other is not None:
            return (
                f"{other} has other names (hard links); coterie cannot tell that none of them"
                " is protected configuration, so writing through it needs explicit approval."
            )
        return None

    def _rule_reaches(
        self, rule: Rule, prefix: Path, pattern: Sequence[str], *, recursive: bool
    ) -> bool:
        workspace = self.places.workspace
        if rule.matches_path(prefix, workspace):
            return True
        if not pattern and not recursive:
            return False
        anchor = rule.anchor(workspace)
        if pattern and not recursive:
            return _could_reach(prefix, pattern, anchor) and (
                anchor.is_relative_to(prefix) or prefix.is_relative_to(anchor)
            )
        # A recursive read, or a glob: anything below the prefix may be read.
        return anchor.is_relative_to(prefix) or prefix.is_relative_to(anchor)

    def _spots(
        self, word: Word, cwds: Sequence[Path], cwd_known: bool, *, creating: bool = False
    ) -> list[tuple[Path, tuple[str, ...]]] | None:
        """(resolved literal prefix, remaining glob segments) per directory; None if unknown."""
        if word.procsub or (
            not word.literal and (re.search(r"[$`]", word.value) or not _MAGIC.search(word.value))
        ):
            return None  # a variable, a substitution: it could name anything
        values = [word.value] if word.literal else _braces(word.value)
        if values is None or (not cwd_known and any(not v.startswith("/") for v in values)):
            return None
        spots: list[tuple[Path, tuple[str, ...]]] = []
        for value in values:
            pattern: tuple[str, ...] = ()
            head = value
            if not word.literal and _MAGIC.search(value):
                segments = value.split("/")
                first = next(i for i, s in enumerate(segments) if _MAGIC.search(s))
                head = "/".join(segments[:first]) or ("/" if value.startswith("/") else ".")
                pattern = tuple(segments[first:])
            for base in cwds if not value.startswith("/") else cwds[:1]:
                lexical = Path(os.path.normpath(base / head))
                # realpath of the path as written: `link/..` is the parent of the link's target.
                resolved = Path(os.path.realpath(base / head))
                for spot in dict.fromkeys((resolved, lexical)):
                    spots.append((spot, pattern))
                if creating:
                    # `mkdir -p missing/../x` creates `missing` on its way: judge it too.
                    spots.extend((d, ()) for d in _created_on_the_way(base, head))
        return spots


_BRACE = re.compile(r"\{([^{}]*)\}")
_LEFT_BRACES = re.compile(r"\{.*(,|\.\.).*\}")


def _braces(value: str, limit: int = 64) -> list[str] | None:
    """The words bash's brace expansion makes of *value* (``{a,b}``, ``{a..c}``), innermost
    first; ``None`` past *limit* words (then the word is treated as unknown)."""
    done: list[str] = []
    todo = [value]
    while todo:
        text = todo.pop()
        for m in _BRACE.finditer(text):
            inner = m.group(1)
            seq = re.fullmatch(r"(-?\d+|[A-Za-z])\.\.(-?\d+|[A-Za-z])(?:\.\.-?\d+)?", inner)
            if "," in inner:
                parts = inner.split(",")
            elif seq:  # a step is left out: more words judged, never fewer
                a, b = seq.groups()
                if a.lstrip("-").isdigit() and b.lstrip("-").isdigit():
                    step = 1 if int(a) <= int(b) else -1
                    parts = [str(n) for n in range(int(a), int(b) + step, step)][: limit + 1]
                else:
                    step = 1 if ord(a[0]) <= ord(b[0]) else -1
                    parts = [chr(n) for n in range(ord(a[0]), ord(b[0]) + step, step)]
            else:
                continue
            todo += [text[: m.start()] + part + text[m.end() :] for part in parts]
            break
        else:
            done.append(text)
        if len(done) + len(todo) > limit:
            return None
    if any(_LEFT_BRACES.search(text) for text in done):
        return None  # bash's rules for `{},}` and the like: not worth copying; ask
    return list(dict.fromkeys(done))


def _may_name_config(segment: str) -> bool:
    """Whether the glob *segment* may name a protected name (dot files only if spelled)."""
    return segment.startswith(".") and any(
        fnmatch.fnmatchcase(name, segment.casefold()) for name in ACTS_LATER
    )


def _hard_linked(prefix: Path, pattern: Sequence[str]) -> str | None:
    """A regular file the spot names that has another name, or ``None``.

    A write through it (``>>``, ``tee``, ``cp`` onto it) changes every name;
    a glob is expanded now, as the shell will (at most 1,000 names looked at).
    """
    where = os.path.join(glob.escape(str(prefix)), *pattern)
    names = glob.iglob(where, include_hidden=True) if pattern else [str(prefix)]
    for count, name in enumerate(names):
        if count >= 1000:
            return f"{_show(prefix, pattern)} (more than 1,000 names)"
        try:
            st = os.stat(name)
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode) and st.st_nlink > 1:
            return name
    return None


def _created_on_the_way(base: Path, raw: str) -> list[Path]:
    """The directories missing on the way to *raw* that a following ``..`` steps out of.

    The kernel walks a path one component at a time; a writer that creates
    what is missing (``mkdir -p``) creates those before ``..`` leaves them, so
    ``missing/..`` is not the no-op a lexical normalisation makes of it.
    """
    components = Path(raw).parts if raw.startswith("/") else (*base.parts, *Path(raw).parts)
    current = Path("/")
    missing: Path | None = None
    created: list[Path] = []
    for component in components[1:]:
        if component in ("", "."):
            continue
        if component == "..":
            if missing is not None:
                created.append(current)  # with all it holds: `new/.claude/..` makes both
                missing = None
            current = current.parent
            continue
        step = current / component
        if missing is None and not os.path.lexists(step):
            missing = step
        current = Path(os.path.realpath(step)) if missing is None else step
    return created


def _show(prefix: Path, pattern: Sequence[str]) -> str:
    return str(prefix / "/".join(pattern)) if pattern else str(prefix)


def _denied(rule: Rule, prefix: Path, pattern: Sequence[str], how: str) -> Finding:
    return Finding(
        "deny",
        f"A deny rule forbids this: {rule.describe()} covers what this command would {how}"
        f" ({_show(prefix, pattern)}).",
        rule.text,
    )
