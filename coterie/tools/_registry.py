"""The tool registry and the one function the turn loop calls to run a tool.

:func:`execute_tool_call` never raises for anything the model did: an
unknown tool, input that does not fit the schema, a permission denial or a
tool's own failure all come back as an error :class:`ToolResult` the model
can read and act on. Only cancellation (and other ``BaseException``) passes
through, so a cancelled run still stops.

A registry also knows which of its tools are deferred (its
:class:`~coterie.tools.toolsearch.ToolSearchMode`): while any is, it offers a
ToolSearch tool of its own, bound to it, and :meth:`ToolRegistry.schemas`
builds the request's ``tools`` as Claude Code does (:mod:`coterie.tools.toolsearch`).
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any, Protocol

import attrs

from coterie.errors import BackendLost, CoterieError
from coterie.fsutil import is_storage_error
from coterie.tools._base import ToolResult
from coterie.tools._schema import validate
from coterie.tools.permissions.policy import Decision
from coterie.tools.toolsearch import (
    DEFAULT_WINDOW,
    PLACEHOLDER,
    TOOL_SEARCH,
    ToolSearchMode,
    ToolSearchTool,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Iterable, Iterator, Sequence

    from coterie.events import EventType
    from coterie.hooks import AgentHooks
    from coterie.tools._base import Tool, ToolContext

__all__ = ["Authorizer", "ToolRegistry", "ToolSource", "UnknownTool", "execute_tool_call"]


class UnknownTool(CoterieError, LookupError):
    """:meth:`ToolRegistry.get` was asked for a name no tool was registered under."""


class Authorizer(Protocol):
    """Anything that decides whether a tool call may run (a :class:`PermissionGate`)."""

    async def authorize(
        self,
        tool: Tool,
        input: dict[str, Any],
        ctx: ToolContext,
        *,
        hook: Decision | None = None,
        call_id: str | None = None,
    ) -> Decision:
        """Allow or deny this call; "ask" must already have been resolved.

        *hook* is a PreToolUse hook's permission decision, passed only when a
        hook gave one (so an authorizer that takes no ``hook`` still works
        where no hook decides).
        """
        ...


class ToolSource(Protocol):
    """Tools that come and go while a run goes on (an MCP server's, as it connects)."""

    def tools(self) -> Sequence[Tool]:
        """The tools on offer now; a name shadowed by a registered tool is left out."""
        ...


@attrs.frozen
class _Selected:
    """A source's tools for which *where* holds."""

    source: ToolSource
    where: Callable[[Tool], bool]

    def tools(self) -> Sequence[Tool]:
        return [t for t in self.source.tools() if self.where(t)]


@attrs.define
class ToolRegistry:
    """The tools an agent may call, by name: the registered ones in registration
    order, then those its sources offer at the moment (read on every look-up).

    While any of them is deferred, the registry offers its own ToolSearch too:
    found by :meth:`get`, listed by :meth:`offered` and :meth:`schemas`, but not
    one of the tools :meth:`names` and iteration give (it is the registry's, not
    a tool anyone registered, and a registry made from this one has its own)."""

    _tools: dict[str, Tool] = attrs.field(init=False, factory=dict)
    _sources: tuple[ToolSource, ...] = attrs.field(default=(), alias="sources")
    #: Whether deferrable tools are deferred (``ENABLE_TOOL_SEARCH``; Claude Code's
    #: default: always).
    search: ToolSearchMode = attrs.field(default=ToolSearchMode(), kw_only=True)
    #: The context window the ``auto`` mode measures against.
    window: int = attrs.field(default=DEFAULT_WINDOW, kw_only=True)
    #: Other names tools answer to (``Task`` for ``Agent``), to their tool's name.
    _aliases: dict[str, str] = attrs.field(init=False, factory=dict)
    #: This registry's own ToolSearch, offered while a tool is deferred.
    _search_tool: ToolSearchTool = attrs.field(init=False)

    @_search_tool.default
    def _bound_search(self) -> ToolSearchTool:
        return ToolSearchTool(self.deferred)

    @classmethod
    def of(
        cls,
        tools: Iterable[Tool],
        sources: Iterable[ToolSource] = (),
        *,
        search: ToolSearchMode | None = None,
        window: int = DEFAULT_WINDOW,
    ) -> ToolRegistry:
        """A registry of *tools*, in that order (a duplicate name is a ``ValueError``),
        then of what *sources* offer; *search*: whether tools are deferred (None:
        always, Claude Code's default). Another registry's ToolSearch among *tools*
        is left out: each registry offers its own, over its own deferred tools."""
        registry = cls(sources=tuple(sources), search=search or ToolSearchMode(), window=window)
        for tool in tools:
            if not isinstance(tool, ToolSearchTool):
                registry.register(tool)
        return registry

    def joined(self, source: ToolSource) -> ToolRegistry:
        """A new registry of the same tools and sources, and *source*'s tools after them."""
        return ToolRegistry.of(
            self._tools.values(), (*self._sources, source), search=self.search, window=self.window
        )

    def select(self, where: Callable[[Tool], bool]) -> ToolRegistry:
        """A new registry of the same tool objects for which *where* holds, in order
        (a source's tools are chosen by *where* as they come)."""
        return ToolRegistry.of(
            (t for t in self._tools.values() if where(t)),
            (_Selected(s, where) for s in self._sources),
            search=self.search,
            window=self.window,
        )

    def _all(self) -> dict[str, Tool]:
        """The registered tools and the sources', without ToolSearch."""
        if not self._sources:
            return self._tools
        tools = dict(self._tools)
        for source in self._sources:
            for tool in source.tools():
                tools.setdefault(tool.name, tool)
        return tools

    def _with_search(self) -> dict[str, Tool]:
        """:meth:`_all`, and this registry's ToolSearch while a tool is deferred."""
        tools = self._all()
        if TOOL_SEARCH in tools or not self.search.deferred(tools.values(), self.window):
            return tools
        return {**tools, TOOL_SEARCH: self._search_tool}

    def deferred(self) -> list[Tool]:
        """The tools deferred now: their names are announced, their schemas sent
        only once the model loaded them with ToolSearch."""
        return self.search.deferred(self._all().values(), self.window)

    def register(self, tool: Tool) -> None:
        """Add *tool*; a second tool with the same name is a ``ValueError``."""
        names = (tool.name, *getattr(tool, "aliases", ()))
        for name in names:
            if name in self._tools or name in self._aliases:
                raise ValueError(f"a tool named {name!r} is already registered")
        self._tools[tool.name] = tool
        self._aliases.update((alias, tool.name) for alias in names[1:])

    def get(self, name: str) -> Tool:
        """The tool called *name* (or answering to it), or :class:`UnknownTool`."""
        try:
            return self._with_search()[self._aliases.get(name, name)]
        except KeyError:
            raise UnknownTool(name) from None

    def names(self) -> list[str]:
        """Tool names, in registration order, then the sources' in theirs."""
        return list(self._all())

    def __contains__(self, name: object) -> bool:
        return name in self._aliases or name in self._with_search()

    def __iter__(self) -> Iterator[Tool]:
        return iter(list(self._all().values()))

    def __len__(self) -> int:
        return len(self._all())

    def offered(self) -> list[str]:
        """The names of the tools the model is told of (not those only taken by name):
        the deferred ones too (named to it), and ToolSearch while there are some."""
        return [n for n, t in self._with_search().items() if t.capabilities.offered]

    def schemas(self, loaded: Collection[str] = ()) -> list[dict[str, Any]]:
        """``[{name, description, input_schema}]`` for the Messages API ``tools`` field:
        the tools :meth:`offered`, in order; while tools are deferred, only those of
        them named in *loaded* (the model loaded them with ToolSearch), with
        ``defer_loading``, and the placeholder tool.

        The deferred ones go just before the last tool, so that the last (where
        a cache breakpoint goes) is one the API renders in the prompt's prefix,
        and what it renders there is the same whatever is loaded.

        Copies: the caller may mutate them (to add cache breakpoints, say).
        """
        deferred = {t.name for t in self.deferred()}
        eager: list[dict[str, Any]] = []
        late: list[dict[str, Any]] = []
        for t in self._with_search().values():
            if not t.capabilities.offered or (t.name in deferred and t.name not in loaded):
                continue
            schema = {
                "name": t.name,
                "description": t.description,
                "input_schema": copy.deepcopy(t.input_schema),
            }
            if t.name in deferred:
                late.append({**schema, "defer_loading": True})
            else:
                eager.append(schema)
        if not deferred:
            return eager
        return [*eager[:-1], *late, copy.deepcopy(PLACEHOLDER), *eager[-1:]]


async def execute_tool_call(
    registry: ToolRegistry,
    gate: Authorizer | None,
    name: str,
    input: Any,
    ctx: ToolContext,
    *,
    call_id: str | None = None,
) -> ToolResult:
    """Run one ``tool_use``: look up, validate, hooks, authorize, run; errors become results.

    *gate* ``None`` skips the permission check (for embedders who vet calls
    themselves, and for tests); the turn loop always passes one. With
    ``ctx.hooks``, PreToolUse runs before the gate (it may block the call,
    rewrite its input, which is validated again, or give a permission
    decision the gate weighs: never over a deny or ask rule), and PostToolUse
    or PostToolUseFailure after the tool (their reasons and context are
    added to the result the model reads). *call_id* is the ``tool_use`` id
    the hooks are told.
    """
    if name not in registry:
        available = ", ".join(registry.names()) or "none"
        return ToolResult(f"No such tool: {name!r}. Available tools: {available}.", is_error=True)
    tool = registry.get(name)
    if not isinstance(input, dict):
        return ToolResult(
            f"Invalid input for {name}: the input must be a JSON object.", is_error=True
        )
    problems = validate(tool.input_schema, input)
    if problems:
        return ToolResult(f"Invalid input for {name}: " + "; ".join(problems) + ".", is_error=True)
    hooks = ctx.hooks
    hooked: Decision | None = None
    if hooks is not None and hooks.configured("PreToolUse"):
        verdict = await hooks.fire(
            "PreToolUse", tool_name=name, tool_input=input, tool_use_id=call_id
        )
        if verdict.blocked:
            reason = verdict.reason or "Blocked by a PreToolUse hook."
            _emit(ctx, "tool.denied", tool=name, reason=reason, rule="hook:PreToolUse")
            return ToolResult(f"A PreToolUse hook blocked {name}: {reason}", is_error=True)
        if verdict.updated_input is not None:
            input = verdict.updated_input
            problems = validate(tool.input_schema, input)
            if problems:
                return ToolResult(
                    f"A PreToolUse hook rewrote the input of {name} into one that does not"
                    " fit its schema: " + "; ".join(problems) + ".",
                    is_error=True,
                )
        if verdict.permission is not None:
            hooked = Decision(
                verdict.permission,
                verdict.reason or f"A PreToolUse hook said {verdict.permission}.",
                "hook:PreToolUse",
            )
    if gate is not None:
        decision = await gate.authorize(tool, input, ctx, hook=hooked, call_id=call_id)
        if decision.behavior != "allow":
            _emit(ctx, "tool.denied", tool=name, reason=decision.reason, rule=decision.rule)
            return ToolResult(
                f"Permission to use {name} was denied. {decision.reason}", is_error=True
            )
        if decision.updated_input is not None:  # approved as rewritten when asked
            input = decision.updated_input
            problems = validate(tool.input_schema, input)
            if problems:
                return ToolResult(
                    f"The input {name} was approved with does not fit its schema: "
                    + "; ".join(problems)
                    + ".",
                    is_error=True,
                )
    if gate is not None and decision.call_root is not None:
        # A person let this one call reach a folder outside the workspace: the call
        # runs with a copy of the context that admits it, and nothing else does.
        ctx = attrs.evolve(ctx, call_roots=(decision.call_root,))
    try:
        result = await tool.run(input, ctx)
    except Exception as exc:
        if is_storage_error(exc) or isinstance(exc, BackendLost):
            # A full or read-only disk a tool did not answer for itself (its own
            # files' errors it reports), or a server that lost the run's data, is
            # the run's own state failing: the board, a mailbox. Not the model's
            # to work around: the run stops.
            raise
        # A bug in one tool must not end the agent's turn loop; cancellation
        # and KeyboardInterrupt are BaseExceptions and pass through untouched.
        _emit(ctx, "tool.failed", tool=name, error=f"{type(exc).__name__}: {exc}")
        result = ToolResult(
            f"{name} failed unexpectedly: {type(exc).__name__}: {exc}", is_error=True
        )
    if hooks is not None:
        result = await _after(hooks, name, input, call_id, result)
    return result


async def _after(
    hooks: AgentHooks, name: str, input: dict[str, Any], call_id: str | None, result: ToolResult
) -> ToolResult:
    """PostToolUse (or PostToolUseFailure): what its hooks add to the result."""
    if result.is_error:
        if not hooks.configured("PostToolUseFailure"):
            return result
        verdict = await hooks.fire(
            "PostToolUseFailure",
            tool_name=name,
            tool_input=input,
            tool_use_id=call_id,
            error=result.content,
        )
    else:
        if not hooks.configured("PostToolUse"):
            return result
        verdict = await hooks.fire(
            "PostToolUse",
            tool_name=name,
            tool_input=input,
            tool_use_id=call_id,
            tool_response=result.content,
        )
    notes = [verdict.reason] if verdict.blocked and verdict.reason else []
    if verdict.context:
        notes.append(verdict.context)
    if not notes:
        return result
    event = "PostToolUseFailure" if result.is_error else "PostToolUse"
    added = "".join(f'\n\n<hook-feedback event="{event}">{note}</hook-feedback>' for note in notes)
    return result.with_note(added)


def _emit(ctx: ToolContext, type: EventType, **data: Any) -> None:
    if ctx.events is not None:
        ctx.events.emit(type, agent=ctx.agent, **data)
