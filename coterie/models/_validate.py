"""The checks the Messages API makes on a request body, without any I/O.

The mock server answers a request that fails them with ``400
invalid_request_error`` and the message returned here (worded like the real
API's), so that a transcript the real API would refuse is caught offline, in
tests, rather than on the first paid call. Only structure is checked, not
limits that depend on the model (context size, ``max_tokens`` ceilings).
"""

from __future__ import annotations

from typing import Any

#: Content block types a request may carry (the API's, not just coterie's).
KNOWN_BLOCK_TYPES = frozenset(
    {
        "text",
        "image",
        "document",
        "search_result",
        "tool_use",
        "tool_result",
        "thinking",
        "redacted_thinking",
        "server_tool_use",
        "web_search_tool_result",
        "web_fetch_tool_result",
        "code_execution_tool_result",
        "container_upload",
    }
)
_ROLES = ("user", "assistant")


class RequestInvalid(ValueError):
    """A request body the real API would refuse with HTTP 400."""


def validate_request(body: object, *, betas: tuple[str, ...] = ()) -> None:
    """Raise :class:`RequestInvalid` if the API would refuse *body*.

    With *betas* (the request's ``anthropic-beta`` header values), ``system``
    messages inside ``messages`` are accepted, as the API does for the betas
    that allow them (current Claude Code sends them so); they do not take a
    turn in the user/assistant alternation.
    """
    if not isinstance(body, dict):
        raise RequestInvalid("request body must be a JSON object")
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise RequestInvalid("model: Field required")
    max_tokens = body.get("max_tokens")
    if not isinstance(max_tokens, int) or isinstance(max_tokens, bool):
        raise RequestInvalid("max_tokens: Field required")
    if max_tokens < 1:
        raise RequestInvalid("max_tokens: Input should be greater than or equal to 1")
    if "stream" in body and not isinstance(body["stream"], bool):
        raise RequestInvalid("stream: Input should be a valid boolean")
    _check_system(body.get("system"))
    _check_tools(body.get("tools"))
    _check_messages(body.get("messages"), system_messages=bool(betas))


def _check_system(system: object) -> None:
    if system is None or isinstance(system, str):
        return
    if not isinstance(system, list):
        raise RequestInvalid("system: Input should be a valid string or list of text blocks")
    for i, block in enumerate(system):
        if not isinstance(block, dict) or block.get("type") != "text":
            raise RequestInvalid(f"system.{i}: Input should be a text block")
        if not isinstance(block.get("text"), str) or not block["text"]:
            raise RequestInvalid(f"system.{i}: text content blocks must be non-empty")


def _check_tools(tools: object) -> None:
    if tools is None:
        return
    if not isinstance(tools, list):
        raise RequestInvalid("tools: Input should be a valid list")
    names: set[str] = set()
    for i, tool in enumerate(tools):
        if not isinstance(tool, dict):
            raise RequestInvalid(f"tools.{i}: Input should be a valid dictionary")
        name = tool.get("name")
        if not isinstance(name, str) or not name:
            raise RequestInvalid(f"tools.{i}.name: Field required")
        if name in names:
            raise RequestInvalid(f"tools: Tool names must be unique. Duplicate name: {name}")
        names.add(name)
        # Server tools (web search, ...) carry a versioned type and no schema.
        if tool.get("type", "custom") == "custom" and not isinstance(
            tool.get("input_schema"), dict
        ):
            raise RequestInvalid(f"tools.{i}.custom.input_schema: Field required")


