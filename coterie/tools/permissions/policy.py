"""The permission policy: pure logic from a tool call to allow, deny or ask.

Theory of operation. :meth:`PermissionPolicy.check` walks the gates of docs/engine.md
in order and the first that decides wins:

1. deny rules, and for Bash the hard deny list (no mode can lift either);
   then a tool whose every call is a question to the person (AskUserQuestion,
   the plan tools: :mod:`~coterie.tools.permissions.interaction`) asks, in
   every mode;
   a write to a guarded path (the run's state, the coterie home, shell
   start-up files, credentials: :mod:`~coterie.tools.permissions.protect`)
   or into a path a Read deny rule covers; for Bash, every path a command
   writes or reads (:func:`~coterie.tools.permissions.bashcheck.check_bash`)
   against the sandbox and the Read / Edit / Write deny rules, and any
   command coterie cannot read (``$X``, ``source f``, ``echo ... | bash``)
   when a Bash deny rule exists, since it could be the denied command;
2. the workspace sandbox, for tools whose input names a path (Read, Write,
   Edit, Glob, Grep): a path resolving outside the workspace and
   ``--add-dir``s is denied;
3. plan mode's ceiling: in ``plan`` anything but a read-only or run-state tool,
   or a read-only Bash command, is denied
   (allow rules do not lift it: a plan is made without changing anything);
4. ask rules, and configuration that acts later (``.claude``, ``.mcp.json``,
   ``.git`` at any depth, every spelling of the path: changing it always
   asks, Bash writes included); a Bash write whose target coterie cannot tell;
5. allow rules (not ``Write(path)`` rules, which Claude Code ignores too;
   for Bash every simple command must be allowed, and a command with
   substitutions, ``${...}``, nested shells, a non-literal command word, a
   redirection writing a file or a read outside the workspace is never
   allowed by a narrow rule); with :attr:`PermissionPolicy.sandbox_auto_allow`
   (the OS sandbox works) any Bash command not excluded;
6. the mode: read-only and run-state tools pass in every mode, and so do
   curated read-only Bash commands inside the workspace (their git only where
   the repository's configuration is inert); ``default`` asks for the rest;
   ``acceptEdits`` allows file edits and plain file commands inside the
   workspace (:mod:`~coterie.tools.permissions.bashcheck`, as Claude Code),
   and asks for the rest; ``auto`` asks (the gate's asker is then the Auto
   Mode classifier); ``dontAsk`` denies; ``bypassPermissions`` allows.

Every fact about a tool used here is its own declaration
(:class:`~coterie.tools.capabilities.Capabilities`): its effect, the input
naming its path and whether it reads or writes it, the input holding a shell
command. No tool is recognised by its name, except as a rule names it.

Whatever would ask in ``dontAsk`` is denied. Deny rules and the hard deny
list see every simple command of a compound command, in every spelling
:func:`command_views` produces, so no part can hide behind another.

In ``auto`` the allow rules that grant arbitrary execution (``Bash``,
``Bash(*)``, ``Bash(python:*)``, ...; see
:func:`coterie.autonomy.grants_arbitrary_execution`) are set aside: an allow
rule is decided before the classifier is asked, so such a rule would let any
code run unreviewed. They stay in :attr:`PermissionPolicy.allow` and apply
again in any other mode; :attr:`PermissionPolicy.dropped_allow` lists them
(for the CLI to print when Auto Mode starts).
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import attrs

from coterie.autonomy import grants_arbitrary_execution
from coterie.tools.capabilities import Effect
from coterie.tools.permissions.bashcheck import BashCheck, check_bash
from coterie.tools.permissions.decision import Behavior, Decision
from coterie.tools.permissions.harddeny import hard_deny_reason
from coterie.tools.permissions.interaction import person_decision
from coterie.tools.permissions.places import Places
from coterie.tools.permissions.protect import OUTSIDE
from coterie.tools.permissions.rules import (
    Rule,
    RuleError,
    excluded_command,
    match_command,
    parse_rule,
)
from coterie.tools.permissions.settings import MODES, Mode, PermissionSettings
from coterie.tools.permissions.shell import analyze
from coterie.tools.sandbox import SandboxViolation, allowed_roots, check_inside, resolve_path

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from coterie.tools._base import Tool, ToolContext

__all__ = ["Behavior", "BypassNotLaunched", "Decision", "PermissionPolicy"]


def _reach(path: Path) -> Path:
    """The folder a call reaching *path* may enter: the path itself if it is a folder
    (a search), else the one holding it, or the nearest that exists (a Write may
    create the rest)."""
    folder = path if path.is_dir() else path.parent
    while not folder.is_dir() and folder != folder.parent:
        folder = folder.parent
    return folder


class BypassNotLaunched(ValueError):
    """``bypassPermissions`` was asked of a run not launched to allow it."""


def _validate_mode(instance: object, attribute: object, value: str) -> None:
    if value not in MODES:
        raise ValueError(f"unknown permission mode {value!r}; expected one of {', '.join(MODES)}")


def _rules(rules: Iterable[Rule]) -> tuple[Rule, ...]:
    return tuple(rules)


@attrs.define
class PermissionPolicy:
    """Rules and a mode; :meth:`check` is the pure decision."""

    mode: Mode = attrs.field(default="default", validator=_validate_mode)
    allow: tuple[Rule, ...] = attrs.field(default=(), converter=_rules)
    ask: tuple[Rule, ...] = attrs.field(default=(), converter=_rules)
    deny: tuple[Rule, ...] = attrs.field(default=(), converter=_rules)
    #: Claude Code's ``sandbox.autoAllowBashIfSandboxed``: a Bash command that no
    #: deny, hard-deny or ask stops, and that is not excluded, runs without asking
    #: (in the OS sandbox). Set only when the sandbox is enabled and works.
    sandbox_auto_allow: bool = False
    #: Claude Code's ``sandbox.excludedCommands``: commands (``docker``, ``git:*``)
    #: that run outside the sandbox, so auto-allow never covers them.
    sandbox_excluded: tuple[str, ...] = attrs.field(default=(), converter=tuple)
    #: Claude Code's ``sandbox.allowUnsandboxedCommands`` (default true): a Bash call
    #: with ``dangerouslyDisableSandbox`` runs outside the sandbox, so auto-allow
    #: never covers it (false: the flag is ignored, and the command stays inside).
    sandbox_escapable: bool = True
    #: Claude Code's ``--allow-dangerously-skip-permissions``: the run may be switched
    #: to ``bypassPermissions`` later, though it did not start in it.
    bypass_available: bool = False
    #: The mode the run started in (what :meth:`switch_mode` may come back to).
    _started: Mode = attrs.field(init=False, eq=False, repr=False)

    def __attrs_post_init__(self) -> None:
        self._started = self.mode

    def grant(self, rule: Rule) -> None:
        """Allow what *rule* allows from now on (a person's "don't ask again" at a
        prompt: every gate holding this policy, every agent of the run, sees it)."""
        if rule not in self.allow:
            self.allow = (*self.allow, rule)

    def switch_mode(self, mode: Mode) -> None:
        """Decide in *mode* from now on (a host's ``set_permission_mode``: every gate
        holding this policy sees it). Entering ``bypassPermissions`` needs a run that
        started in it or was launched to allow it (:attr:`bypass_available`;
        :class:`BypassNotLaunched`), and ``auto`` a run that has its classifier
        (:class:`ValueError`)."""
        _validate_mode(self, None, mode)
        started = self._started == "bypassPermissions"
        if mode == "bypassPermissions" and not (started or self.bypass_available):
            raise BypassNotLaunched(
                "bypassPermissions can be entered only by a run started in it, or launched"
                " with --allow-dangerously-skip-permissions"
            )
        if mode == "auto" and self._started != "auto":
            raise ValueError("auto needs the Auto Mode classifier: start the run with --auto")
        self.mode = mode

    @property
    def dropped_allow(self) -> tuple[Rule, ...]:
        """The allow rules this policy sets aside: in ``auto``, those granting
        arbitrary execution (``Bash(*)``, interpreters); in other modes none."""
        if self.mode != "auto":
            return ()
        return tuple(r for r in self.allow if _grants_execution(r.text))

    def _granted(self, ctx: ToolContext) -> list[Rule]:
        """The allow rules an active skill grants *ctx*'s agent (one that does not
        parse grants nothing; in ``auto`` those granting execution are set aside)."""
        rules = []
        for text, skill in ctx.granted:
            try:
                rule = parse_rule(text, root=Path(ctx.workspace), source=f"skill {skill}")
            except RuleError:
                continue
            if not (self.mode == "auto" and _grants_execution(rule.text)):
                rules.append(rule)
        return rules

    @property
    def effective_allow(self) -> tuple[Rule, ...]:
        """The allow rules :meth:`check` applies in the current mode (never a
        ``Write(path)`` rule, which Claude Code ignores too)."""
        live = tuple(r for r in self.allow if not r.inert_allow)
        if self.mode != "auto":
            return live
        return tuple(r for r in live if not _grants_execution(r.text))

    @property
    def notices(self) -> tuple[str, ...]:
        """What to tell the user once when the rules are loaded: the ``Write(path)``
        allow rules set aside."""
        inert = [r.describe() for r in self.allow if r.inert_allow]
        if not inert:
            return ()
        return (f"Write(path) allow rules are ignored; use Edit(path): {', '.join(inert)}",)

    @classmethod
    def from_settings(
        cls,
        settings: PermissionSettings,
        *,
        mode: Mode | str | None = None,
        bypass_available: bool = False,
    ) -> PermissionPolicy:
        """A policy from loaded settings; *mode* (``--permission-mode``) beats defaultMode.

        An unknown *mode* is a ``ValueError`` (a usage error for the CLI). In
        ``auto`` the allow rules granting arbitrary execution are set aside
        (:attr:`dropped_allow`).
        """
        return cls(
            mode=cast("Mode", mode or settings.default_mode or "default"),
            allow=settings.allow,
            ask=settings.ask,
            deny=settings.deny,
            bypass_available=bypass_available,
        )

    @classmethod
    def from_rules(
        cls,
        *,
        allow: Iterable[str] = (),
        ask: Iterable[str] = (),
        deny: Iterable[str] = (),
        mode: Mode = "default",
        source: str | None = None,
    ) -> PermissionPolicy:
        """A policy from rule strings (``--allowedTools``-style, or tests); in ``auto``
        the rules granting arbitrary execution are set aside (:attr:`dropped_allow`)."""
        return cls(
            mode=mode,
            allow=[parse_rule(r, source=source) for r in allow],
            ask=[parse_rule(r, source=source) for r in ask],
            deny=[parse_rule(r, source=source) for r in deny],
        )

    def check(self, tool: Tool, input: dict[str, Any], ctx: ToolContext) -> Decision:
        """Decide one call of *tool* with *input* by the agent owning *ctx*."""
        name = tool.name
        caps = tool.capabilities
        workspace = Path(os.path.realpath(ctx.workspace))
        command = str(input.get(caps.command, "")) if caps.command is not None else None
        paths: list[Path] = []
        if command is None and caps.path is not None:
            # A missing path (Glob, Grep) means the workspace itself.
            target = input.get(caps.path.key) or "."
            try:
                paths = _candidates(str(target), ctx)
            except SandboxViolation as exc:
                return Decision("deny", str(exc))

        # 1. deny rules and the hard deny list
        if command is not None:
            reason = hard_deny_reason(command)
            if reason is not None:
                return Decision(
                    "deny",
                    f"This command is on coterie's hard deny list: {reason}. No rule,"
                    " mode or approval can allow it; do not try to work around it.",
                    "hard-deny",
                )
        rule = self._match(self.deny, tool, input, command, paths, workspace, strict=False)
        if rule is not None:
            return Decision("deny", f"A deny rule forbids this: {rule.describe()}.", rule.text)
        person = person_decision(tool, ctx, self.mode)
        if person is not None:  # a question to the person: asked in every mode
            return person
        bash: BashCheck | None = None
        if command is not None:
            bash = check_bash(command, ctx, deny=self.deny, ask=self.ask)
            if bash.denial is not None:
                return Decision("deny", bash.denial.reason, bash.denial.rule)
        elif caps.edits_files and paths:
            refusal = self._refuse_write(paths, ctx, workspace)
            if refusal is not None:
                return refusal
        # Both ways a Bash command passes by its shape alone (read-only in any mode,
        # file commands in acceptEdits) hold its git to the same condition.
        git_passes = bash is None or bash.git_passes()
        read_only = bash is not None and bash.read_only and git_passes
        edits_only = bash is not None and bash.edits_only and git_passes

        # 2. the sandbox (the first candidate is the resolved path): outside it, a
        # file tool may go only where a person says, for this one call (below)
        reading = not caps.edits_files
        outside: Decision | None = None
        if paths and not check_inside(paths[0], allowed_roots(ctx, reading=reading)):
            outside = self._outside(name, paths[0], reading, ctx)
            if outside.behavior == "deny":
                return outside

        # 3. plan mode's ceiling
        if self.mode == "plan" and not caps.confined and not read_only:
            return Decision(
                "deny",
                f"Plan mode is on: only read-only tools may run, so {name} is not allowed."
                " Investigate with Read, Glob and Grep, then present your plan instead of"
                " making changes.",
                "plan-mode",
            )

        if outside is not None:
            return outside

        # 4. ask rules and protected directories
        rule = self._match(self.ask, tool, input, command, paths, workspace, strict=False)
        if rule is not None:
            return self._asking(f"An ask rule requires approval: {rule.describe()}.", rule.text)
        if caps.edits_files and paths:
            places = Places.of(ctx)
            # Every spelling: `link/x` may be `.claude/x` resolved, or the other way.
            asked = next((r for p in paths if (r := places.asked_reason(p)) is not None), None)
            if asked is not None:
                return self._asking(asked, "protected-path")
        if bash is not None and bash.question is not None:
            question = bash.question
            if question.reach is not None:  # a write outside: a person's call only
                return self._outside_question(question.reason, question.reach)
            return self._asking(question.reason, question.rule)

        # 5. allow rules (a command coterie cannot read matches only a whole-tool rule),
        # with those an active skill grants this agent (set aside as the mode sets aside
        # the settings' own)
        allow = self.effective_allow
        if ctx.granted:
            allow = (*allow, *self._granted(ctx))
        if bash is not None and (bash.unknown or bash.beyond_rules):
            allow = tuple(r for r in allow if r.whole_tool)
        rule = self._match(allow, tool, input, command, paths, workspace, strict=True)
        if rule is not None:
            return Decision("allow", f"Allowed by the rule {rule.describe()}.", rule.text)
        if (
            command is not None
            and self.sandbox_auto_allow
            and not excluded_command(command, self.sandbox_excluded)
            and not (self.sandbox_escapable and input.get("dangerouslyDisableSandbox") is True)
        ):
            return Decision(
                "allow", "Bash runs in the OS sandbox (autoAllowBashIfSandboxed).", "sandbox"
            )

        # 6. the mode
        if read_only:
            return Decision("allow", "A read-only command inside the workspace.", None)
        if edits_only and self.mode == "acceptEdits":
            return Decision(
                "allow", "Permission mode acceptEdits allows file commands in the workspace.", None
            )
        return self._by_mode(tool, command, bash)

    def read_denied(self, path: Path, workspace: Path) -> bool:
        """Whether a Read deny rule covers *path* (Glob and Grep leave such files out)."""
        anchor = Path(os.path.realpath(workspace))
        return any(
            r.tool == "Read" and not r.whole_tool and r.matches_path(path, anchor)
            for r in self.deny
        )

    def read_filter(self, workspace: Path) -> Callable[[Path], bool]:
        """:meth:`read_denied` bound to *workspace*, for ``ToolContext.read_denied``."""
        return functools.partial(self.read_denied, workspace=workspace)

    def _outside(self, name: str, path: Path, reading: bool, ctx: ToolContext) -> Decision:
        """A file tool's call reaching *path*, outside the workspace and the additional
        directories: a question for a person only (no rule or classifier answers it),
        whose yes lets this call reach the path's folder; denied where nobody may be
        asked (``dontAsk``) and for a protected place (credentials, shell start-up
        files, coterie's and Claude's own folders), read or written."""
        roots = ", ".join(str(r) for r in allowed_roots(ctx, reading=reading))
        refused = Places.of(ctx).guarded_reason(path)
        if refused is not None:
            return Decision("deny", refused, "sandbox")
        what = "read" if reading else "change"
        reason = (
            f"{path} is outside the workspace and the additional directories ({roots});"
            f" {name} may {what} it only if the user approves this one call."
        )
        return self._outside_question(reason, _reach(path))

    def _outside_question(self, reason: str, reach: Path) -> Decision:
        """A question only a person may answer, whose yes lets the call reach *reach*
        (denied in ``dontAsk``, where nobody is asked)."""
        if self.mode == "dontAsk":
            return Decision("deny", f"{reason} Permission mode dontAsk denies it.", OUTSIDE)
        return Decision("ask", reason, OUTSIDE, person_only=True, call_root=reach)

    def _asking(self, reason: str, rule: str | None) -> Decision:
        if self.mode == "dontAsk":
            return Decision(
                "deny",
                f"{reason} Permission mode dontAsk denies whatever would need approval.",
                rule,
            )
        return Decision("ask", reason, rule)

    def _refuse_write(
        self, paths: list[Path], ctx: ToolContext, workspace: Path
    ) -> Decision | None:
        """A file tool's write to a guarded path, or into a path a Read deny rule covers."""
        places = Places.of(ctx)
        for path in paths:
            reason = places.guarded_reason(path)
            if reason is not None:
                return Decision("deny", reason, "protected-path")
        for rule in self.deny:
            if rule.tool == "Read" and any(rule.matches_path(p, workspace) for p in paths):
                return Decision(
                    "deny",
                    f"A deny rule forbids this: {rule.describe()} covers {paths[0]}; a file"
                    " nobody may read may not be written either.",
                    rule.text,
                )
        return None

    def _by_mode(self, tool: Tool, command: str | None, bash: BashCheck | None) -> Decision:
        name, effect = tool.name, tool.capabilities.effect
        if effect is Effect.READ_ONLY:
            return Decision("allow", f"{name} is read-only.", None)
        if effect is Effect.RUN_STATE:
            return Decision("allow", f"{name} changes only the run's own state.", None)
        if self.mode == "bypassPermissions":
            return Decision("allow", "Permission mode bypassPermissions allows it.", None)
        if self.mode == "acceptEdits" and tool.capabilities.edits_files:
            return Decision("allow", "Permission mode acceptEdits allows file edits.", None)
        what = f"{name} needs approval"
        if command is not None:
            risks = analyze(command).risks
            if bash is not None and bash.unknown:
                what = f"This command needs approval: {bash.unknown[0]}"
            elif risks:
                what = f"This command needs approval: it contains {', '.join(risks)}"
        return self._asking(f"{what} (permission mode {self.mode}).", None)

    def _match(
        self,
        rules: tuple[Rule, ...],
        tool: Tool,
        input: dict[str, Any],
        command: str | None,
        paths: list[Path],
        workspace: Path,
        *,
        strict: bool,
    ) -> Rule | None:
        """The first of *rules* covering this call.

        ``strict`` (allow rules) reads Bash as written and requires every part
        to be covered and nothing hidden; otherwise (deny, ask) any part in any
        spelling suffices, and a path matches as written or resolved.
        """
        relevant = [r for r in rules if r.applies_to(tool)]
        if not relevant:
            return None
        whole = next((r for r in relevant if r.whole_tool), None)
        if whole is not None:
            return whole
        if command is not None:
            return match_command(relevant, command, strict=strict)
        if paths:
            targets = paths[:1] if strict else paths
            for rule in relevant:
                if rule.takes_path and any(rule.matches_path(p, workspace) for p in targets):
                    return rule
            return None
        if "url" in input:
            # An allow rule covers the host it names (as Claude Code); a deny or ask
            # rule the hosts below it too.
            url = str(input["url"])
            return next((r for r in relevant if r.matches_url(url, subdomains=not strict)), None)
        return None


@functools.lru_cache(maxsize=1024)
def _grants_execution(rule_text: str) -> bool:
    # Checked on every call in auto mode; a session has few distinct allow rules.
    return grants_arbitrary_execution(rule_text)


def _candidates(raw: str, ctx: ToolContext) -> list[Path]:
    """The resolved target first, then its lexical spelling if that differs."""
    base = Path(os.path.realpath(ctx.workspace))
    resolved = resolve_path(raw, base)
    lexical = Path(os.path.normpath(Path(ctx.workspace) / os.path.expanduser(raw)))
    return [resolved] if lexical == resolved else [resolved, lexical]
