"""The demo's archive: three years of the demo properties' history, generated deterministically.

`searchdesk-server --demo` on its own (no app, no file) answers ranges before Google's 16 months
the way a real archive would, through the same reader (`reader.fetch`) and the same answer shape
(`store.Answer`). Its days are the demo's own facts, worked out as the demo's Google would have
served them on an earlier "today" (one anchor per 16-month window, each cached by the demo's
engine), and each day reads as copied four days after it, when it was final.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from typing import Any, Final

from .answers import Answer
from .errors import ArchiveError
from .schema import table_for

YEARS: Final = 3
COPIED_AFTER: Final = dt.timedelta(days=4, hours=6)  # the copier copies a day once it is final


class DemoArchive:
    """What the demo keeps: every day from three years before today up to Google's first day."""

    def __init__(self, google_first: dt.date) -> None:
        from ..demo.clock import months_back

        self.google_first = google_first
        self.today = months_back(google_first, -16)
        self.oldest = months_back(self.today, 12 * YEARS)

    def query(
        self,
        site: str,
        start: dt.date,
        end: dt.date,
        dimensions: Sequence[str] = (),
        search_type: str = "web",
        filters: Sequence[Mapping[str, str]] = (),
        row_limit: int = 1000,
        start_row: int = 0,
        *,
        typed: bool = False,
    ) -> Answer:
        """As `store.Archive.query`: the demo engine's rows over the kept days, summed as Google sums
        (always as Google's rows: a `typed` reader takes those as it takes Google's)."""
        from .merge import merge_rows

        table = table_for(dimensions)
        last = min(end, self.google_first - dt.timedelta(days=1))
        first = max(start, self.oldest)
        day = start
        gaps = []
        while day < first and day <= end:
            gaps.append(day)
            day += dt.timedelta(days=1)
        copied: dict[dt.date, dt.datetime] = {}
        rows: list[dict[str, Any]] = []
        if first <= last:
            for anchor, lo, hi in self._windows(first, last):
                rows.extend(self._run(anchor, site, lo, hi, dimensions, search_type, filters))
            d = first
            while d <= last:
                copied[d] = dt.datetime.combine(d, dt.time(), tzinfo=dt.UTC) + COPIED_AFTER
                d += dt.timedelta(days=1)
        merged = merge_rows(rows, dimensions)
        return Answer(merged[start_row : start_row + row_limit], table, copied, gaps, [])

    def close(self) -> None:
        """Nothing to close: the demo's archive is worked out in memory."""

    def _windows(self, first: dt.date, last: dt.date) -> list[tuple[dt.date, dt.date, dt.date]]:
        """(the demo's "today" then, first day, last day) for each 16-month window of [first, last]:
        fixed anchors, so the demo engine's cache serves every question about the same window."""
        from ..demo.facts import first_data_day
        from ..demo.search_analytics import FINAL_LAG_DAYS

        out = []
        anchor = self.google_first - dt.timedelta(days=1) + dt.timedelta(days=FINAL_LAG_DAYS)
        while True:
            hi = anchor - dt.timedelta(days=FINAL_LAG_DAYS)
            lo = first_data_day(anchor)
            if hi >= first and lo <= last:
                out.append((anchor, max(lo, first), min(hi, last)))
            if lo <= first:
                return out
            anchor = lo - dt.timedelta(days=1) + dt.timedelta(days=FINAL_LAG_DAYS)

    @staticmethod
    def _run(
        anchor: dt.date,
        site: str,
        lo: dt.date,
        hi: dt.date,
        dimensions: Sequence[str],
        search_type: str,
        filters: Sequence[Mapping[str, str]],
    ) -> list[dict[str, Any]]:
        from ..demo.clock import DemoClock
        from ..demo.faults import GoogleFault
        from ..demo.search_analytics import MAX_ROWS, Source, parse, run

        body: dict[str, Any] = {
            "startDate": lo.isoformat(),
            "endDate": hi.isoformat(),
            "type": search_type,
            "dataState": "final",
            "rowLimit": MAX_ROWS,
        }
        if dimensions:
            body["dimensions"] = list(dimensions)
        if filters:
            body["dimensionFilterGroups"] = [{"groupType": "and", "filters": [dict(f) for f in filters]}]
        try:
            answer = run(parse(body), Source(site, DemoClock(anchor)))
        except GoogleFault as exc:
            raise ArchiveError(str(exc)) from None
        rows = answer.get("rows")
        return rows if isinstance(rows, list) else []
