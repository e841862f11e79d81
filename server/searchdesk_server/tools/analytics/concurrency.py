"""Running a report's requests together while keeping its errors the shape of a single request's."""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Iterator
from typing import Any

import anyio

Job = Callable[[], Coroutine[Any, Any, None]]


def _leaves(group: BaseExceptionGroup[BaseException]) -> Iterator[BaseException]:
    for exc in group.exceptions:
        if isinstance(exc, BaseExceptionGroup):
            yield from _leaves(exc)
        else:
            yield exc


async def together(*jobs: Job) -> None:
    """Run jobs concurrently; a failure surfaces as itself (not an exception group), so callers and
    the server's error handling see a GoogleError or ToolFailure exactly as from a single request."""
    try:
        async with anyio.create_task_group() as tg:
            for job in jobs:
                tg.start_soon(job)
    except BaseExceptionGroup as group:
        leaves = list(_leaves(group))
        cancelled = anyio.get_cancelled_exc_class()
        raise next((e for e in leaves if not isinstance(e, cancelled)), leaves[0]) from None
