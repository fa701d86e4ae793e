"""Commands that run another command given as their arguments, and how to find it.

``nice -n 5 rm x``, ``taskset -c 0 rm x``, ``chrt -o 0 rm x``: a deny rule on
``rm`` must see the ``rm``. Each :class:`Wrapper` says how its options are
read (which take a value, which take one only when attached, like
``prlimit -n1024``) and how many operands come before the command
(``taskset``'s mask, ``timeout``'s duration, ``chrt``'s priority).

A wrapper whose every option is listed here (``flags`` given) is read as
``getopt`` reads it, long options abbreviated included (``setpriv --no-new``);
an option it does not list makes the rest of the line :data:`UNREADABLE`:
coterie cannot tell where the command starts, so it is an unknown command,
refused when a Bash deny rule exists. Older entries with ``flags=None`` treat
any unlisted option as a flag.
"""

from __future__ import annotations

import re

import attrs

__all__ = ["UNREADABLE", "Wrapper", "WRAPPERS", "hides_arguments", "plainly_wraps", "strip_wrapper"]

#: The command word put in place of a command a wrapper hides from coterie.
UNREADABLE = "\x00unreadable-wrapper"
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=")


def _s(names: str) -> frozenset[str]:
    """The options named in *names*, separated by spaces."""
    return frozenset(names.split())


@attrs.frozen
class Wrapper:
    """How one wrapper's words lead to the command it runs."""

    #: Options taking a value (separate, or attached: ``-n5``, ``--user=x``).
    valued: frozenset[str] = frozenset()
    #: Every other option it has; ``None``: any unlisted option is a flag.
    flags: frozenset[str] | None = None
    #: Options taking a value only when attached (``prlimit -n1024``, ``--nofile=1024``).
    optional: frozenset[str] = frozenset()
    #: Operands before the command (``timeout``'s duration, ``taskset``'s mask).
    operands: int = 0
    #: The operand is there only when it is a number (``chrt [priority] cmd``).
    numeric: bool = False
    #: ``NAME=value`` words may come before the command (``env``).
    assignments: bool = False
    #: Options may follow the operands too (``setarch ARCH -R cmd``).
    options_after: bool = False
    #: Options after the operands giving the command as one string (``flock F -c``),
    #: read as a nested command line elsewhere: no command follows in the words.
    string_options: frozenset[str] = frozenset()
    #: Written with no option (``nohup rm x``, ``timeout 5 rm x``), it leaves what it
    #: runs a plain command, which ``acceptEdits`` may cover (Claude Code does too).
    plain: bool = False
    #: The command's real arguments or directory are not its words: ``xargs`` adds
    #: arguments read from the input, ``chroot`` runs it elsewhere, namespace tools
    #: may remap the file system (so whatever it writes is unknown).
    opaque: bool = False

    def known(self) -> frozenset[str]:
        return self.valued | self.optional | (self.flags or frozenset())


_PRLIMIT = _s(
    "-c -d -e -f -i -l -m -n -q -r -s -t -u -v -x -y --core --data --nice --fsize --sigpending"
    " --memlock --rss --nofile --msgqueue --rtprio --stack --cpu --nproc --as --locks --rttime"
)

