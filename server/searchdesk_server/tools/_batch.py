"""A batch of Google requests that answers before the client stops waiting (deadlines.py).

Each item starts only if its request is sure to end by the deadline (the Google client's
per-request timeout); what never started is listed so Claude can continue with just those. At the
deadline anything still waiting for Google is cancelled and marked "may have been done" — for a
change, `Call.google` records it in the journal with an unknown outcome.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Final

import anyio

from ..deadlines import Deadline
from ..runtime import Call

NOT_STARTED: Final = "not attempted"  # the status an item has until it is started
IN_FLIGHT: Final = "may have been done"  # still waiting for Google's answer at the deadline


@dataclass(frozen=True)
class BatchEnd:
    """How a batch ended: its budget in seconds, and which items never started or were cut off."""

    seconds: float
    not_started: tuple[int, ...]
    cut_off: tuple[int, ...]

    def fields(self) -> dict[str, Any]:
        """The structured answer's additive fields: the budget, and how many may have been done."""
        return {"budget_seconds": self.seconds, "may_have_been_done": len(self.cut_off)}


async def run_batch(
    call: Call,
    results: list[dict[str, Any]],
    concurrency: int,
    work: Callable[[int], Awaitable[bool]],
    deadline: Deadline,
) -> BatchEnd:
    """Run ``work(i)`` for every item, ``concurrency`` at a time, until ``deadline`` (made from
    `Runtime.batch_seconds`; ``work`` hands it to each request so no retry outlasts it).

    ``work(i)`` does item ``i``, writes its outcome into ``results[i]`` (whose "status" starts as
    `NOT_STARTED`) and returns False to stop the batch: nothing more starts after it."""
    request_seconds = (await call.runtime.client()).policy.request_timeout
    gate = anyio.Semaphore(concurrency)
    stopped = False
    in_flight: set[int] = set()

    async def one(i: int) -> None:
        nonlocal stopped
        async with gate:
            if stopped or not deadline.can_start(request_seconds):
                return
            in_flight.add(i)
            keep = await work(i)
            in_flight.discard(i)  # not reached when cancelled at the deadline
            stopped = stopped or not keep
            await call.progress(sum(r["status"] != NOT_STARTED for r in results), len(results))

    with anyio.move_on_after(deadline.left()):
        async with anyio.create_task_group() as group:
            for i in range(len(results)):
                group.start_soon(one, i)
    for i in in_flight:
        results[i] = {**results[i], "status": IN_FLIGHT}
    return BatchEnd(
        seconds=deadline.seconds,
        not_started=tuple(i for i, r in enumerate(results) if r["status"] == NOT_STARTED),
        cut_off=tuple(sorted(in_flight)),
    )


def ending(end: BatchEnd, stopped_early: bool, again: str) -> list[str]:
    """The lines a batch's answer says about what it did not finish (none when it finished)."""
    lines = []
    if end.cut_off:
        lines.append(
            f"{len(end.cut_off)} still waiting for Google at {end.seconds:.0f} s were left: they may have been "
            f'done (marked "{IN_FLIGHT}").'
        )
    if end.not_started and not stopped_early:
        lines.append(
            f"Nothing was started that could still be running at {end.seconds:.0f} s, so the answer arrives before "
            f'the client stops waiting: {len(end.not_started)} not started (marked "{NOT_STARTED}"). {again}'
        )
    return lines
