"""A period read from Google and summed per key, beside the property's own total for it.

The property total (a request without dimensions) is what shows how much of the site the rows
hold: Google's row limits leave small keys out, and a report must say so.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...runtime import Call
from ..analytics.concurrency import together
from ..analytics.metrics import Sums, column, empty_sums, summed, tally
from ..analytics.paging import Pages, Reader, Sink
from ..analytics.rows import entries
from .periods import Period, Timeline, current_period, timeline
from .provenance import Read


@dataclass
class PeriodRead:
    """One period's rows read into a sink, and Google's own total for the property in that period."""

    period: Period
    pages: Pages
    total: Sums

    def read(self, key: str, words: str, sums: dict[Any, Sums], at: int) -> Read:
        """The read for provenance: the rows' clicks (slot `at` of `sums`) against the property's."""
        return Read(key, words, self.pages, column(sums, at), self.total[0])


async def read_period(reader: Reader, period: Period, dims: list[str], sink: Sink) -> PeriodRead:
    """The period's rows and its property total (a request without dimensions), fetched together."""
    found: list[Pages] = []
    total: Sums = empty_sums(4)

    async def rows() -> None:
        found.append(await reader.pages(period.body(dims), sink))

    async def overall() -> None:
        raw = await reader.request({**period.body([]), "rowLimit": 1, "startRow": 0})
        total[:] = summed(entries(raw.get("rows"), 0))

    await together(rows, overall)
    return PeriodRead(period, found[0], total)


async def single(call: Call, dims: list[str]) -> tuple[Reader, Timeline, PeriodRead, dict[Any, Sums]]:
    """One period read and summed per key (the reports that look at one period)."""
    reader = Reader(call, call.site())
    tl = await timeline(reader)
    now = current_period(call.args, tl)
    sums: dict[Any, Sums] = {}
    found = await read_period(reader, now, dims, tally(4, len(dims), 0, sums))
    return reader, tl, found, sums
