"""The typed messages of :meth:`AgentSession.stream <coterie.runtime.AgentSession.stream>`:
the Claude Agent SDK's message classes, in its names and shapes.

An embedding program iterates over these as a program on the Agent SDK
iterates over ``query()``: :class:`SystemMessage` (``system/init`` first, the
subagent task messages as its subclasses), :class:`AssistantMessage` with
content blocks, :class:`UserMessage` with tool results, :class:`StreamEvent`
when partial messages are asked for, and a :class:`ResultMessage` last. Each
class has the fields of its namesake in ``claude_agent_sdk.types``, in the
same order, so code written against the SDK's classes reads these unchanged;
they are coterie's own frozen attrs classes (the SDK is not a dependency).

:func:`message_of` is the one way to make them: a pure function from a line
of ``--output-format stream-json`` (as :class:`~coterie.ui.streamlines.StreamLines`
writes it) to its message, reading the fields the SDK's parser reads. The
stream and the CLI's output are therefore the same messages, line for line.
"""

from __future__ import annotations

from typing import Any

import attrs

__all__ = [
    "AssistantMessage",
    "ContentBlock",
    "HookEventMessage",
    "Message",
    "MessageError",
    "ResultMessage",
    "ServerToolResultBlock",
    "ServerToolUseBlock",
    "StreamEvent",
    "SystemMessage",
    "TaskNotificationMessage",
    "TaskProgressMessage",
    "TaskStartedMessage",
    "TaskUpdatedMessage",
    "TextBlock",
    "ThinkingBlock",
    "ToolResultBlock",
    "ToolUseBlock",
    "UserMessage",
    "message_of",
]


class MessageError(ValueError):
    """A line that is not a message: a field the message must have is missing,
    or a content block is not an object (the SDK's ``MessageParseError``)."""


# -- content blocks ----------------------------------------------------------------


@attrs.frozen
class TextBlock:
    """Text the model wrote (or a user line's text)."""

    text: str


@attrs.frozen
class ThinkingBlock:
    """The model's extended thinking, with the signature the API gave it."""

    thinking: str
    signature: str


@attrs.frozen
class ToolUseBlock:
    """A tool call the model asked for: its ``id``, the tool's ``name`` and ``input``."""

    id: str
    name: str
    input: dict[str, Any]


@attrs.frozen
class ToolResultBlock:
    """What a tool call answered, as the model reads it (``is_error`` for a failure)."""

    tool_use_id: str
    content: str | list[dict[str, Any]] | None = None
    is_error: bool | None = None


@attrs.frozen
class ServerToolUseBlock:
    """A call of a tool the API runs itself (``web_search``), in the reply that made it."""

    id: str
    name: str
    input: dict[str, Any]


@attrs.frozen
class ServerToolResultBlock:
    """A server tool's result, as the SDK reads one (its ``advisor_tool_result``;
    a ``web_search_tool_result`` it leaves out, and so does this)."""

    tool_use_id: str
    content: dict[str, Any]


ContentBlock = (
    TextBlock
    | ThinkingBlock
    | ToolUseBlock
    | ToolResultBlock
    | ServerToolUseBlock
    | ServerToolResultBlock
)

# -- messages ----------------------------------------------------------------------


@attrs.frozen
class UserMessage:
    """A user line: a subagent's prompt, or tool results (``tool_use_result`` is
    Claude Code's structured form of the result)."""

    content: str | list[ContentBlock]
    uuid: str | None = None
    parent_tool_use_id: str | None = None
    tool_use_result: Any = None


@attrs.frozen
class AssistantMessage:
    """One reply of the model to an agent of the run (a subagent's has the Agent
    call's id as ``parent_tool_use_id``)."""

    content: list[ContentBlock]
    model: str
    parent_tool_use_id: str | None = None
    error: str | None = None
    usage: dict[str, Any] | None = None
    message_id: str | None = None
    stop_reason: str | None = None
    session_id: str | None = None
    uuid: str | None = None


@attrs.frozen
class SystemMessage:
    """A system line: ``init`` (``data`` is the whole line: tools, model, cwd,
    ``permissionMode``...), ``fallback_model``, ``status``..."""

    subtype: str
    data: dict[str, Any]


@attrs.frozen
class TaskStartedMessage(SystemMessage):
    """A subagent started (``task_id`` is its name, ``tool_use_id`` the Agent call's)."""

    task_id: str
    description: str
    uuid: str
    session_id: str
    tool_use_id: str | None = None
    task_type: str | None = None


@attrs.frozen
class TaskProgressMessage(SystemMessage):
    """A subagent made a tool call; ``usage`` is its spend so far."""

    task_id: str
    description: str
    usage: dict[str, int]
    uuid: str
    session_id: str
    tool_use_id: str | None = None
    last_tool_name: str | None = None


@attrs.frozen
class TaskUpdatedMessage(SystemMessage):
    """A subagent's state changed (``patch``: ``status``, ``end_time``)."""

    task_id: str
    patch: dict[str, Any]
    status: str | None = None
    session_id: str | None = None
    uuid: str | None = None


@attrs.frozen
class TaskNotificationMessage(SystemMessage):
    """A subagent ended: its ``status``, final text (``summary``) and ``usage``."""

    task_id: str
    status: str
    output_file: str
    summary: str
    uuid: str
    session_id: str
    tool_use_id: str | None = None
    usage: dict[str, int] | None = None


