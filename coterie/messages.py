"""Messages: the only thing actors exchange (docs/runtime.md).

A :class:`Message` is a frozen attrs object whose body is plain JSON. It is
validated when it is made, so a bad name or a body that is not JSON fails at
the sender, before any mailbox is touched.
"""

from __future__ import annotations

import json
import re
import time
from typing import Any

import attrs

from coterie.errors import InvalidActorName, InvalidMessage
from coterie.ids import new_id

ACTOR_NAME_RE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")


def check_actor_name(name: object) -> str:
    """Return *name* if it is a valid actor name, else raise :class:`InvalidActorName`."""
    if not isinstance(name, str) or not ACTOR_NAME_RE.fullmatch(name):
        raise InvalidActorName(
            f"invalid actor name {name!r}: use 1-64 characters from a-z, 0-9, '_' and '-', "
            "starting with a letter or digit"
        )
    return name


def _check_name_field(_inst: object, attribute: attrs.Attribute[str], value: str) -> None:
    try:
        check_actor_name(value)
    except InvalidActorName as exc:
        raise InvalidActorName(f"{attribute.name}: {exc}") from None


def _check_kind(_inst: object, _attribute: attrs.Attribute[str], value: str) -> None:
    if not isinstance(value, str) or not value or len(value) > 128:
        raise InvalidMessage(f"message kind must be a non-empty string, got {value!r}")


def _optional_str(_inst: object, attribute: attrs.Attribute[str | None], value: object) -> None:
    if value is not None and not isinstance(value, str):
        raise InvalidMessage(f"{attribute.name} must be a string or None, got {value!r}")


@attrs.frozen
class Message:
    """One message between actors.

    ``body`` must survive a JSON round trip; use :meth:`Message.new` to get a
    fresh ``id`` and ``sent_at``. ``correlation_id`` ties a reply to its
    request; ``reply_to`` names the actor a reply should go to.

    ``durable=False`` marks a message whose loss costs nothing but recomputing
    it (a classification request and its reply): its mailbox writes it, and
    its acknowledgement, to the OS without fsync, whatever the mailbox's
    policy. It survives kill -9, not necessarily power loss (docs/runtime.md,
    "Messages that need no fsync"). A reply inherits it from its request.
    """

    id: str
    sender: str = attrs.field(validator=_check_name_field)
    recipient: str = attrs.field(validator=_check_name_field)
    kind: str = attrs.field(validator=_check_kind)
    body: Any
    sent_at: float
    correlation_id: str | None = attrs.field(default=None, validator=_optional_str)
    reply_to: str | None = attrs.field(default=None, validator=_optional_str)
    durable: bool = attrs.field(default=True, validator=attrs.validators.instance_of(bool))

    @classmethod
    def new(
        cls,
        sender: str,
        recipient: str,
        kind: str,
        body: Any = None,
        *,
        correlation_id: str | None = None,
        reply_to: str | None = None,
        id: str | None = None,
        durable: bool = True,
    ) -> Message:
        """Make a message stamped now, with a new unique id unless *id* is given
        (a fixed id makes a re-send after a crash the same message)."""
        return cls(
            id=new_id() if id is None else id,
            sender=sender,
            recipient=recipient,
            kind=kind,
            body=body,
            sent_at=time.time(),
            correlation_id=correlation_id,
            reply_to=reply_to,
            durable=durable,
        )

    def to_json_bytes(self) -> bytes:
        """Encode as compact UTF-8 JSON; raises :class:`InvalidMessage` if the body is not JSON."""
        record: dict[str, Any] = {
            "id": self.id,
            "sender": self.sender,
            "recipient": self.recipient,
            "kind": self.kind,
            "body": self.body,
            "sent_at": self.sent_at,
            "correlation_id": self.correlation_id,
            "reply_to": self.reply_to,
        }
        if not self.durable:
            record["durable"] = False  # only when set: durable records read as before
        try:
            return json.dumps(
                record,
                separators=(",", ":"),
                ensure_ascii=False,
                allow_nan=False,
            ).encode()
        except (TypeError, ValueError) as exc:
            raise InvalidMessage(
                f"body of {self.kind!r} message to {self.recipient!r} is not JSON-serialisable: "
                f"{exc}"
            ) from None

    @classmethod
    def from_json_bytes(cls, data: bytes) -> Message:
        """Decode what :meth:`to_json_bytes` produced; raises ``ValueError`` on anything else."""
        raw = json.loads(data)
        if not isinstance(raw, dict):
            raise ValueError("message record is not a JSON object")
        try:
            return cls(**raw)
        except TypeError as exc:
            raise ValueError(f"message record has the wrong fields: {exc}") from None
