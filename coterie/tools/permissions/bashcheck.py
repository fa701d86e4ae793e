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
  its paths inside the workspace: no prompt in any mode), or only edits
  files there with plain file commands (``acceptEdits`` covers it; not
  ``FOO=1 rm x``, ``nice rm x`` or ``/bin/rm x``, as in Claude Code).

The commands ``ssh host CMD`` runs elsewhere are matched by rules, but their
paths are that host's, not judged here.

Relative paths are taken against the workspace and every directory a ``cd``
in the line may have moved to (a ``cd`` to a non-literal directory makes
every relative path unknown). This is a reader, not a shell: what a program
does inside (``python x.py``) is out of its sight, which is what the OS
sandbox is for.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

import attrs

from coterie.tools.permissions import protect
from coterie.tools.permissions.carriers import unreadable
from coterie.tools.permissions.hidden import SHELLS
from coterie.tools.permissions.known import Usage, usage
from coterie.tools.permissions.protect import Finding
from coterie.tools.permissions.rules import RuleError, parse_rule
from coterie.tools.permissions.shell import _strip_one, analyze, command_views
from coterie.tools.permissions.words import Simple, Word, parse_simple
from coterie.tools.permissions.wrappers import UNREADABLE

if TYPE_CHECKING:
    from collections.abc import Sequence

    from coterie.tools._base import ToolContext
    from coterie.tools.permissions.rules import Rule

__all__ = ["BashCheck", "check_bash", "excluded_command"]

#: Assignments that make a shell read a file first (non-interactive bash reads $BASH_ENV).
_STARTUP_VARS = frozenset({"BASH_ENV", "ENV"})
_GIT_PROGRAM_KEYS = re.compile(
    r"^(alias\..*|core\.(fsmonitor|pager|editor|sshcommand|hookspath|askpass|gitproxy)"
    r"|diff\..*|filter\..*|pager\..*|credential\..*|gpg\..*|sequence\.editor|merge\..*)$",
    re.IGNORECASE,
)


#: Wrappers that hide the arguments or the directory of the command they run.
_OPAQUE = frozenset({"xargs", "parallel", "chroot", "nsenter", "unshare", "firejail"})
#: Commands that may create symbolic links.
_LINKERS = frozenset({"ln", "tar", "unzip", "rsync", "cpio", "7z", "bsdtar", "git", "link"})
#: A path coterie cannot see (arguments read from input, a link made on the way).
_UNSEEN = Word("$INPUT", literal=False, raw="a path from the input or a new link")


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


@attrs.frozen
class _Part:
    simple: Simple
    words: tuple[Word, ...]
    usage: Usage
    unknown: str | None
    #: Run as written: no ``NAME=value`` prefix, no wrapper, no directory in the
    #: command word (``acceptEdits`` covers only such plain file commands).
    plain: bool = True
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
    for words in (
        [*assigned, *(w.value for w in chain[0])] if chain else assigned,
        *([w.value for w in view] for view in chain[1:]),
    ):
        why = unreadable(words)
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
    """Whether a wrapper hides the command's real arguments or directory.

    ``xargs`` and ``parallel`` add arguments read from the input, ``env -C``
    and ``chroot`` run it elsewhere, namespace tools may remap the file system.
    """
    for words in chain[:-1]:
        program = words[0].value if words else ""
        if program in _OPAQUE:
            return True
        if program == "env" and any(
            w.value in ("-C", "--chdir") or w.value.startswith(("--chdir=", "-C")) for w in words
        ):
            return True
    return False


def _parts(command: str) -> tuple[list[_Part], tuple[str, ...]]:
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
        plain = len(chain) <= 1 and not simple.assignments
        parts.append(_Part(simple, words, found, _unknown(simple, chain), plain, remote))
    if sum(1 for p in parts if _writes(p)) and any(_links(p) for p in parts) and len(parts) > 1:
        # `ln -s ~/.bashrc l; echo x >> l`: a link made by one part redirects another's
        # write, after coterie looked. Every write of such a line is unknown.
        parts = [
            attrs.evolve(p, usage=attrs.evolve(p.usage, writes=(_UNSEEN,)))
            if _writes(p) and not _links(p)
            else p
            for p in parts
        ]
    return parts, analysis.risks


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
    parts, risks = _parts(command)
    unknown = tuple(dict.fromkeys(p.unknown for p in parts if p.unknown))
    places = protect.Places.of(ctx)
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
    judge = protect.PathJudge(places, read_deny, deny, ask)
    denial: Finding | None = None
    question: Finding | None = None
    inside = True
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
        for word in part.usage.copies:
            verdict = judge.copied(word, cwds, cwd_known)
            denial = denial or verdict.denial
            question = question or verdict.question
        for word in reads:
            verdict = judge.read(word, cwds, cwd_known, recursive=part.usage.recursive)
            denial = denial or verdict.denial
            question = question or verdict.question
            inside = inside and verdict.inside
        if not part.words and part.simple.assignments:
            inside = False  # `PATH=...` on its own changes what later words run
    if denial is not None:
        return BashCheck(denial=denial, unknown=unknown)
    clean = inside and not unknown and not risks
    no_writes = all(
        not any(r.writes for r in p.simple.redirects) and not p.usage.writes for p in parts
    )
    read_only = clean and no_writes and all(_read_only(p) for p in parts)
    edits_only = clean and all(_read_only(p) or (p.usage.kind == "file" and p.plain) for p in parts)
    git = any(p.usage.git for p in parts)
    return BashCheck(None, question, unknown, read_only, git, edits_only)


def _read_only(part: _Part) -> bool:
    return part.usage.kind == "read-only" and not part.simple.assignments


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


def excluded_command(command: str, excluded: Sequence[str]) -> bool:
    """Whether a part of *command* is one of *excluded* (Claude Code's ``excludedCommands``).

    An entry is a command name (``docker``) or a Bash rule specifier
    (``git:*``, ``npm run *``), matched against every spelling of every part.
    """
    names = [e.strip() for e in excluded if e.strip()]
    if not names:
        return False
    patterns = []
    for name in names:
        try:
            patterns.append(parse_rule(f"Bash({name})"))
        except RuleError:
            continue  # not a specifier: the name alone still counts
    for part in analyze(command).all_commands:
        for view in command_views(part):
            if view.split(" ", 1)[0] in names or any(r.matches_command(view) for r in patterns):
                return True
    return False
