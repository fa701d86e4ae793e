"""What one Bash command runs and touches, judged against the paths and rules.

:func:`check_bash` reads a command line (every simple command, nested ones
included) and finds:

- the *unknown* commands: a command word that is not a literal (``$X``,
  ``$(echo rm)``, ``{rm,v}``, ``r[m]``, ``$'\\x72m'``) or a command run from
  somewhere no rule can read (``source f``, a shell fed by a pipe, a
  here-string or a file, ``alias`` and ``expand_aliases``, ``BASH_ENV=``,
  ``git -c alias.x=!...``, a shell or ``eval`` given text built at run time).
  When any Bash deny rule exists, an unknown command is refused: it could be
  the denied one;
- every path it writes (redirections, ``tee``, ``cp``'s destination,
  ``sort -o``, ``dd of=``, the source of a hard link: ``ln``, ``link``,
  ``cp -l``, and of ``mv``), checked in order: the run's protected paths
  and the user's shell start-up files and credentials (refused in every
  mode), the workspace sandbox (refused outside the workspace and the
  additional directories), Read, Edit and Write deny rules (refused), then
  ``.git`` / ``.claude`` and Edit ask rules (asked in every mode). A target
  that is not a literal (``> "$OUT"``) could be any of those, so it is asked;
- every path it copies (``cp``, ``install``, ``rsync`` sources): a copy of
  configuration makes new configuration, so it is asked;
- every path it reads, against Read deny rules, inside substitutions too
  (``echo $(cat secrets/k)``), and recursively for ``grep -r`` and ``rg``;
- whether it is read-only (every part a curated read-only command with all
  its paths inside the workspace, no assignment, no redirection writing
  anything but ``/dev/null`` and the like: no prompt in any mode), or only
  edits files there with plain file commands (``acceptEdits`` covers it; as
  in Claude Code not ``FOO=1 rm x``, ``env rm x``, ``nice -n 5 rm x``,
  ``/bin/rm x``, ``(rm x)`` or ``cd d && rm x``, but ``nohup rm x`` and
  ``timeout 5 rm x``: :attr:`~coterie.tools.permissions.wrappers.Wrapper.plain`);
- whether a narrow allow rule can cover it at all: ``Bash(echo:*)`` allows
  ``echo``, not the file its redirection writes, nor ``ls ..`` reading
  outside the workspace;
- where its read-only ``git`` runs, for the policy to look at that
  repository's configuration.

After ``shopt -s dotglob`` (``extglob``, ``nocaseglob``, ``globstar``) or a
``GLOBIGNORE=`` a glob names what coterie's reading of it does not (``*``
matching ``.git``), so a globbed write or copy on that line is unknown.

The commands ``ssh host CMD`` runs elsewhere are matched by rules, but their
paths are that host's, not judged here.

Relative paths are taken against the workspace and every directory a ``cd``
in the line may have moved to (a ``cd`` to a non-literal directory makes
every relative path unknown). This is a reader, not a shell: what a program
does inside (``python x.py``) is out of its sight, which is what the OS
sandbox is for.
"""

from __future__ import annotations

import itertools
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

import attrs

from coterie.tools.permissions.carriers import unreadable
from coterie.tools.permissions.gitread import repository_is_inert
from coterie.tools.permissions.hidden import SHELLS
from coterie.tools.permissions.known import Usage, usage
from coterie.tools.permissions.places import Places
from coterie.tools.permissions.protect import Finding, PathJudge
from coterie.tools.permissions.shell import ShellAnalysis, _strip_one, analyze
from coterie.tools.permissions.words import Redirect, Simple, Word, parse_simple, widens_globs
from coterie.tools.permissions.wrappers import UNREADABLE, hides_arguments, plainly_wraps

if TYPE_CHECKING:
    from collections.abc import Sequence

    from coterie.tools._base import ToolContext
    from coterie.tools.permissions.rules import Rule

__all__ = ["BashCheck", "check_bash"]

#: Assignments that make a shell read a file first (non-interactive bash reads $BASH_ENV).
_STARTUP_VARS = frozenset({"BASH_ENV", "ENV"})
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=")
_GIT_PROGRAM_KEYS = re.compile(
    r"^(alias\..*|core\.(fsmonitor|pager|editor|sshcommand|hookspath|askpass|gitproxy)"
    r"|diff\..*|filter\..*|pager\..*|credential\..*|gpg\..*|sequence\.editor|merge\..*)$",
    re.IGNORECASE,
)


