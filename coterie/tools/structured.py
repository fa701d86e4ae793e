"""StructuredOutput: the tool a run's final answer comes through (``--json-schema``).

Claude Code's structured output works by offering the model one more tool,
``StructuredOutput``, whose input schema is the caller's JSON Schema: the
model answers by calling it. This module owns that tool and the schema's
checks: :func:`load_schema` reads ``--json-schema`` (a JSON object's text, or
a file holding one) and :func:`check_schema` refuses a schema that is not one
(a usage error before the run starts). The tool validates each call against
the schema in full (``jsonschema``, the draft the schema names, 2020-12 by
default), so an answer that does not fit is an error result the model reads
and corrects; one that fits is kept (:meth:`StructuredOutputTool.take`) for
the turn loop, which ends the run with it (:mod:`coterie.agent._structured`
has the rule of asking again and giving up).

The tool is read-only (it records the agent's own answer), so it is never
asked about, in any mode.
"""

from __future__ import annotations

import copy
import errno
import json
import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING, Any

from coterie.tools._base import ToolResult
from coterie.tools.capabilities import Capabilities, Effect

if TYPE_CHECKING:
    from coterie.tools._base import ToolContext

__all__ = [
    "STRUCTURED_OUTPUT",
    "SchemaError",
    "StructuredOutputTool",
    "check_schema",
    "load_schema",
    "schema_problems",
]

#: The tool's name, as Claude Code calls it.
STRUCTURED_OUTPUT = "StructuredOutput"


class SchemaError(ValueError):
    """``--json-schema`` (or ``json_schema=``) is not a usable JSON Schema: not JSON,
    not an object, not a valid schema, or not the schema of an object."""


#: Bytes a schema file may hold at most (a schema is a few kilobytes).
MAX_SCHEMA_BYTES = 1 << 20


def _schema_file(path: Path) -> str:
    """The text of the schema file *path*: a regular file of at most
    :data:`MAX_SCHEMA_BYTES` (never a device such as ``/dev/zero``, which has no end,
    or a FIFO, which may never answer)."""
    with open(path, "rb", opener=lambda p, flags: os.open(p, flags | os.O_NONBLOCK)) as f:
        info = os.fstat(f.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
        data = f.read(MAX_SCHEMA_BYTES + 1)
    if len(data) > MAX_SCHEMA_BYTES:
        raise OSError(errno.EFBIG, f"larger than {MAX_SCHEMA_BYTES} bytes")
    return data.decode()


def load_schema(value: str) -> dict[str, Any]:
    """``--json-schema``'s value: a JSON object's text, or the path of a file holding
    one; the schema, checked (:func:`check_schema`)."""
    text = value
    if not value.lstrip().startswith(("{", "[")):
        try:
            text = _schema_file(Path(value).expanduser())
        except (OSError, ValueError, RuntimeError) as exc:  # ValueError: undecodable, or
            # a NUL in the path; RuntimeError: "~" with no home directory to expand
            try:
                json.loads(value)  # JSON, but not an object: check_schema says so
            except ValueError:
                why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
                raise SchemaError(
                    f"--json-schema: {value!r} is neither a JSON object nor a readable file ({why})"
                ) from None
    try:
        schema = json.loads(text)
    except ValueError as exc:
        raise SchemaError(f"--json-schema is not valid JSON: {exc}") from None
    return check_schema(schema)


def check_schema(schema: Any) -> dict[str, Any]:
    """*schema* if it is a valid JSON Schema of an object (the answer is a tool's
    input, which the Messages API wants to be an object), else a :class:`SchemaError`."""
    if not isinstance(schema, dict):
        raise SchemaError("--json-schema must be a JSON object")
    import jsonschema  # type: ignore[import-untyped]  # no stubs; imported when used (~25 ms)

    validator = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    try:
        validator.check_schema(schema)
    except jsonschema.SchemaError as exc:
        where = exc.json_path if exc.json_path != "$" else "the schema"
        raise SchemaError(
            f"--json-schema is not a valid JSON Schema: {where}: {exc.message}"
        ) from None
    if schema.get("type") != "object":
        raise SchemaError(
            '--json-schema must describe a JSON object ("type": "object"): the answer'
            " is given as a tool's input, which is an object"
        )
    return schema


def schema_problems(schema: dict[str, Any], value: Any) -> list[str]:
    """Every way *value* fails *schema*, one sentence each naming where (``$.answer``)."""
    import jsonschema

    validator = jsonschema.validators.validator_for(
        schema, default=jsonschema.Draft202012Validator
    )(schema)
    errors = sorted(validator.iter_errors(value), key=lambda e: list(e.absolute_path))
    return [f"{e.json_path}: {e.message}" for e in errors]


class StructuredOutputTool:
    """The final answer, in the shape the caller's JSON Schema gives (its input schema).

    One per agent: :meth:`run` keeps the answer that fits, :meth:`take` hands it
    to the turn loop (once).
    """

    name = STRUCTURED_OUTPUT
    input_schema: dict[str, Any]
    description = (
        "Gives your final answer in the structured form this request asks for: its"
        " input is the answer, shaped by the schema. Call it once, when you are done,"
        " and put the whole answer in it."
    )
    # Read-only: it records the agent's own answer and changes nothing else.
    capabilities = Capabilities(Effect.READ_ONLY)

    def __init__(self, schema: dict[str, Any]) -> None:
        self.input_schema = check_schema(schema)
        self._answer: dict[str, Any] | None = None

    async def run(self, input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Keep *input* as the answer if it fits the schema; else say how it does not."""
        problems = schema_problems(self.input_schema, input)
        if problems:
            return ToolResult(
                "The answer does not fit the schema: " + "; ".join(problems)
                + ". Call StructuredOutput again with an answer that fits.",
                is_error=True,
            )  # fmt: skip
        self._answer = copy.deepcopy(input)
        return ToolResult("The structured answer was recorded.")

    def take(self) -> dict[str, Any] | None:
        """The answer the last fitting call gave (None if none has since the last take)."""
        answer, self._answer = self._answer, None
        return answer

    def fits(self, value: Any) -> bool:
        """Whether *value* fits the schema (an answer found in a resumed history)."""
        return not schema_problems(self.input_schema, value)
