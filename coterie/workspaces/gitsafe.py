"""Running git in a checkout that may not be trusted, without running its programs.

Theory of operation. A repository's ``.git/config`` is the checkout's
content, and git obeys dozens of keys that name a program (an fsmonitor,
hooks, a pager, filter and merge drivers, textconv, gpg, credential helpers,
``core.sshCommand``, transports such as ``ext::`` reached through URL
rewriting...), or that pull in more configuration (``include.path``,
``includeIf``) or point git elsewhere (``core.worktree``). A list of keys to
switch off is never complete, so this module works the other way round,
from an allow list:

1. git runs with no system configuration (``GIT_CONFIG_NOSYSTEM``), no global
   one (``GIT_CONFIG_GLOBAL=/dev/null``), no ``GIT_*`` variable of the
   caller's environment, no editor, pager or terminal prompt;
2. before it runs, the repository's own configuration is listed (reading it
   runs nothing) and every key is classified by :func:`classify`: *inert*
   (known to name no program and to send git nowhere else), *neutralised*
   (a program-naming key that a command-line value of ours, which beats
   every file, makes harmless: :data:`RULES` carries that value), or
   *refused*: every other key, known or not. One refused key and the
   runtime does not run git there at all (:class:`GitRefused` names it).
3. what the user's own global configuration says about who they are and how
   they reach their remotes (``user.*``, ``credential.helper``,
   ``core.sshCommand``, ``safe.directory``) is read explicitly and passed on:
   those are the user's choices, not the checkout's.

Each override was checked on git 2.39: an empty ``filter.<d>.clean``,
``diff.<d>.textconv`` or ``diff.external`` runs nothing (git fails to run
``""`` or keeps the content); an empty ``credential.helper`` resets the list,
URL-specific helpers included. Keys git reads first-wins
(``remote.<r>.uploadpack``/``receivepack``: ``-c`` does not beat
``.git/config``) cannot be neutralised and are refused, as are merge drivers
(replacing one with a clean merge would lose work silently).

This module is the decision half, sans-io: it runs nothing and reads no file
(only :func:`git_env` reads the caller's environment). :func:`classify` and
:func:`plan` judge the keys; :func:`parse_listing`, :func:`user_config` and
:func:`has_submodule` read git's output; :func:`git_env` makes the
environment. :mod:`coterie.workspaces.git` is the other half, the one place
that runs git: it lists the configuration (:data:`LIST_CONFIG`,
:data:`USER_CONFIG`), asks this module, and runs the command, for the
workspaces, the system prompt's snapshot, the check of the model's read-only
git (:mod:`coterie.tools.permissions.gitread`) and the plugin marketplaces.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from typing import Literal

from coterie.errors import CoterieError

__all__ = [
    "GIT",
    "LIST_CONFIG",
    "RULES",
    "SAFE_GIT_CONFIG",
    "SAFE_PROTOCOLS",
    "USER_CONFIG",
    "GitRefused",
    "classify",
    "git_env",
    "has_submodule",
    "parse_listing",
    "plan",
    "user_config",
]

Verdict = Literal["inert", "neutralised", "refused"]
Config = list[tuple[str, str]]
#: A neutralised key's overrides: constant, or made from the key's subsection.
Override = tuple[tuple[str, str], ...] | Callable[[str], tuple[tuple[str, str], ...]]

INERT = "inert"
#: Neutralised by what every command gets anyway (``--no-pager``, ``GIT_EDITOR=:``).
BY_FLAGS: tuple[tuple[str, str], ...] = ()
#: Transports git may use; every other one (``ext::``, ``fd::``, remote helpers) is off.
SAFE_PROTOCOLS = ("file", "git", "http", "https", "ssh")


def _set(key: str, value: str) -> tuple[tuple[str, str], ...]:
    return ((key, value),)


def _filter(driver: str) -> tuple[tuple[str, str], ...]:
    # An empty command is no command; not required, so git keeps the content as it is.
    empty = tuple((f"filter.{driver}.{v}", "") for v in ("clean", "smudge", "process"))
    return (*empty, (f"filter.{driver}.required", "false"))


def _protocol(name: str) -> tuple[tuple[str, str], ...]:
    return _set(f"protocol.{name}.allow", "always" if name in SAFE_PROTOCOLS else "never")


def _inert(*names: str) -> dict[str, Override | str]:
    return dict.fromkeys(names, INERT)


#: What each key is: ``"inert"``, or the overrides that neutralise it. A key is
#: written ``section.variable`` or ``section.<>.variable`` (any subsection); ``*``
#: is any variable. Section and variable are lower case, as git lists them.
#: Anything not here is refused.
RULES: dict[str, Override | str] = {
    **_inert(*(f"core.{v}" for v in (
        "repositoryformatversion", "filemode", "bare", "logallrefupdates", "ignorecase",
        "precomposeunicode", "symlinks", "autocrlf", "eol", "safecrlf", "checkstat",
        "trustctime", "quotepath", "compression", "loosecompression", "bigfilethreshold",
        "excludesfile", "attributesfile", "abbrev", "sharedrepository", "untrackedcache",
        "splitindex", "preloadindex", "multipackindex", "commitgraph", "whitespace",
        "warnambiguousrefs", "sparsecheckout", "sparsecheckoutcone", "protecthfs",
        "protectntfs", "longpaths", "notesref", "commentchar", "hidedotfiles",
        "fsmonitorhookversion", "checkroundtripencoding", "packedgitwindowsize",
        "packedgitlimit", "deltabasecachelimit", "fsync", "fsyncmethod",
        "filesreflocktimeout", "packedrefstimeout", "alternaterefsprefixes", "fscache",
        "restrictinheritedhandles", "fsyncobjectfiles",
    ))),
    "core.fsmonitor": _set("core.fsmonitor", "false"),
    "core.hookspath": _set("core.hooksPath", "/dev/null"),
    "core.pager": _set("core.pager", "cat"),
    "core.sshcommand": _set("core.sshCommand", "ssh"),
    "core.askpass": _set("core.askPass", ""),
    "core.editor": BY_FLAGS,  # GIT_EDITOR=: beats it
    "sequence.editor": BY_FLAGS,  # GIT_SEQUENCE_EDITOR=: beats it
    "pager.*": BY_FLAGS,  # --no-pager
    **_inert(*(f"extensions.{v}" for v in (
        "worktreeconfig", "objectformat", "partialclone", "preciousobjects", "noop"))),
    **_inert(*(f"remote.<>.{v}" for v in (
        "url", "pushurl", "fetch", "push", "mirror", "skipdefaultupdate", "skipfetchall",
        "tagopt", "prune", "prunetags", "promisor", "partialclonefilter", "proxy",
        "proxyauthmethod", "serveroption"))),
    "remote.pushdefault": INERT,
    **_inert(*(f"branch.<>.{v}" for v in (
        "remote", "pushremote", "merge", "rebase", "description",
        "vscode-merge-base"))),
    **_inert("branch.autosetupmerge", "branch.autosetuprebase", "branch.sort"),
    **_inert("user.*", "author.*", "committer.*", "i18n.*", "advice.*", "column.*",
             "color.*", "color.<>.*", "gc.*", "gc.<>.*", "pack.*", "repack.*", "index.*",
             "feature.*", "transfer.*", "rerere.*", "alias.*", "checkout.*",
             "clone.*", "worktree.*", "maintenance.*", "maintenance.<>.*", "stash.*",
             "grep.*", "pretty.*", "versionsort.*", "safe.*", "blame.*", "rebase.*",
             "lfs.*", "lfs.<>.access", "lfs.<>.locksverify", "http.*", "http.<>.*",
             "init.defaultbranch", "protocol.version", "ssh.variant",
             "gui.*"),  # git gui's window state and the like: coterie never runs git gui
    **_inert("fetch.*", "pull.*", "push.*", "status.*", "log.*", "commit.*", "tag.*"),
    "fetch.recursesubmodules": _set("fetch.recurseSubmodules", "false"),
    "pull.twohead": "refused",  # merge strategies are programs
    "pull.octopus": "refused",
    "push.gpgsign": _set("push.gpgSign", "false"),
    "push.recursesubmodules": _set("push.recurseSubmodules", "no"),
    "status.submodulesummary": _set("status.submoduleSummary", "false"),
    "log.showsignature": _set("log.showSignature", "false"),
    "commit.gpgsign": _set("commit.gpgSign", "false"),
    "tag.gpgsign": _set("tag.gpgSign", "false"),
    "tag.forcesignannotated": _set("tag.forceSignAnnotated", "false"),
    "merge.*": INERT,
    "merge.verifysignatures": _set("merge.verifySignatures", "false"),
    **_inert("merge.<>.name", "merge.<>.recursive"),  # merge.<>.driver: refused
    "diff.*": INERT,
    "diff.external": _set("diff.external", ""),
    "diff.ignoresubmodules": _set("diff.ignoreSubmodules", "all"),
    **_inert(*(f"diff.<>.{v}" for v in (
        "binary", "xfuncname", "funcname", "wordregex", "cachetextconv", "algorithm"))),
    "diff.<>.textconv": lambda d: _set(f"diff.{d}.textconv", ""),
    "diff.<>.command": lambda d: _set(f"diff.{d}.command", ""),
    **dict.fromkeys((f"filter.<>.{v}" for v in ("clean", "smudge", "process", "required")),
                    _filter),
    "credential.helper": _set("credential.helper", ""),
    "credential.<>.helper": lambda url: _set(f"credential.{url}.helper", ""),
    **_inert("credential.username", "credential.usehttppath", "credential.<>.username",
             "credential.<>.usehttppath"),
    "gpg.program": _set("gpg.program", "gpg"),
    "gpg.openpgp.program": _set("gpg.openpgp.program", "gpg"),
    "gpg.x509.program": _set("gpg.x509.program", "gpgsm"),
    "gpg.ssh.program": _set("gpg.ssh.program", "ssh-keygen"),
    "gpg.ssh.defaultkeycommand": _set("gpg.ssh.defaultKeyCommand", ""),
    **_inert("gpg.format", "gpg.mintrustlevel", "gpg.ssh.allowedsignersfile",
             "gpg.ssh.revocationfile"),
    "protocol.allow": (("protocol.allow", "never"),
                       *(p for n in (*SAFE_PROTOCOLS, "ext", "fd") for p in _protocol(n))),
    "protocol.<>.allow": _protocol,
    "submodule.recurse": _set("submodule.recurse", "false"),
    **_inert("submodule.active", "submodule.fetchjobs", "submodule.propagatebranches"),
    **_inert(*(f"submodule.<>.{v}" for v in (
        "url", "path", "active", "branch", "ignore", "fetchrecursesubmodules", "shallow"))),
    **_inert(*(f"trailer.{v}" for v in ("separators", "where", "ifexists", "ifmissing"))),
    **_inert(*(f"trailer.<>.{v}" for v in ("key", "where", "ifexists", "ifmissing"))),
    **_inert("uploadpack.hiderefs", "uploadpack.allowfilter", "uploadpack.allowtipsha1inwant",
             "uploadpack.allowreachablesha1inwant", "uploadpack.allowanysha1inwant",
             "uploadpack.keepalive", "uploadpack.allowrefinwant"),
}  # fmt: skip

#: The overrides every git command gets, whatever the repository sets.
SAFE_GIT_CONFIG: tuple[tuple[str, str], ...] = tuple(
    pair for rule in RULES.values() if isinstance(rule, tuple) for pair in rule
)
#: The user's own global settings passed on (see the module docstring, 3.).
_USER_KEYS = ("user.name", "user.email", "credential.helper", "core.sshcommand", "safe.directory")
_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_ATTR_NOSYSTEM": "1",
    "GIT_EDITOR": ":", "GIT_SEQUENCE_EDITOR": ":", "GIT_PAGER": "cat", "PAGER": "cat",
    "GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0",
}  # fmt: skip
#: The start of every git command the runtime runs (no pager, no optional lock).
GIT = ("git", "--no-pager", "--no-optional-locks")
#: Every key of the configuration git would read in a checkout (local, worktree and
#: included files; no system or global one, under ``git_env(())``): reading runs nothing.
LIST_CONFIG = ("config", "--list", "--show-scope", "--null")
#: The user's own global settings of the module docstring (3.), read with the
#: caller's environment, as the user's git would.
USER_CONFIG = (
    "config", "--global", "--includes", "--null", "--get-regexp",
    "^(" + "|".join(k.replace(".", r"\.") for k in _USER_KEYS) + ")$",
)  # fmt: skip


class GitRefused(CoterieError, RuntimeError):
    """The runtime will not run git in a checkout: its configuration sets a key that
    could make git run a program (or it could not be read). The message is one line."""


def _split(key: str) -> tuple[str, str | None, str]:
    section, _, rest = key.partition(".")
    sub, _, variable = rest.rpartition(".")
    return section.lower(), (sub if _ else None), variable.lower()


def _rule(key: str) -> Override | str | None:
    section, sub, variable = _split(key)
    middle = f"{section}.<>." if sub is not None else f"{section}."
    # gpg.<format>.program: the formats git knows are spelt out, so look them up whole.
    whole = f"{section}.{sub}.{variable}" if sub is not None else None
    for shape in (whole, middle + variable, middle + "*"):
        if shape is not None and shape in RULES:
            return RULES[shape]
    return None


def classify(key: str) -> Verdict:
    """Whether the configuration key *key* is inert, neutralised or refused (see the
    module docstring); pure."""
    rule = _rule(key)
    if rule is None or rule == "refused":
        return "refused"
    return "inert" if rule == INERT else "neutralised"


def _refusal(key: str) -> str:
    return (
        f"the repository's git configuration sets {key}, which could make git run a"
        " program; the runtime will not run git here"
    )


def plan(keys: Iterable[str]) -> Config:
    """The command-line configuration under which git runs none of the programs a
    configuration with *keys* names; :class:`GitRefused` on the first refused key."""
    config = list(SAFE_GIT_CONFIG)
    for key in keys:
        rule = _rule(key)
        if rule is None or rule == "refused":
            raise GitRefused(_refusal(key))
        if callable(rule):
            sub = _split(key)[1]
            assert sub is not None
            config += [pair for pair in rule(sub) if pair not in config]
    return config


def parse_listing(text: str) -> list[tuple[str, str, str | None]]:
    """(scope, key, value) of each entry of ``git config --list --show-scope --null``
    (a key without ``=`` in the file has no value)."""
    fields = text.split("\0")
    entries = []
    for scope, record in zip(fields[0::2], fields[1::2], strict=False):
        key, newline, value = record.partition("\n")
        entries.append((scope, key, value if newline else None))
    return entries


def user_config(listed: str, keys: Iterable[str]) -> Config:
    """The settings to pass on from *listed*, the output of git's :data:`USER_CONFIG`:
    all but a ``user.*`` the repository (whose keys are *keys*) sets itself."""
    local = {k.lower() for k in keys}
    pairs = []
    for record in listed.split("\0"):
        key, newline, value = record.partition("\n")
        if newline and not (key.startswith("user.") and key in local):
            pairs.append((key, value))
    return pairs


def has_submodule(index: str) -> bool:
    """Whether ``git ls-files --stage -z``'s output *index* has a submodule (a
    gitlink): git runs itself inside each, under that one's own configuration."""
    return any(entry.startswith("160000 ") for entry in index.split("\0"))


def git_env(config: Iterable[tuple[str, str]]) -> dict[str, str]:
    """The environment of a git command under *config*: the caller's without its
    ``GIT_*`` variables, the settings of the module docstring (1.), and
    *config* given as ``GIT_CONFIG_*`` (the command-line scope, over every file)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(_ENV)
    pairs = list(config)
    env["GIT_CONFIG_COUNT"] = str(len(pairs))
    for i, (key, value) in enumerate(pairs):
        env[f"GIT_CONFIG_KEY_{i}"] = key
        env[f"GIT_CONFIG_VALUE_{i}"] = value
    return env