#: Commands that may create symbolic links.
_LINKERS = frozenset({"ln", "tar", "unzip", "rsync", "cpio", "7z", "bsdtar", "git", "link"})
#: A path coterie cannot see (arguments read from input, a link made on the way).
_UNSEEN = Word("$INPUT", literal=False, raw="a path from the input or a new link")
#: Files a redirection may write without writing anything.
_NOWHERE = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr"})


@attrs.frozen
class BashCheck:
    """What :func:`check_bash` found; the policy walks its gates over it."""

    #: The first reason to deny, if any (gate 1).
    denial: Finding | None = None
    #: The first reason to ask, if any (gate 4).
    question: Finding | None = None
    #: Why some command it runs is unknown (never allowed by a narrow rule).
    unknown: tuple[str, ...] = ()
    #: Every part is a curated read-only command, all paths inside the workspace.
    read_only: bool = False
    #: Some read-only part is git (harmless only in a trusted repository).
    git: bool = False
    #: Every part reads or edits files inside the workspace (``acceptEdits``).
    edits_only: bool = False
    #: A redirection writes a file, or a known command reads outside the workspace:
    #: no narrow allow rule covers that (a whole-tool rule or the mode decides).
    beyond_rules: bool = False
    #: Where its git parts run (``None``: somewhere coterie cannot tell).
    git_dirs: tuple[Path, ...] | None = ()

    def git_passes(self) -> bool:
        """Whether its git may run without a prompt. The model's git runs with the
        repository's configuration as it is, so only in directories (every one it
        may have moved to) whose configuration names no program
        (:func:`~coterie.tools.permissions.gitread.repository_is_inert`), trusted or
        not. Both ways a command passes by its shape alone (read-only in any mode,
        file commands in ``acceptEdits``) ask this one question."""
        if not self.git:
            return True
        return self.git_dirs is not None and all(repository_is_inert(d) for d in self.git_dirs)


@attrs.frozen
class _Part:
    simple: Simple
    words: tuple[Word, ...]
    usage: Usage
    unknown: str | None
    #: Run as written: no ``NAME=value`` prefix, no wrapper, no directory in the
    #: command word (``acceptEdits`` covers only such plain file commands).
    plain: bool = True
    #: Sets a variable for what it runs (``FOO=1 ls``, ``env FOO=1 ls``).
    assigns: bool = False
    #: Run on another host (``ssh host CMD``): its paths are that host's.
    remote: bool = False


def _chain(words: tuple[Word, ...]) -> list[tuple[Word, ...]]:
    """The command's words, then again with each wrapper removed (``env``, ``nohup``...)."""
    chain = [words]
    current = words
    for _ in range(16):
        stripped = _strip_one([w.value for w in current])
        if stripped is None or len(stripped) > len(current):
            break
        suffix = current[len(current) - len(stripped) :]
        if stripped and suffix and stripped[0] != suffix[0].value:
            suffix = (attrs.evolve(suffix[0], value=stripped[0]), *suffix[1:])
        if suffix == current:
            break
        current = suffix
        if current:
            chain.append(current)
    return chain


def _unknown(simple: Simple, chain: list[tuple[Word, ...]]) -> str | None:
    for words in chain:
        if words and not words[0].literal:
            return f"its command word {words[0].raw} is not a literal"
        if words and words[0].value == UNREADABLE:
            return "a wrapper's options are not ones coterie knows, so its command is hidden"
    assigned = [w.value for w in simple.assignments]
    texts: list[list[str]] = [
        [*assigned, *(w.value for w in chain[0])] if chain else assigned,
        *([w.value for w in view] for view in chain[1:]),
    ]
    for text in texts:
        why = unreadable(text)
        if why is not None:
            return why
    for word in simple.assignments:
        if word.value.partition("=")[0] in _STARTUP_VARS:
            return f"{word.value.partition('=')[0]} makes the shell run a file first"
    words = chain[-1] if chain else ()
    if not words:
        return None
    program, values = words[0].value, [w.value for w in words]
    rest = words[1:]
    if program in ("source", "."):
        return f"`{program}` runs the commands of a file"
    if program in ("export", "declare", "typeset", "readonly", "local") and any(
        w.value.partition("=")[0] in _STARTUP_VARS for w in rest
    ):
        return "it sets BASH_ENV or ENV, which a shell runs first"
    if program == "alias" or (program == "shopt" and "expand_aliases" in values):
        return "aliases make any later command word mean another command"
    if program in SHELLS:
        if "-c" not in values[1:]:
            return f"`{program}` runs commands from its input or a file"
        at = values.index("-c", 1)
        if at + 1 >= len(words) or not words[at + 1].literal:
            return f"`{program} -c` runs text built at run time"
    if program == "eval" and any(not w.literal for w in rest):
        return "`eval` runs text built at run time"
    if program == "script" and not any(
        v == "--command" or (v.startswith("-") and v.endswith("c")) for v in values[1:]
    ):
        return "`script` starts a shell"
    if program in ("env", "script", "flock", "trap", "xargs") and any(not w.literal for w in rest):
        return f"`{program}` runs a command built at run time"
    if program == "git":
        for i, w in enumerate(rest[:-1]):
            if w.value == "-c" and _GIT_PROGRAM_KEYS.match(rest[i + 1].value.partition("=")[0]):
                return "`git -c` sets a program git runs"
        if any(w.value.startswith("--config-env") for w in rest):
            return "`git --config-env` sets a program git runs"
    return None