def _check_messages(messages: object, *, system_messages: bool = False) -> None:
    if not isinstance(messages, list):
        raise RequestInvalid("messages: Field required")
    if system_messages:
        for i, message in enumerate(messages):
            if isinstance(message, dict) and message.get("role") == "system":
                _blocks(message.get("content"), f"messages.{i}")
        messages = [m for m in messages if not (isinstance(m, dict) and m.get("role") == "system")]
    if not messages:
        raise RequestInvalid("messages: at least one message is required")
    seen_ids: set[str] = set()
    pending: list[str] = []  # tool_use ids the next user message must answer
    for i, message in enumerate(messages):
        where = f"messages.{i}"
        if not isinstance(message, dict):
            raise RequestInvalid(f"{where}: Input should be a valid dictionary")
        role = message.get("role")
        if role not in _ROLES:
            raise RequestInvalid(f"{where}.role: Input should be 'user' or 'assistant'")
        expected = _ROLES[i % 2]
        if role != expected:
            if i == 0:
                raise RequestInvalid('messages: first message must use the "user" role')
            raise RequestInvalid(
                f'{where}: roles must alternate between "user" and "assistant", '
                f'but found multiple "{role}" roles in a row'
            )
        blocks = _blocks(message.get("content"), where)
        if role == "user":
            _check_answers(blocks, pending, where, i - 1)
            pending = []
        for j, block in enumerate(blocks):
            here = f"{where}.content.{j}"
            if block["type"] == "tool_use":
                if role != "assistant":
                    raise RequestInvalid(f"{here}: tool_use blocks must be in assistant messages")
                tool_id = _tool_use(block, here)
                if tool_id in seen_ids:
                    raise RequestInvalid(f"{here}: `tool_use` ids must be unique: {tool_id}")
                seen_ids.add(tool_id)
                pending.append(tool_id)
            elif block["type"] == "tool_result" and role != "user":
                raise RequestInvalid(f"{here}: tool_result blocks must be in user messages")
    if pending:
        _missing_results(pending, len(messages) - 1)


def _blocks(content: object, where: str) -> list[dict[str, Any]]:
    if isinstance(content, str):
        if not content:
            raise RequestInvalid(f"{where}: all messages must have non-empty content")
        return [{"type": "text", "text": content}]
    if not isinstance(content, list):
        raise RequestInvalid(f"{where}.content: Input should be a valid string or list")
    for j, block in enumerate(content):
        here = f"{where}.content.{j}"
        if not isinstance(block, dict) or not isinstance(block.get("type"), str):
            raise RequestInvalid(f"{here}: Input should be a content block with a 'type'")
        kind = block["type"]
        if kind not in KNOWN_BLOCK_TYPES:
            raise RequestInvalid(
                f"{here}: Input tag '{kind}' found using 'type' does not match any of the "
                f"expected tags: {', '.join(sorted(KNOWN_BLOCK_TYPES))}"
            )
        if kind == "text" and (not isinstance(block.get("text"), str) or not block["text"]):
            raise RequestInvalid(f"{here}: text content blocks must be non-empty")
        if kind == "tool_result" and not isinstance(block.get("tool_use_id"), str):
            raise RequestInvalid(f"{here}.tool_use_id: Field required")
        if kind == "thinking":  # sent back exactly as the API returned it
            for key in ("thinking", "signature"):
                if not isinstance(block.get(key), str):
                    raise RequestInvalid(f"{here}.thinking.{key}: Field required")
    return content


def _tool_use(block: dict[str, Any], where: str) -> str:
    if not isinstance(block.get("id"), str) or not block["id"]:
        raise RequestInvalid(f"{where}.id: Field required")
    if not isinstance(block.get("name"), str) or not block["name"]:
        raise RequestInvalid(f"{where}.name: Field required")
    if not isinstance(block.get("input"), dict):
        raise RequestInvalid(f"{where}.input: Input should be a valid dictionary")
    return str(block["id"])


def _check_answers(
    blocks: list[dict[str, Any]], pending: list[str], where: str, asked: int
) -> None:
    """Every id in *pending* answered, and nothing else, answers first."""
    results = [b for b in blocks if b["type"] == "tool_result"]
    answered = {b["tool_use_id"] for b in results}
    missing = [tool_id for tool_id in pending if tool_id not in answered]
    if missing:
        _missing_results(missing, asked)
    for j, block in enumerate(blocks):
        if block["type"] == "tool_result" and block["tool_use_id"] not in pending:
            raise RequestInvalid(
                f"{where}.content.{j}: unexpected `tool_use_id` found in `tool_result` blocks: "
                f"{block['tool_use_id']}. Each `tool_result` block must have a corresponding "
                "`tool_use` block in the previous message."
            )
    # The API wants the answers before anything else the user says.
    first_other = next((j for j, b in enumerate(blocks) if b["type"] != "tool_result"), len(blocks))
    if any(b["type"] == "tool_result" for b in blocks[first_other:]):
        raise RequestInvalid(
            f"{where}: tool_result blocks must come FIRST in the content array, "
            "before any other content"
        )


def _missing_results(missing: list[str], asked: int) -> None:
    raise RequestInvalid(
        f"messages.{asked}: `tool_use` ids were found without `tool_result` blocks immediately "
        f"after: {', '.join(missing)}. Each `tool_use` block must have a corresponding "
        "`tool_result` block in the next message."
    )