WRAPPERS: dict[str, Wrapper] = {
    "command": Wrapper(plain=True),
    "builtin": Wrapper(),
    "exec": Wrapper(_s("-a")),
    "nohup": Wrapper(plain=True),
    "time": Wrapper(_s("-f -o --format --output")),  # also the keyword: `time -p --`
    "nice": Wrapper(_s("-n --adjustment"), plain=True),
    "ionice": Wrapper(_s("-c -n -p --class --classdata --pid")),
    "setsid": Wrapper(),
    "stdbuf": Wrapper(_s("-i -o -e --input --output --error")),
    "timeout": Wrapper(_s("-s -k --signal --kill-after"), operands=1, plain=True),
    "env": Wrapper(_s("-u --unset -C --chdir -S --split-string"), assignments=True),
    "xargs": Wrapper(_s("-I -i -n -P -L -l -d -E -e -s -a"), opaque=True),
    "watch": Wrapper(_s("-n -d --interval")),
    "busybox": Wrapper(),
    "strace": Wrapper(_s("-o -e -p -s -u -E -P -a -b -I -O -S")),
    "ltrace": Wrapper(_s("-o -e -p -s -u -a -n -D -F -x -A -l")),
    "fakeroot": Wrapper(_s("-l --lib --faked -s -i")),
    "unbuffer": Wrapper(),
    "chronic": Wrapper(),
    "nsenter": Wrapper(_s("-t --target -S --setuid -G --setgid"), opaque=True),
    "unshare": Wrapper(_s("-S --setuid -G --setgid -R --root -w --wd"), opaque=True),
    "firejail": Wrapper(opaque=True),  # its options carry their values after `=`
    "parallel": Wrapper(_s("-j --jobs"), opaque=True),
    "caffeinate": Wrapper(_s("-t -w")),
    "proxychains": Wrapper(_s("-f")),
    "proxychains4": Wrapper(_s("-f")),
    "torsocks": Wrapper(_s("-u -p -a -P")),
    "taskset": Wrapper(
        flags=_s("-a --all-tasks -p --pid -c --cpu-list -h --help -V --version"), operands=1
    ),
    "chrt": Wrapper(
        _s("-T --sched-runtime -P --sched-period -D --sched-deadline"),
        flags=_s(
            "-a --all-tasks -b --batch -d --deadline -e --ext -f --fifo -i --idle -o --other"
            " -r --rr -R --reset-on-fork -m --max -p --pid -v --verbose -h --help -V --version"
        ),
        operands=1,
        numeric=True,
    ),
    "numactl": Wrapper(
        _s(
            "-i --interleave -w --weighted-interleave -m --membind -N --cpunodebind -C"
            " --physcpubind -p --preferred -P --preferred-many -M --shmmode -L --length -S"
            " --shm -f --file -I --shmid -o --offset -y --huge-page-size"
        ),
        flags=_s(
            "-a --all -l --localalloc -b --balancing -s --show -H --hardware -u --huge -t"
            " --touch -T --strict -V --verify --version -h --help -d --dump -D --dump-nodes"
        ),
    ),
    "cgexec": Wrapper(_s("-g"), flags=_s("-h --help -b -r --sticky")),
    "prlimit": Wrapper(
        _s("-o --output -p --pid"),
        flags=_s("--noheadings --raw --verbose -h --help -V --version"),
        optional=_PRLIMIT,
    ),
    "setpriv": Wrapper(
        _s(
            "--groups --inh-caps --ambient-caps --bounding-set --rgid --egid --regid --ruid"
            " --euid --reuid --securebits --pdeathsig --selinux-label --apparmor-profile"
            " --landlock-access --landlock-rule --seccomp-filter --ptracer"
        ),
        flags=_s(
            "-d --dump --clear-groups --keep-groups --init-groups --list-caps --no-new-privs"
            " --reset-env -h --help -V --version"
        ),
    ),
    "runuser": Wrapper(
        _s(
            "-c --command -g --group -G --supp-group -s --shell -u --user -w"
            " --whitelist-environment --session-command"
        ),
        flags=_s("- -f --fast -l --login -m -p --preserve-environment -P --pty -h --help -V"),
    ),
    "sudo": Wrapper(
        _s(
            "-u --user -g --group -C --close-from -D --chdir -h --host -p --prompt -r --role"
            " -t --type -U --other-user -T --command-timeout -R --chroot"
        ),
        flags=_s(
            "-A --askpass -b --background -B --bell -E --preserve-env -e --edit -H --set-home"
            " -i --login -K --remove-timestamp -k --reset-timestamp -l --list -n"
            " --non-interactive -P --preserve-groups -S --stdin -s --shell -V --version -v"
            " --validate -N --no-update --help"
        ),
    ),
    "doas": Wrapper(_s("-u -C"), flags=_s("-L -n -s")),
    "flock": Wrapper(
        _s("-w --timeout -E --conflict-exit-code"), operands=1, string_options=_s("-c --command")
    ),
    "chroot": Wrapper(_s("--userspec --groups"), operands=1, opaque=True),
    "setarch": Wrapper(operands=1, options_after=True),
    "linux32": Wrapper(),
    "linux64": Wrapper(),
}


def _long(name: str, spec: Wrapper) -> str | None:
    """The long option *name* stands for: itself, or the one it abbreviates."""
    known = spec.known()
    if name in known:
        return name
    found = [k for k in known if k.startswith(name) and k.startswith("--")]
    return found[0] if len(found) == 1 else None


def _options(rest: list[str], spec: Wrapper, at: int) -> int | None:
    """Index of the first word after the options starting at *at*; ``None``: unreadable."""
    i = at
    while i < len(rest):
        word = rest[i]
        if word == "--":
            return i + 1
        if spec.assignments and _ASSIGNMENT.match(word):
            i += 1
            continue
        if not word.startswith("-") or (word == "-" and "-" not in (spec.flags or {"-"})):
            return i
        if word.startswith("--") or word == "-":
            name, eq, _ = word.partition("=")
            full = _long(name, spec)
            if full is None and spec.flags is not None:
                return None
            if full in spec.valued and not eq:
                i += 1
            i += 1
            continue
        for k, letter in enumerate(word[1:], start=1):
            option = "-" + letter
            if option in spec.valued:
                if k + 1 == len(word):
                    i += 1  # the value is the next word
                break
            if option in spec.optional:
                break  # the rest of the word, if any, is its value
            if spec.flags is not None and option not in spec.flags:
                return None
        i += 1
    return i


def strip_wrapper(words: list[str]) -> list[str] | None:
    """The command *words*' wrapper runs, or ``None`` if the first word is no wrapper.

    ``[UNREADABLE]`` when the wrapper's options cannot be read with certainty.
    """
    spec = WRAPPERS.get(words[0]) if words else None
    if spec is None:
        return None
    rest = words[1:]
    at = _options(rest, spec, 0)
    if at is None:
        return [UNREADABLE]
    for _ in range(spec.operands):
        if at < len(rest) and (not spec.numeric or re.fullmatch(r"[+-]?\d+", rest[at])):
            at += 1
    if rest[at : at + 1] and rest[at] in spec.string_options:
        return []
    if spec.options_after:
        at = _options(rest, spec, at)
        if at is None:
            return [UNREADABLE]
    return rest[at:]


def plainly_wraps(words: list[str], inner: list[str]) -> bool:
    """Whether *words* are a :attr:`Wrapper.plain` wrapper written with no option
    (its operands only: ``timeout 5``) around exactly *inner*."""
    spec = WRAPPERS.get(words[0]) if words else None
    if spec is None or not spec.plain or len(words) != 1 + spec.operands + len(inner):
        return False
    operands = words[1 : 1 + spec.operands]
    return words[1 + spec.operands :] == inner and not any(w.startswith("-") for w in operands)


def hides_arguments(words: list[str]) -> bool:
    """Whether the wrapper *words* start with is :attr:`Wrapper.opaque`, or is ``env``
    changing directory (``env -C dir``)."""
    spec = WRAPPERS.get(words[0]) if words else None
    if spec is None:
        return False
    return spec.opaque or (
        words[0] == "env"
        and any(w in ("-C", "--chdir") or w.startswith(("--chdir=", "-C")) for w in words)
    )