def _opaque(chain: list[tuple[Word, ...]]) -> bool:
    """Whether a wrapper hides the command's real arguments or directory."""
    return any(hides_arguments([w.value for w in words]) for words in chain[:-1])


def _parts(command: str) -> tuple[list[_Part], ShellAnalysis]:
    analysis = analyze(command)
    parts: list[_Part] = []
    for text in analysis.all_commands:
        simple = parse_simple(text)
        chain = _chain(simple.words)
        words = chain[-1] if chain and chain[-1] else ()
        found = usage(words)
        if _opaque(chain):
            # Its paths are not the words written: whatever it writes is unknown.
            writes = (_UNSEEN,) if found.writes or found.kind == "file" else ()
            found = Usage("other", (_UNSEEN,), writes)
        remote = text in analysis.remote and text not in analysis.local_commands
        assigns = bool(simple.assignments) or any(
            _ASSIGNMENT.match(w.value)
            for outer, inner in itertools.pairwise(chain)
            for w in outer[: len(outer) - len(inner)]
        )
        plain = not assigns and all(
            plainly_wraps([w.value for w in outer], [w.value for w in inner])
            for outer, inner in itertools.pairwise(chain)
        )
        unknown = _unknown(simple, chain)
        parts.append(_Part(simple, words, found, unknown, plain, assigns=assigns, remote=remote))
    if any(widens_globs(p.simple) for p in parts):
        parts = [_globs_unseen(p) for p in parts]
    if sum(1 for p in parts if _writes(p)) and any(_links(p) for p in parts) and len(parts) > 1:
        # `ln -s ~/.bashrc l; echo x >> l`: a link made by one part redirects another's
        # write, after coterie looked. Every write of such a line is unknown.
        parts = [
            attrs.evolve(p, usage=attrs.evolve(p.usage, writes=(_UNSEEN,)))
            if _writes(p) and not _links(p)
            else p
            for p in parts
        ]
    return parts, analysis


def _globs_unseen(part: _Part) -> _Part:
    """The part with every write and copy of a non-literal word made unknown."""

    def seen(word: Word) -> Word:
        return word if word.literal else attrs.evolve(_UNSEEN, raw=word.raw)

    found = part.usage
    found = attrs.evolve(
        found,
        writes=tuple(seen(w) for w in found.writes),
        copies=tuple(seen(w) for w in found.copies),
    )
    redirects = tuple(
        attrs.evolve(r, target=seen(r.target)) if r.writes and r.target else r
        for r in part.simple.redirects
    )
    return attrs.evolve(part, usage=found, simple=attrs.evolve(part.simple, redirects=redirects))


def _writes(part: _Part) -> bool:
    return bool(part.usage.writes) or any(r.writes for r in part.simple.redirects)


def _links(part: _Part) -> bool:
    """Whether the part may create links (or move them into place)."""
    if not part.words:
        return False
    program, flags = part.words[0].value, [w.value for w in part.words[1:]]
    if program == "cp":
        long = ("--no-dereference", "--archive", "--recursive", "--symbolic-link", "--link")
        return any(
            f.startswith("-") and not f.startswith("--") and any(c in f for c in "PdaRrsl")
            for f in flags
        ) or any(f in long for f in flags)
    return program in _LINKERS


