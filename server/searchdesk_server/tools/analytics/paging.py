"""Paged Search Analytics reads: past Google's 25,000 rows a request, a few requests at a time.

A busy site's answer runs to hundreds of thousands of rows; reading them in widening waves of
pages, each handed on and dropped as it arrives, keeps memory flat and Google's per-site rate
respected, and the progress a person sees only ever goes up.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import anyio

from ...runtime import Call
from .concurrency import Job, together
from .rows import CommonAnswer, common_answer, first_incomplete

PAGE_ROWS: Final = 25_000  # Google's most rows per request
ROW_CAP: Final = 200_000  # the most rows one report (or one all_rows export) reads
WINDOW: Final = 3  # requests in flight at once for one call: well inside Google's per-site QPS

#: Takes one page of rows, in order: Google's objects, or an answer read as typed rows (`rows.CommonEntries`);
#: a sink reads either through `rows.entries`.
Sink = Callable[[Sequence[Any]], Awaitable[None]]


@dataclass
class Pages:
    """What one paged read found."""

    rows: int = 0
    first_incomplete: str | None = None
    cap_reached: bool = False  # every page up to the cap was full
    more_at_google: bool = False  # …and a one-row look past the cap found another row


class Reader:
    """Search Analytics requests for one call: bounded concurrency, a row count, progress."""

    def __init__(self, call: Call, site: str, *, cap: int = ROW_CAP) -> None:
        self.call = call
        self.site = site
        self.cap = cap
        self.requests = 0
        self.rows = 0
        self._limiter = anyio.CapacityLimiter(WINDOW)
        self._progress_lock = anyio.Lock()
        self._reported = 0

    async def request(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """One Search Analytics request, counted and held to the call's window (retried: it is a read)."""
        raw = await self._ask(body, typed=False)
        return raw if isinstance(raw, dict) else {}

    async def _ask(self, body: Mapping[str, Any], *, typed: bool) -> dict[str, Any] | CommonAnswer:
        """A request; with `typed`, an answer of the common shape comes as typed rows (`rows.common_answer`:
        a page is summed whole, and Google's objects were most of a long read's time)."""
        from .query import search_analytics

        decode = common_answer(len(body.get("dimensions") or [])) if typed else None
        async with self._limiter:
            raw = await search_analytics(self.call, self.site, body, decode=decode)
        self.requests += 1
        return raw if isinstance(raw, dict | CommonAnswer) else {}

    async def _report(self) -> None:
        # Progress must only go up; concurrent pages could otherwise send their counts out of order.
        async with self._progress_lock:
            if self.rows > self._reported:
                self._reported = self.rows
                await self.call.progress(self.rows, None, f"Read {self.rows:,} rows from Google")

    def _fetch(self, body: Mapping[str, Any], at: int, into: dict[int, dict[str, Any] | CommonAnswer]) -> Job:
        async def fetch() -> None:
            page = {**body, "startRow": at, "rowLimit": min(PAGE_ROWS, self.cap - at)}
            into[at] = await self._ask(page, typed=True)

        return fetch

    def _wave(self, start: int) -> list[int]:
        """The first rows of the pages to ask for together: as many as have been read, up to WINDOW."""
        count = max(1, min(WINDOW, start // PAGE_ROWS, math.ceil((self.cap - start) / PAGE_ROWS)))
        return [start + k * PAGE_ROWS for k in range(count)]

    async def _drain(
        self, starts: list[int], answers: dict[int, dict[str, Any] | CommonAnswer], found: Pages, sink: Sink
    ) -> bool:
        """A wave's pages into `sink` in order; True once a page comes back short (the data has ended)."""
        for at in starts:
            raw = answers.pop(at)
            if isinstance(raw, CommonAnswer):
                meta: Mapping[str, Any] = {"metadata": raw.metadata}
                batch: Sequence[Any] = raw.entries
            else:
                rows = raw.get("rows")
                meta, batch = raw, rows if isinstance(rows, list) else []
            if at == 0:
                found.first_incomplete = first_incomplete(meta)
            got = len(batch)
            if got:
                await sink(batch)
            found.rows += got
            self.rows += got
            await self._report()
            if got < min(PAGE_ROWS, self.cap - at):
                return True
        return False

    async def pages(self, body: Mapping[str, Any], sink: Sink) -> Pages:
        """Every row of `body`, page by page in order, into `sink`, until a short page or the cap.

        The first page goes alone (most answers fit in it); then as many pages go together as have
        been read so far, up to `WINDOW` (1, 1, 2, 3, 3…): a request past the end costs Google as
        much as a full one, so the window only widens once the data has shown it is long. At most
        `WINDOW` pages are held at once; each goes to `sink` and is dropped before the next window.
        """
        found = Pages()
        start = 0
        while start < self.cap:
            starts = self._wave(start)
            answers: dict[int, dict[str, Any] | CommonAnswer] = {}

            await together(*(self._fetch(body, at, answers) for at in starts))
            short = await self._drain(starts, answers, found, sink)
            answers.clear()
            if short:
                return found
            start = starts[-1] + PAGE_ROWS
        found.cap_reached = True
        beyond = await self.request({**body, "startRow": self.cap, "rowLimit": 1})
        found.more_at_google = bool(beyond.get("rows"))
        return found
