"""The tool registry and the one function the turn loop calls to run a tool.

:func:`execute_tool_call` never raises for anything the model did: an
unknown tool, input that does not fit the schema, a permission denial or a
tool's own failure all come back as an error :class:`ToolResult` the model
can read and act on. Only cancellation (and other ``BaseException``) passes
through, so a cancelled run still stops.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any, Protocol

import attrs

from coterie.errors import CoterieError
from coterie.tools._base import ToolResult
from coterie.tools._schema import validate

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Sequence

    from coterie.events import EventType
    from coterie.tools._base import Tool, ToolContext
    from coterie.tools.permissions.policy import Decision

__all__ = ["Authorizer", "ToolRegistry", "ToolSource", "UnknownTool", "execute_tool_call"]


class UnknownTool(CoterieError, LookupError):
    """:meth:`ToolRegistry.get` was asked for a name no tool was registered under."""


class Authorizer(Protocol):
    """Anything that decides whether a tool call may run (a :class:`PermissionGate`)."""

    async def authorize(self, tool: Tool, input: dict[str, Any], ctx: ToolContext) -> Decision:
        """Allow or deny this call; "ask" must already have been resolved."""
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
    order, then those its sources offer at the moment (read on every look-up)."""

    _tools: dict[str, Tool] = attrs.field(init=False, factory=dict)
    _sources: tuple[ToolSource, ...] = attrs.field(default=(), alias="sources")

    @classmethod
    def of(cls, tools: Iterable[Tool], sources: Iterable[ToolSource] = ()) -> ToolRegistry:
        """A registry of *tools*, in that order (a duplicate name is a ``ValueError``),
        then of what *sources* offer."""
        registry = cls(sources=tuple(sources))
        for tool in tools:
            registry.register(tool)
        return registry

    def joined(self, source: ToolSource) -> ToolRegistry:
        """A new registry of the same tools and sources, and *source*'s tools after them."""
        return ToolRegistry.of(self._tools.values(), (*self._sources, source))

    def select(self, where: Callable[[Tool], bool]) -> ToolRegistry:
        """A new registry of the same tool objects for which *where* holds, in order
        (a source's tools are chosen by *where* as they come)."""
        return ToolRegistry.of(
            (t for t in self._tools.values() if where(t)),
            (_Selected(s, where) for s in self._sources),
        )

    def _all(self) -> dict[str, Tool]:
        if not self._sources:
            return self._tools
        tools = dict(self._tools)
        for source in self._sources:
            for tool in source.tools():
                tools.setdefault(tool.name, tool)
        return tools

    def register(self, tool: Tool) -> None:
        """Add *tool*; a second tool with the same name is a ``ValueError``."""
        if tool.name in self._tools:
            raise ValueError(f"a tool named {tool.name!r} is already registered")
        self._tools[tool.name] = tool

    def get(self, name: str) -> Tool:
        """The tool called *name*, or :class:`UnknownTool`."""
        try:
            return self._all()[name]
        except KeyError:
            raise UnknownTool(name) from None

    def names(self) -> list[str]:
        """Tool names, in registration order, then the sources' in theirs."""
        return list(self._all())

    def __contains__(self, name: object) -> bool:
        return name in self._all()

    def __iter__(self) -> Iterator[Tool]:
        return iter(list(self._all().values()))

    def __len__(self) -> int:
        return len(self._all())

    def schemas(self) -> list[dict[str, Any]]:
        """``[{name, description, input_schema}]`` for the Messages API ``tools`` field.

        Copies: the caller may mutate them (to add cache breakpoints, say).
        """
        return [
            {
                "name": t.name,
                "description": t.description,
                "input_schema": copy.deepcopy(t.input_schema),
            }
            for t in self._all().values()
        ]


async def execute_tool_call(
    registry: ToolRegistry,
    gate: Authorizer | None,
    name: str,
    input: Any,
    ctx: ToolContext,
) -> ToolResult:
    """Run one ``tool_use``: look up, validate, authorize, run; errors become results.

    *gate* ``None`` skips the permission check (for embedders who vet calls
    themselves, and for tests); the turn loop always passes one.
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
    if gate is not None:
        decision = await gate.authorize(tool, input, ctx)
        if decision.behavior != "allow":
            _emit(ctx, "tool.denied", tool=name, reason=decision.reason, rule=decision.rule)
            return ToolResult(
                f"Permission to use {name} was denied. {decision.reason}", is_error=True
            )
    try:
        return await tool.run(input, ctx)
    except Exception as exc:
        # A bug in one tool must not end the agent's turn loop; cancellation
        # and KeyboardInterrupt are BaseExceptions and pass through untouched.
        _emit(ctx, "tool.failed", tool=name, error=f"{type(exc).__name__}: {exc}")
        return ToolResult(f"{name} failed unexpectedly: {type(exc).__name__}: {exc}", is_error=True)


def _emit(ctx: ToolContext, type: EventType, **data: Any) -> None:
    if ctx.events is not None:
        ctx.events.emit(type, agent=ctx.agent, **data)