def check_bash(
    command: str, ctx: ToolContext, *, deny: Sequence[Rule], ask: Sequence[Rule]
) -> BashCheck:
    """Judge *command* for the agent of *ctx* under the *deny* and *ask* rules."""
    parts, analysis = _parts(command)
    risks = analysis.risks
    unknown = tuple(dict.fromkeys(p.unknown for p in parts if p.unknown))
    places = Places.of(ctx)
    # Relative paths are taken against where the agent's shell is now (Bash keeps
    # its working directory between calls).
    cwds, cwd_known = _directories(parts, ctx.shell_cwd or places.workspace)
    bash_deny = next((r for r in deny if r.tool == "Bash"), None)
    if unknown and bash_deny is not None:
        refusal = Finding(
            "deny",
            f"This command runs a command coterie cannot read ({unknown[0]}), and the deny"
            f" rule {bash_deny.describe()} could match it. Spell the command out literally.",
            bash_deny.text,
        )
        return BashCheck(denial=refusal, unknown=unknown)
    read_deny = [r for r in deny if r.tool == "Read" and r.takes_path]
    judge = PathJudge(places, read_deny, deny, ask)
    denial: Finding | None = None
    question: Finding | None = None
    inside = True
    beyond_rules = False
    reaches: list[Finding] = []  # the writes outside the workspace a person may admit
    for part in parts:
        if part.remote:
            inside = False  # never read-only here, and its paths are on that host
            continue
        writes = [r.target for r in part.simple.redirects if r.writes and r.target]
        writes += list(part.usage.writes)
        reads = [r.target for r in part.simple.redirects if r.reads and r.target]
        reads += list(part.usage.reads)
        for word in writes:
            verdict = judge.write(word, cwds, cwd_known)
            denial = denial or verdict.denial
            question = question or verdict.question
            inside = inside and verdict.inside
            if verdict.question is not None and verdict.question.reach is not None:
                reaches.append(verdict.question)
        for word in part.usage.copies:
            verdict = judge.copied(word, cwds, cwd_known)
            denial = denial or verdict.denial
            question = question or verdict.question
        for word in reads:
            verdict = judge.read(word, cwds, cwd_known, recursive=part.usage.recursive)
            denial = denial or verdict.denial
            question = question or verdict.question
            inside = inside and verdict.inside
            # `Bash(ls:*)` allows ls here, not `ls ..` (an unknown command's operands
            # are counted as reads only for the Read deny rules: not this).
            beyond_rules |= not verdict.inside and part.usage.kind != "other"
        beyond_rules |= any(_writes_file(r) for r in part.simple.redirects)
        if not part.words and part.simple.assignments:
            inside = False  # `PATH=...` on its own changes what later words run
    if len({f.reach for f in reaches}) > 1:
        denial = Finding(
            "deny",
            "This command writes in several places outside the workspace; one command may"
            " be let into one folder outside it at most. Split it.",
            reaches[0].rule,
        )
    if denial is not None:
        return BashCheck(denial=denial, unknown=unknown)
    clean = inside and not unknown and not risks
    no_writes = all(
        not any(_writes_file(r) for r in p.simple.redirects) and not p.usage.writes for p in parts
    )
    read_only = clean and no_writes and all(_read_only(p) for p in parts)
    # A write after a `cd`, or in a subshell, is not a plain file command (Claude Code).
    moved = any(p.usage.chdir is not None or p.usage.chdir_elsewhere for p in parts)
    edits_only = (
        clean
        and not ((moved or analysis.subshell) and not no_writes)
        and all(_read_only(p) or (p.usage.kind == "file" and p.plain) for p in parts)
    )
    git = any(p.usage.git for p in parts)
    git_dirs = tuple(cwds) if cwd_known else None
    return BashCheck(None, question, unknown, read_only, git, edits_only, beyond_rules, git_dirs)


def _read_only(part: _Part) -> bool:
    return part.usage.kind == "read-only" and not part.assigns


def _writes_file(redirect: Redirect) -> bool:
    """Whether *redirect* writes a file (``> /dev/null`` writes nothing)."""
    target = redirect.target
    return redirect.writes and not (target and target.literal and target.value in _NOWHERE)


def _directories(parts: list[_Part], workspace: Path) -> tuple[list[Path], bool]:
    """Every directory a relative path may be taken against, and whether that is all of them."""
    cwds = [workspace]
    known = True
    for part in parts:
        target = part.usage.chdir
        if part.usage.chdir_elsewhere and part.words and part.words[0].value == "cd":
            target = Word(os.path.expanduser("~"))
        if target is None:
            continue
        if not target.literal:
            known = False
            continue
        for base in list(cwds):
            moved = Path(os.path.realpath(base / target.value))
            if moved not in cwds:
                cwds.append(moved)
    return cwds, known