@attrs.frozen
class HookEventMessage(SystemMessage):
    """A hook handler started or answered (with ``include_hook_events``)."""

    hook_event_name: str
    session_id: str | None = None
    uuid: str | None = None


@attrs.frozen
class ResultMessage:
    """How a request ended: the last message of every stream."""

    subtype: str
    duration_ms: int
    duration_api_ms: int
    is_error: bool
    num_turns: int
    session_id: str
    stop_reason: str | None = None
    total_cost_usd: float | None = None
    usage: dict[str, Any] | None = None
    result: str | None = None
    structured_output: Any = None
    model_usage: dict[str, Any] | None = None
    permission_denials: list[Any] | None = None
    errors: list[str] | None = None
    #: The HTTP status of the API call that failed (with ``is_error``), else None.
    api_error_status: int | None = None
    uuid: str | None = None
    terminal_reason: str | None = None


@attrs.frozen
class StreamEvent:
    """A raw streaming event of a reply in progress (with ``include_partial_messages``)."""

    uuid: str
    session_id: str
    event: dict[str, Any]
    parent_tool_use_id: str | None = None


Message = (
    UserMessage | AssistantMessage | SystemMessage | ResultMessage | StreamEvent
)  # fmt: skip

# -- the converter -----------------------------------------------------------------


def message_of(line: dict[str, Any]) -> Message | None:
    """The typed message of a stream-json *line*; None for a line of a type that
    has no message class (skipped, as the SDK skips what it does not know).
    Raises :class:`MessageError` for a line that lacks what its type must have."""
    try:
        return _message(line)
    except (KeyError, TypeError) as exc:
        raise MessageError(f"not a {line.get('type')!r} message: {exc!r}") from None


def _message(line: dict[str, Any]) -> Message | None:
    get = line.get
    match get("type"):
        case "assistant":
            message = line["message"]
            return AssistantMessage(
                _blocks(message["content"]), message["model"], get("parent_tool_use_id"),
                get("error"), message.get("usage"), message.get("id"),
                message.get("stop_reason"), get("session_id"), get("uuid"),
            )  # fmt: skip
        case "user":
            content = line["message"]["content"]
            blocks = content if isinstance(content, str) else _blocks(content)
            return UserMessage(
                blocks, get("uuid"), get("parent_tool_use_id"), get("tool_use_result")
            )
        case "system":
            return _system(line)
        case "result":
            return ResultMessage(
                line["subtype"], line["duration_ms"], line["duration_api_ms"], line["is_error"],
                line["num_turns"], line["session_id"], get("stop_reason"), get("total_cost_usd"),
                get("usage"), get("result"), get("structured_output"), get("modelUsage"),
                get("permission_denials"), get("errors"), get("api_error_status"), get("uuid"),
                get("terminal_reason"),
            )  # fmt: skip
        case "stream_event":
            return StreamEvent(
                line["uuid"], line["session_id"], line["event"], get("parent_tool_use_id")
            )
    return None


def _system(line: dict[str, Any]) -> SystemMessage:
    get, subtype = line.get, line["subtype"]
    match subtype:
        case "task_started":
            return TaskStartedMessage(
                subtype, line, line["task_id"], line["description"], line["uuid"],
                line["session_id"], get("tool_use_id"), get("task_type"),
            )  # fmt: skip
        case "task_progress":
            return TaskProgressMessage(
                subtype, line, line["task_id"], line["description"], line["usage"],
                line["uuid"], line["session_id"], get("tool_use_id"), get("last_tool_name"),
            )  # fmt: skip
        case "task_updated":
            raw = get("patch")
            patch: dict[str, Any] = raw if isinstance(raw, dict) else {}
            return TaskUpdatedMessage(
                subtype, line, get("task_id", ""), patch, patch.get("status"),
                get("session_id"), get("uuid"),
            )  # fmt: skip
        case "task_notification":
            return TaskNotificationMessage(
                subtype, line, line["task_id"], line["status"], line["output_file"],
                line["summary"], line["uuid"], line["session_id"], get("tool_use_id"),
                get("usage"),
            )  # fmt: skip
        case "hook_started" | "hook_response":
            name = get("hook_event") or get("hook_name") or ""
            return HookEventMessage(subtype, line, name, get("session_id"), get("uuid"))
    return SystemMessage(subtype, line)


def _blocks(raw: list[Any]) -> list[ContentBlock]:
    """The content blocks of a message; a block of another type (an image, a web
    search's result) is left out, as the SDK leaves it out."""
    blocks: list[ContentBlock] = []
    for block in raw:
        if not isinstance(block, dict):
            raise MessageError(f"a content block is not an object: {block!r}")
        match block["type"]:
            case "text":
                blocks.append(TextBlock(block["text"]))
            case "thinking":
                blocks.append(ThinkingBlock(block["thinking"], block.get("signature", "")))
            case "tool_use":
                blocks.append(ToolUseBlock(block["id"], block["name"], block["input"]))
            case "tool_result":
                blocks.append(
                    ToolResultBlock(
                        block["tool_use_id"], block.get("content"), block.get("is_error")
                    )
                )
            case "server_tool_use":
                blocks.append(ServerToolUseBlock(block["id"], block["name"], block["input"]))
            case "advisor_tool_result":
                blocks.append(ServerToolResultBlock(block["tool_use_id"], block["content"]))
    return blocks
