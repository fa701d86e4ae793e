"""Protected paths, and the judgement of one path a tool or a command writes or reads.

Three kinds of protected place:

- *guarded* paths, refused to every writer in every mode (bypassPermissions
  included): the run's own state (``ToolContext.protected_paths``, under the
  coterie home), the coterie home and ``~/.claude`` themselves (trust and
  user settings), the user's shell start-up files (``~/.bashrc``,
  ``~/.profile``, ``~/.zshrc``...) and credential folders (``~/.ssh``,
  ``~/.gnupg``, ``~/.aws``...), which would run code or leak keys later;
- *asked* directories: ``.git`` and ``.claude`` at the top of the workspace
  or an additional directory (but ``.claude/commands``, ``agents`` and
  ``skills``), where a write changes what runs or what is allowed next
  (``core.fsmonitor``, ``settings.local.json``): asked in every mode;
- everything outside the workspace and the additional directories (the
  sandbox), refused.

:class:`PathJudge` applies these and the Read / Edit / Write rules to a
shell word naming a path, literal or glob, against each directory the
command may be in.
"""

from __future__ import annotations

import fnmatch
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import attrs

from coterie.tools.sandbox import allowed_roots, check_inside

if TYPE_CHECKING:
    from collections.abc import Sequence

    from coterie.tools._base import ToolContext
    from coterie.tools.permissions.rules import Rule
    from coterie.tools.permissions.words import Word

__all__ = ["ASKED_DIRS", "HOME_GUARDED", "PathJudge", "Places", "Verdict", "guarded_reason"]

#: Directories at the top of a workspace whose changes always need approval.
ASKED_DIRS = (".git", ".claude")
_UNASKED_CLAUDE = ("commands", "agents", "skills")
#: Below the home directory: files whose change runs code at the next login or
#: shell, or which hold credentials and settings granting permissions.
HOME_GUARDED = (
    ".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".zshrc",
    ".zshenv", ".zprofile", ".zlogin", ".zlogout", ".kshrc", ".cshrc", ".tcshrc",
    ".inputrc", ".config/fish", ".ssh", ".gnupg", ".aws", ".azure", ".kube", ".docker",
    ".config/gcloud", ".config/gh", ".netrc", ".gitconfig", ".config/git", ".npmrc",
    ".pypirc", ".git-credentials", ".claude", ".coterie", ".config/autostart",
    ".config/systemd", ".local/bin", ".pam_environment", ".xprofile", ".xinitrc",
)  # fmt: skip
_DEVICES = frozenset(
    {"/dev/null", "/dev/zero", "/dev/stdout", "/dev/stderr", "/dev/stdin", "/dev/tty", "/dev/full"}
)
_FD = re.compile(r"^/(dev|proc/self)/fd/\d+$")
_MAGIC = re.compile(r"[*?\[{]")


@attrs.frozen
class Places:
    """The resolved workspace, the roots the sandbox admits, and the guarded paths."""

    workspace: Path
    roots: tuple[Path, ...]
    guarded: tuple[Path, ...]

    @classmethod
    def of(cls, ctx: ToolContext) -> Places:
        """The places of the agent owning *ctx* (home read from the environment now)."""
        home = Path(os.path.realpath(os.path.expanduser("~")))
        guarded = [Path(os.path.realpath(p)) for p in ctx.protected_paths]
        guarded += [Path(os.path.realpath(home / name)) for name in HOME_GUARDED]
        if os.environ.get("COTERIE_HOME"):
            guarded.append(Path(os.path.realpath(os.path.expanduser(os.environ["COTERIE_HOME"]))))
        roots = tuple(allowed_roots(ctx))
        return cls(roots[0], roots, tuple(dict.fromkeys(guarded)))

    def guarded_reason(self, path: Path) -> str | None:
        """Why *path* may never be written, or ``None``."""
        return guarded_reason(path, self.guarded)

    def asked(self, path: Path) -> bool:
        """Whether *path* lies in a ``.git`` or ``.claude`` directory of a root."""
        for root in self.roots:
            if path == root or not path.is_relative_to(root):
                continue
            parts = path.relative_to(root).parts
            if parts[0] in ASKED_DIRS:
                return not (parts[0] == ".claude" and parts[1:2] and parts[1] in _UNASKED_CLAUDE)
        return False


def guarded_reason(path: Path, guarded: Sequence[Path]) -> str | None:
    """Why *path* (resolved) is a guarded path no tool may write, or ``None``."""
    for place in guarded:
        if path == place or path.is_relative_to(place):
            return (
                f"{path} is a protected path ({place}: coterie's run state, its home or"
                " the user's shell start-up files, credentials or settings); no tool"
                " may change it, in any mode."
            )
    return None


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


def _could_reach(prefix: Path, pattern: Sequence[str], target: Path) -> bool:
    """Whether the glob *prefix*/*pattern* may name *target*, something in it, or above it."""
    if prefix.is_relative_to(target):
        return True
    if not target.is_relative_to(prefix):
        return False
    rel = target.relative_to(prefix).parts
    for i, segment in enumerate(pattern):
        if segment == "**" or i >= len(rel):
            return True
        glob = re.sub(r"\{[^}]*\}", "*", segment)
        if rel[i].startswith(".") and not glob.startswith("."):
            return False  # the shell's globs skip dot files unless spelled
        if not fnmatch.fnmatchcase(rel[i], glob):
            return False
    return True


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
        if self._asked(prefix, pattern):
            return Verdict(
                question=Finding(
                    "ask",
                    f"{_show(prefix, pattern)} is inside a protected directory (.git or"
                    " .claude); changing it needs explicit approval.",
                    "protected-path",
                )
            )
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

    def _asked(self, prefix: Path, pattern: Sequence[str]) -> bool:
        if not pattern:
            return self.places.asked(prefix)
        for root in self.places.roots:
            for name in ASKED_DIRS:
                target = root / name
                if prefix.is_relative_to(target):
                    return self.places.asked(prefix / "x")
                if _could_reach(prefix, pattern, target):
                    return True
        return False

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
        value = word.value
        relative = not value.startswith("/")
        if relative and not cwd_known:
            return None
        pattern: tuple[str, ...] = ()
        if word.literal:
            head = value
        else:
            segments = value.split("/")
            first = next((i for i, s in enumerate(segments) if _MAGIC.search(s)), len(segments))
            head = "/".join(segments[:first]) or ("/" if value.startswith("/") else ".")
            pattern = tuple(segments[first:])
        spots: list[tuple[Path, tuple[str, ...]]] = []
        for base in cwds if relative else cwds[:1]:
            lexical = Path(os.path.normpath(base / head))
            # realpath of the path as written: `link/..` is the parent of the link's target.
            resolved = Path(os.path.realpath(base / head))
            for spot in dict.fromkeys((resolved, lexical)):
                spots.append((spot, pattern))
            if creating:
                # `mkdir -p missing/../x` creates `missing` on its way: judge it too.
                spots.extend((d, ()) for d in _created_on_the_way(base, head))
        return spots


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
                created.append(missing)
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
