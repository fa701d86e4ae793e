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
    from collections.abc import Callable, Iterable, Iterator

    from coterie.events import EventType
    from coterie.tools._base import Tool, ToolContext
    from coterie.tools.permissions.policy import Decision

__all__ = ["Authorizer", "ToolRegistry", "UnknownTool", "execute_tool_call"]


class UnknownTool(CoterieError, LookupError):
    """:meth:`ToolRegistry.get` was asked for a name no tool was registered under."""


class Authorizer(Protocol):
    """Anything that decides whether a tool call may run (a :class:`PermissionGate`)."""

    async def authorize(self, tool: Tool, input: dict[str, Any], ctx: ToolContext) -> Decision:
        """Allow or deny this call; "ask" must already have been resolved."""
        ...


@attrs.define
class ToolRegistry:
    """The tools an agent may call, by name, in registration order."""

    _tools: dict[str, Tool] = attrs.field(init=False, factory=dict)
    #: Other names tools answer to (``Task`` for ``Agent``), to their tool's name.
    _aliases: dict[str, str] = attrs.field(init=False, factory=dict)

    @classmethod
    def of(cls, tools: Iterable[Tool]) -> ToolRegistry:
        """A registry of *tools*, in that order (a duplicate name is a ``ValueError``)."""
        registry = cls()
        for tool in tools:
            registry.register(tool)
        return registry

    def select(self, where: Callable[[Tool], bool]) -> ToolRegistry:
        """A new registry of the same tool objects for which *where* holds, in order."""
        return ToolRegistry.of(t for t in self._tools.values() if where(t))

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
            return self._tools[self._aliases.get(name, name)]
        except KeyError:
            raise UnknownTool(name) from None

    def names(self) -> list[str]:
        """Registered tool names, in registration order."""
        return list(self._tools)

    def __contains__(self, name: object) -> bool:
        return name in self._tools or name in self._aliases

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)

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
            for t in self._tools.values()
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
