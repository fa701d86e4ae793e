"""Tools and permission gates (DESIGN §5).

This package owns the tool registry, the built-in tools with Claude Code's
names and input schemas, the workspace sandbox, and the permission gates
(rules from Claude Code's settings files, the hard deny list, modes). It
knows nothing of models or actors; it must not import from ``coterie.agent``,
``coterie.models`` or ``coterie.actors``.
"""

from coterie.tools._base import FileStamp, Tool, ToolContext, ToolResult

__all__ = ["FileStamp", "Tool", "ToolContext", "ToolResult"]
