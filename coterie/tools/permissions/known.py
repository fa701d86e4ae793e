"""What coterie knows about common commands: which are read-only, what they read and write.

:func:`usage` reads the words of one simple command (its command word
already stripped of wrappers) and says:

- its ``kind``: ``read-only`` (a curated command, none of whose writing or
  program-running options is present: ``find -exec``, ``sed -i``,
  ``sort -o``, ``git`` subcommands that write...), ``file`` (``mkdir``,
  ``touch``, ``rm``, ``rmdir``, ``mv``, ``cp`` with no option, ``sed -i``
  with one plain ``s///`` script: what ``acceptEdits`` covers inside the
  workspace, as in Claude Code; not ``tee``, ``cp -r`` or ``cp -l``) or
  ``other``;
- the words it reads and writes as paths (``cp a b`` reads ``a``, writes
  ``b``; ``sort -o out``, ``dd of=x``, ``curl -o f``, ``tee f`` write; a hard
  link writes its source too, ``mv``, ``rename`` and ``link`` every operand)
  and those it copies (:mod:`~coterie.tools.permissions.links`);
- a directory it changes to (``cd``, ``pushd``), and whether it is ``git``,
  whose read-only subcommands still run programs a repository's
  ``.git/config`` names (fsmonitor, textconv, external diff), so they pass
  without a prompt only where that configuration is inert. ``git -C dir``,
  ``--git-dir`` and ``--work-tree`` point git at another repository, whose
  configuration nobody looked at: never read-only.

``printenv`` and ``env`` print the environment, secrets included: not
read-only (Claude Code asks too).

A command word spelled with a directory (``./ls``, ``/bin/rm``) is not the
system's command as written, so it is never read-only, nor a plain file
command for ``acceptEdits``. Operands of unknown commands are all
counted as reads, so that Read deny rules see ``python secrets/k``.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Literal

import attrs

from coterie.tools.permissions.gitread import git_reads
from coterie.tools.permissions.links import placing
from coterie.tools.permissions.words import Word, after_equals, split_options, value_word

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["READ_ONLY", "Usage", "usage"]

Kind = Literal["read-only", "file", "other"]


@attrs.frozen
class _Spec:
    #: Options taking a separate value that is not a path.
    values: frozenset[str] = frozenset()
    #: Options whose value is a path the command reads / writes.
    reads: frozenset[str] = frozenset()
    writes: frozenset[str] = frozenset()
    #: Options that make the command write files or run programs.
    forbidden: frozenset[str] = frozenset()
    #: Leading operands that are text, not paths (grep's pattern, chmod's mode).
    skip: int = 0
    #: Whether operands are paths at all (echo's are text).
    paths: bool = True
    #: The most operands a read-only use may have (``uniq in out`` writes out).
    max_operands: int | None = None


def _s(*names: str) -> frozenset[str]:
    return frozenset(names)


_FIND_FORBIDDEN = _s(
    "-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls",
)  # fmt: skip
_PLAIN = _Spec()
_TEXT = _Spec(paths=False)
#: The curated read-only commands.
READ_ONLY: dict[str, _Spec] = {
    **dict.fromkeys(("cat", "tac", "nl", "wc", "readlink", "realpath", "md5sum"), _PLAIN),
    **dict.fromkeys(("sha1sum", "sha256sum", "sha512sum", "b2sum", "cksum", "sum"), _PLAIN),
    **dict.fromkeys(("strings", "rev", "fold", "fmt", "expand", "unexpand", "paste"), _PLAIN),
    **dict.fromkeys(("comm", "cmp", "od", "hexdump", "base64", "base32", "column"), _PLAIN),
    **dict.fromkeys(("echo", "printf", "true", "false", "whoami", "id", "uname"), _TEXT),
    **dict.fromkeys(("basename", "dirname", "seq", "test", "[", "expr", "nproc"), _TEXT),
    **dict.fromkeys(("arch", "tty", "groups", "which", "whereis", "type"), _TEXT),
    **dict.fromkeys(("uptime", "locale", "pwd", "sleep", "ps", "pgrep", "free"), _TEXT),
    "ls": _Spec(values=_s("-I", "--ignore", "-w", "--width", "-T", "--tabsize")),
    "tree": _Spec(values=_s("-L", "-P", "-I", "--charset"), forbidden=_s("-o", "-R")),
    "head": _Spec(values=_s("-n", "-c", "--lines", "--bytes")),
    "tail": _Spec(values=_s("-n", "-c", "--lines", "--bytes", "-s", "--pid")),
    "cut": _Spec(values=_s("-b", "-c", "-f", "-d", "--output-delimiter")),
    "stat": _Spec(values=_s("-c", "--format", "--printf")),
    "file": _Spec(values=_s("-F", "-e"), reads=_s("-m", "-f"), forbidden=_s("-C", "--compile")),
    "du": _Spec(values=_s("-d", "--max-depth", "-B", "-t", "--exclude"), reads=_s("-X")),
    "df": _Spec(values=_s("-B", "-t", "-x", "--output")),
    "diff": _Spec(values=_s("-U", "-C", "-x", "--label", "-I"), reads=_s("-X", "--from-file")),
    "uniq": _Spec(values=_s("-f", "-s", "-w"), max_operands=1),
    "tr": _TEXT,
    "sort": _Spec(
        values=_s("-k", "-t", "-S", "--key", "--field-separator", "--parallel"),
        forbidden=_s("-o", "--output", "--compress-program", "-T", "--temporary-directory"),
    ),
    "grep": _Spec(
        values=_s("-e", "-m", "-A", "-B", "-C", "--include", "--exclude", "--exclude-dir", "-d"),
        reads=_s("-f", "--file", "--exclude-from"),
        skip=1,
    ),
    "rg": _Spec(
        values=_s("-e", "-g", "--glob", "-t", "-T", "--type", "-m", "-A", "-B", "-C", "-M"),
        reads=_s("-f", "--ignore-file"),
        forbidden=_s("--pre", "--pre-glob", "-z", "--search-zip"),
        skip=1,
    ),
    "jq": _Spec(
        values=_s("--arg", "--argjson", "--indent"),
        reads=_s("-f", "--from-file", "--rawfile", "--slurpfile"),
        skip=1,
    ),
    "find": _Spec(forbidden=_FIND_FORBIDDEN),
    "sed": _Spec(
        values=_s("-l", "--line-length"),
        reads=_s("-f", "--file"),
        forbidden=_s("-i", "--in-place", "-s", "--separate"),
    ),
    "date": _Spec(values=_s("-d", "--date", "-r"), forbidden=_s("-s", "--set"), paths=False),
    "hostname": _Spec(paths=False, max_operands=0),
    "xxd": _Spec(values=_s("-c", "-g", "-l", "-s"), forbidden=_s("-r"), max_operands=1),
    "cd": _PLAIN,
    "pushd": _PLAIN,
    "popd": _TEXT,
    "git": _PLAIN,
}

_SED_SCRIPT = re.compile(
    r"^\s*(?:(?:\d+|\$|/(?:[^/\\]|\\.)*/)(?:\s*,\s*(?:\d+|\$|/(?:[^/\\]|\\.)*/))?\s*)?"
    r"(?:[pdqlnNPDGHghx=]|s(?P<d>[^\s\\])(?:(?!(?P=d))[^\\]|\\.)*(?P=d)"
    r"(?:(?!(?P=d))[^\\]|\\.)*(?P=d)[gpiI0-9]*)\s*$"
)

# -- commands that write ---------------------------------------------------------

_WRITE_ALL = frozenset({"rm", "rmdir", "mkdir", "touch", "unlink", "shred", "truncate", "tee"})
_WRITE_ALL |= frozenset({"gzip", "gunzip", "bzip2", "bunzip2", "xz", "unxz", "zstd", "mv"})
# `link A B` makes B a second name of A; `rename` moves every file it names.
_WRITE_ALL |= frozenset({"link", "rename"})
_WRITE_LAST = frozenset({"cp", "ln", "install", "rsync"})
_MODE_FIRST = frozenset({"chmod", "chown", "chgrp"})
_FILE_KIND = frozenset({"mkdir", "touch", "rm", "rmdir", "mv", "cp"})
#: One ``s`` command whose flags neither run (``e``) nor write (``w``) anything.
_SED_SUBSTITUTE = re.compile(
    r"^s(?P<d>[^\s\\])(?:(?!(?P=d))[^\\\n]|\\[^\n])*(?P=d)"
    r"(?:(?!(?P=d))[^\\\n]|\\[^\n])*(?P=d)[gpiI0-9]*$"
)
#: Global options pointing git at another repository (``git -C dir``, ``--git-dir``).
_GIT_ELSEWHERE = _s("-C", "--git-dir", "--work-tree")
_WRITE_VALUES: dict[str, frozenset[str]] = {
    "sort": _s("-o", "--output"),
    "curl": _s("-o", "--output", "-D", "--dump-header", "-c", "--cookie-jar", "--trace"),
    "wget": _s("-O", "--output-document", "-P", "--directory-prefix", "-o", "-a"),
    "tar": _s("-C", "--directory"),
    "unzip": _s("-d",),
    "zstd": _s("-o",),
    "patch": _s("-o", "--output"),
    "cp": _s("-t", "--target-directory"),
    "mv": _s("-t", "--target-directory"),
    "ln": _s("-t", "--target-directory"),
    "install": _s("-t", "--target-directory"),
    "tree": _s("-o",),
    "git": _s("--output",),
}  # fmt: skip
_VALUE_OPTIONS: dict[str, frozenset[str]] = {
    "mkdir": _s("-m", "--mode"),
    "touch": _s("-d", "-t", "--date"),
    "truncate": _s("-s", "--size", "-r", "--reference"),
    "cp": _s("-S", "--suffix"),
    "mv": _s("-S", "--suffix"),
    "install": _s("-m", "-o", "-g", "-S"),
    "shred": _s("-n", "-s"),
    "tee": frozenset(),
}


@attrs.frozen
class Usage:
    """What one simple command does with files, as far as coterie knows."""

    kind: Kind
    reads: tuple[Word, ...] = ()
    writes: tuple[Word, ...] = ()
    #: The directory ``cd``/``pushd`` moves to (``None``: it does not move).
    chdir: Word | None = None
    #: ``cd`` with no operand (home) or ``popd``: moves somewhere not written here.
    chdir_elsewhere: bool = False
    #: A read-only git command: harmless only when the repository is trusted.
    git: bool = False
    #: Reads directories recursively (``grep -r``, ``rg``): a Read deny rule
    #: anywhere below an operand matters.
    recursive: bool = False
    #: What it copies somewhere (``cp``, ``install``, ``rsync``, ``ln -s`` sources):
    #: a copy of configuration makes new configuration where it lands.
    copies: tuple[Word, ...] = ()


def usage(words: Sequence[Word]) -> Usage:
    """What the simple command *words* (wrappers stripped) reads and writes."""
    if not words:
        return Usage("read-only")
    name = words[0].value
    args = list(words[1:])
    if "/" in words[0].raw or not words[0].literal:
        # `/bin/rm x` writes what `rm x` writes, but is no plain file command.
        return attrs.evolve(_other(name, args), kind="other")
    if name == "git":
        return _git(args)
    spec = READ_ONLY.get(name)
    if spec is not None:
        found = _read_only(name, spec, args)
        if found is not None:
            return found
    return _other(name, args)


def _read_only(name: str, spec: _Spec, args: list[Word]) -> Usage | None:
    if name == "find":
        return _find(spec, args)
    options, operands = split_options(args, spec.values | spec.reads | spec.writes)
    for option, _ in options:
        if option in spec.forbidden or option.partition("=")[0] in spec.forbidden:
            return None
    if spec.max_operands is not None and len(operands) > spec.max_operands:
        return None
    reads = [v for o, w in options if o in spec.reads and (v := value_word(o, w)) is not None]
    if name == "sed":
        scripts = [w for o, w in options if o in ("-e", "--expression") and w is not None]
        if not scripts and not any(o in ("-f", "--file") for o, _ in options):
            scripts, operands = operands[:1], operands[1:]
        if not all(_SED_SCRIPT.match(s.value) for s in scripts):
            return None
    elif name == "date" and any(not w.value.startswith("+") for w in operands):
        return None
    skip = spec.skip
    if any(o in ("-e", "-f", "--file", "--regexp") for o, _ in options):
        skip = 0  # the pattern came as an option: every operand is a path
    paths = operands[skip:] if spec.paths else []
    recursive = name == "rg" or (
        name == "grep" and any(o in ("-r", "-R", "--recursive") for o, _ in options)
    )
    if recursive and not paths:
        paths = [Word(".")]  # `rg x`, `grep -r x`: the current directory, recursively
    if name in ("cd", "pushd"):
        target = paths[0] if paths and paths[0].value != "-" else None
        return Usage("read-only", tuple(paths), chdir=target, chdir_elsewhere=target is None)
    if name == "popd":
        return Usage("read-only", chdir_elsewhere=True)
    return Usage("read-only", tuple(reads + paths), recursive=recursive)


def _find(spec: _Spec, args: list[Word]) -> Usage | None:
    starts: list[Word] = []
    for i, w in enumerate(args):
        if w.value.startswith(("-", "(", "!")) and w.value not in ("-",):
            if any(a.value in spec.forbidden for a in args[i:]):
                return None
            break
        starts.append(w)
    else:
        if any(a.value in spec.forbidden for a in args):
            return None
    return Usage("read-only", tuple(starts), recursive=True)


def _git(args: list[Word]) -> Usage:
    at = 0
    while at < len(args) and args[at].value.startswith("-"):  # up to the subcommand
        if args[at].value.partition("=")[0] in _GIT_ELSEWHERE:
            return _other("git", args)
        at += 2 if args[at].value == "--namespace" else 1
    reads = git_reads(args)
    if reads is None:
        return _other("git", args)
    return Usage("read-only", reads, git=True)


def _other(name: str, args: list[Word]) -> Usage:
    """An unknown or writing command: its write targets, and every operand as a read."""
    values = _VALUE_OPTIONS.get(name, frozenset()) | _WRITE_VALUES.get(name, frozenset())
    options, operands = split_options(args, values)
    writes: list[Word] = [
        v
        for o, w in options
        if o in _WRITE_VALUES.get(name, ()) and (v := value_word(o, w)) is not None
    ]
    reads: list[Word] = [w for w in operands]
    copies: tuple[Word, ...] = ()
    reads += [v for o, w in options if w is not None and (v := value_word(o, w)) is not None]
    if name in _WRITE_ALL:
        writes += operands
    elif name in _WRITE_LAST and operands:
        placed, copies = placing(name, options, operands)
        writes += placed
    elif name in _MODE_FIRST:
        skip = 0 if any(o.startswith("--reference") for o, _ in options) else 1
        writes += operands[skip:]
    elif name == "dd":
        for w in operands:
            key, eq, _ = w.value.partition("=")
            if eq and key == "of":
                writes.append(after_equals(w))
            elif eq and key == "if":
                reads.append(after_equals(w))
    elif name == "sed" and any(o in ("-i", "--in-place") for o, _ in options):
        writes += operands[1:]
    elif name == "uniq" and len(operands) > 1:
        writes.append(operands[1])
    elif name == "unzip" or (name == "tar" and _tar_extracts(args)):
        # Extracting writes below the current directory (or -C / -d, taken above).
        writes.append(Word("."))
    kind: Kind = "file" if _plain_file_command(name, options, operands) else "other"
    return Usage(kind, tuple(reads), tuple(writes), copies=copies)


def _plain_file_command(
    name: str, options: list[tuple[str, Word | None]], operands: list[Word]
) -> bool:
    """Whether ``acceptEdits`` covers this command inside the workspace (as Claude Code
    does): the plain file commands, ``cp`` only with no option (``cp -l`` links,
    ``cp -r`` carries whole trees), ``sed -i`` only with one plain ``s///`` script."""
    if name == "cp":
        return not options
    if name == "sed":
        return (
            options in ([("-i", None)], [("--in-place", None)])
            and len(operands) > 1
            and operands[0].literal
            and _SED_SUBSTITUTE.match(operands[0].value) is not None
        )
    return name in _FILE_KIND


def _tar_extracts(args: list[Word]) -> bool:
    first = args[0].value if args else ""
    if first and not first.startswith("-") and "x" in first:
        return True  # old style: `tar xf a.tar`
    return any(
        w.value in ("--extract", "--get")
        or (w.value.startswith("-") and not w.value.startswith("--") and "x" in w.value)
        for w in args
    )
