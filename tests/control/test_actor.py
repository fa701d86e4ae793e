"""The control actor in one process: in-memory mailboxes, a small tree, Trio's mock clock."""

from __future__ import annotations

from typing import Any

import trio
import trio.testing

from coterie.actors import ActorContext
from coterie.control import CONTROL, control_spec
from coterie.events import EventLog
from coterie.mailbox import PostOffice
from coterie.supervisors import ChildSpec, Restart, Supervisor


async def forever() -> None:
    await trio.sleep_forever()


def tree(post: PostOffice, events: EventLog, cancels: list[str], after: list[str]) -> Supervisor:
    async def followed(actor: str, fault: str) -> None:
        after.append(f"{fault} {actor}")

    def guard(actor: str, fault: str) -> str | None:
        return "not that one" if (actor, fault) == ("precious", "stop") else None

    work = Supervisor(
        "work",
        [ChildSpec("worker", forever), ChildSpec("precious", forever, restart=Restart.TRANSIENT)],
        events=events,
    )
    control = control_spec(
        lambda: root,
        post,
        cancel=lambda: cancels.append("cancel"),
        after=followed,
        guard=guard,
        events=events,
    )
    root = Supervisor("root", [work.as_child(), control], events=events)
    return root


async def ask(user: ActorContext, body: dict[str, Any]) -> dict[str, Any]:
    reply = await user.call(CONTROL, "inject", body, timeout=5)
    assert reply.kind == "injected"
    return dict(reply.body)


async def test_faults_are_recorded_first_applied_then_answered(
    autojump_clock: trio.testing.MockClock,
) -> None:
    post, events = PostOffice(), EventLog()
    cancels: list[str] = []
    after: list[str] = []
    root = tree(post, events, cancels, after)
    user = ActorContext(name="tester", mailbox=post.open("tester"), post=post)
    async with trio.open_nursery() as nursery:
        await nursery.start(root.run)
        answer = await ask(user, {"fault": "crash", "actor": "worker", "by": "t", "reason": "x"})
        assert answer["ok"] is True
        assert answer["supervisor"] == "work"
        await trio.testing.wait_all_tasks_blocked()
        kinds = [(e.type, e.data.get("actor")) for e in events.history]
        at = kinds.index(("fault.injected", "worker"))
        assert kinds[at + 1 : at + 4] == [
            ("actor.crashed", "worker"),
            ("actor.restarted", "worker"),
            ("actor.started", "worker"),
        ]
        assert after == ["crash worker"]

        refused = await ask(user, {"fault": "stop", "actor": "precious", "by": "t"})
        assert (refused["ok"], refused["code"], refused["message"]) == (
            False,
            "refused",
            "not that one",
        )
        typo = await ask(user, {"fault": "stop", "actor": "workr", "by": "t"})
        assert (typo["code"], typo["closest"]) == ("unknown_actor", "worker")
        bad = await ask(user, {"fault": "explode", "by": "t"})
        assert bad["code"] == "bad_request"
        assert len(events.of_type("fault.injected")) == 1

        done = await ask(user, {"fault": "cancel", "actor": None, "by": "t"})
        assert done["message"].startswith("cancelled the run")
        await trio.testing.wait_all_tasks_blocked()
        assert cancels == ["cancel"]
        await root.stop()


async def test_the_live_mailboxes_counts_pending_and_in_flight_apart(
    autojump_clock: trio.testing.MockClock,
) -> None:
    post, events = PostOffice(), EventLog()
    root = tree(post, events, [], [])
    user = ActorContext(name="tester", mailbox=post.open("tester"), post=post)
    inbox = post.open("worker")
    async with trio.open_nursery() as nursery:
        await nursery.start(root.run)
        for n in range(3):
            await user.send("worker", "job", {"n": n})
        held = await inbox.receive()  # one handed out, not acknowledged
        reply = await user.call(CONTROL, "stats", None, timeout=5, durable=False)
        assert reply.kind == "statistics"
        counts = reply.body["mailboxes"]
        assert counts["worker"] == {"pending": 2, "in_flight": 1}
        await inbox.ack(held)
        reply = await user.call(CONTROL, "stats", None, timeout=5, durable=False)
        assert reply.body["mailboxes"]["worker"] == {"pending": 2, "in_flight": 0}
        nursery.cancel_scope.cancel()
