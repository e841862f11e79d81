"""The server's read path: Search Analytics days Google no longer keeps, answered from SearchDesk's copy.

Every Search Analytics request of `query_search_analytics` and the reports goes through `fetch`. A
range Google still has goes to Google as before. A range reaching past Google's 16 months is split:
the old days from the archive of the account this call was routed to (the same routing as a live
call, so a withheld or removed account's archive is never opened), the rest from Google. Google is
always asked for at least one day, so the archive answers only for a property the account sees now.
Archived rows are Google's rows: they come back in Google's shape and go through the same cleaning
(`rows.entries`) and marking as a live answer. What came from where is gathered on the call
(`Call.gathered(Sources)`) and said by `handlers.run_tool` in a field and a sentence of the server's own.
"""

from __future__ import annotations

import datetime as dt
import sqlite3
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..result import ToolFailure
from .answers import Answer, Columns, gap_ranges
from .errors import ArchiveDamaged, CannotAnswer
from .merge import merge_rows
from .store import Archive, path_for

if TYPE_CHECKING:
    from ..runtime import Call
    from .demo_archive import DemoArchive

Send = Callable[[dict[str, Any]], Awaitable[Any]]


def google_first_day(today: dt.date) -> dt.date:
    """The oldest day Google still has (one definition of its 16 months, the demo's too)."""
    from ..demo.facts import first_data_day

    return first_data_day(today)


@dataclass
class Sources:
    """Which days of a call's answers came from SearchDesk's copy (and when each was copied), which
    from Google, and which neither had."""

    google: list[tuple[dt.date, dt.date]] = field(default_factory=list)
    copied: dict[dt.date, dt.datetime] = field(default_factory=dict)
    gaps: set[dt.date] = field(default_factory=set)
    truncated: set[dt.date] = field(default_factory=set)
    unreadable: bool = False
    #: Properties Google answered for in this call (the account sees them now): no second probe.
    seen: set[str] = field(default_factory=set)

    @property
    def used(self) -> bool:
        return bool(self.copied or self.gaps or self.unreadable)

    def data(self) -> dict[str, Any]:
        """The structured field: ranges of days per source, each archived range with its copy times."""
        archive = []
        for first, last in gap_ranges(self.copied):
            stamps = [self.copied[first + dt.timedelta(days=i)] for i in range((last - first).days + 1)]
            archive.append(
                {
                    "start": first.isoformat(),
                    "end": last.isoformat(),
                    "copied_from": min(stamps).isoformat(timespec="seconds"),
                    "copied_to": max(stamps).isoformat(timespec="seconds"),
                }
            )
        return {
            "google": [{"start": a.isoformat(), "end": b.isoformat()} for a, b in _merged(self.google)],
            "searchdesk_copy": archive,
            "copied_at": {d.isoformat(): t.isoformat(timespec="seconds") for d, t in sorted(self.copied.items())},
            "gaps": [{"start": a.isoformat(), "end": b.isoformat()} for a, b in gap_ranges(self.gaps)],
            "cut_at_row_limit": [d.isoformat() for d in sorted(self.truncated)],
            "copy_unreadable": self.unreadable,
        }

    def _copied_span(self, a: dt.date, b: dt.date) -> str:
        stamps = [self.copied[a + dt.timedelta(days=i)] for i in range((b - a).days + 1)]
        first, last = _when(min(stamps)), _when(max(stamps))
        return f"{_span(a, b)} (copied {first}" + ("" if first == last else f" to {last}") + ")"

    def sentence(self) -> str:
        """The server's own words: dates only, nothing from Google."""
        parts = []
        if self.copied:
            spans = "; ".join(self._copied_span(a, b) for a, b in gap_ranges(self.copied))
            parts.append(f"Days Google no longer keeps came from SearchDesk's copy on this computer: {spans}.")
        google = _merged(self.google)
        if google:
            parts.append("Days from Google: " + "; ".join(_span(a, b) for a, b in google) + ".")
        if self.gaps:
            parts.append(
                "SearchDesk's copy has a gap — no data for "
                + "; ".join(_span(a, b) for a, b in gap_ranges(self.gaps))
                + " (Google no longer keeps these days and they were never copied); the numbers leave them out."
            )
        if self.unreadable:
            parts.append("SearchDesk's copy could not be read (the app sets a damaged copy aside and recovers it).")
        if self.truncated:
            days = "; ".join(_span(a, b) for a, b in gap_ranges(self.truncated))
            parts.append(
                f"Google had cut {days} at its row limit (50,000 rows a day) when SearchDesk copied "
                + ("it" if len(self.truncated) == 1 else "them")
                + ", so small pages or queries may be missing there."
            )
        return " ".join(parts)


def _span(a: dt.date, b: dt.date) -> str:
    return a.isoformat() if a == b else f"{a.isoformat()} to {b.isoformat()}"


def _when(t: dt.datetime) -> str:
    return t.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")


def _merged(ranges: Sequence[tuple[dt.date, dt.date]]) -> list[tuple[dt.date, dt.date]]:
    out: list[tuple[dt.date, dt.date]] = []
    for a, b in sorted(ranges):
        if out and a <= out[-1][1] + dt.timedelta(days=1):
            out[-1] = (out[-1][0], max(b, out[-1][1]))
        else:
            out.append((a, b))
    return out


def _filters(body: Mapping[str, Any]) -> list[dict[str, str]]:
    flat: list[dict[str, str]] = []
    for group in body.get("dimensionFilterGroups") or []:
        for f in group.get("filters") or []:
            flat.append(
                {"dimension": f["dimension"], "operator": f.get("operator", "equals"), "expression": f["expression"]}
            )
    return flat


def _open(demo: bool, today: dt.date, account: str | None) -> Archive | DemoArchive | None:
    """The archive of this call's routed account (the demo's own in the demo); None: none kept. The two
    answer alike (`DemoArchive.query` and `close` are `Archive`'s), so the reader names both rather than
    a third copy of their signature."""
    if demo:
        from .demo_archive import DemoArchive

        return DemoArchive(google_first_day(today))
    return Archive.open_readonly(path_for(account))


async def kept_since(call: Call, site: str, today: dt.date) -> dt.date | None:
    """The first day SearchDesk's copy keeps for `site`, in the archive of the account this call is
    routed to (the demo's own in the demo); None when there is no copy. A report reaching back "as far
    as the archive goes" asks this, so it never asks for months nobody has."""
    import anyio

    account = await call.account_name()
    demo = call.config.demo

    def read() -> dt.date | None:
        archive = _open(demo, today, account)
        if archive is None:
            return None
        try:
            if not isinstance(archive, Archive):
                return archive.oldest
            return archive.kept(site).since
        finally:
            archive.close()

    try:
        return await anyio.to_thread.run_sync(read)
    except (ArchiveDamaged, sqlite3.DatabaseError):
        return None


async def fetch(
    call: Call, site: str, body: Mapping[str, Any], send: Send, today: dt.date, *, typed: bool = False
) -> Any:
    """Google's answer to a Search Analytics request, with the days before Google's 16 months from
    the archive. The merged answer has Google's shape (`rows` with keys, clicks, impressions, ctr,
    position), so it is cleaned and marked as any answer from Google.

    `send` asks Google and `today` is Google's today: both come from the analytics tools
    (tools/analytics/query.py `search_analytics`), so the archive never imports the tools above it.
    With `typed`, a range wholly before Google's days answers with the archive's `Columns` (its rows
    without Google's objects), which the tools check and read as they read Google's typed answer."""
    import anyio

    sources = call.gathered(Sources)
    start = dt.date.fromisoformat(str(body["startDate"]))
    end = dt.date.fromisoformat(str(body["endDate"]))
    first = google_first_day(today)
    if start >= first:
        raw = await send(dict(body))
        sources.google.append((start, end))
        sources.seen.add(site)
        return raw
    dims = [str(d) for d in body.get("dimensions") or []]
    old_end = min(end, first - dt.timedelta(days=1))
    row_limit = int(body.get("rowLimit", 1000))
    start_row = int(body.get("startRow", 0))
    # Google is asked for its part, or for one row of its first day: either way the account must see
    # the property now, or Google refuses as it would a live call.
    recent = {**body, "startDate": max(start, first).isoformat(), "endDate": max(end, first).isoformat()}
    if end < first:
        recent = {**body, "startDate": first.isoformat(), "endDate": first.isoformat(), "rowLimit": 1, "startRow": 0}
    raw = {} if end < first and site in sources.seen else await send(recent)
    sources.seen.add(site)
    account = await call.account_name()
    wholly_old = typed and end < first  # Google's part is merged into Google's rows: only then
    try:
        demo = call.config.demo
        search_type = str(body.get("type", "web"))

        def read() -> Answer | None:
            # In a worker thread: the event loop keeps answering while SQLite reads.
            archive = _open(demo, today, account)
            if archive is None:
                return None
            try:
                return archive.query(
                    site, start, old_end, dims, search_type, _filters(body), row_limit, start_row, typed=wholly_old
                )
            finally:
                archive.close()

        answer = await anyio.to_thread.run_sync(read)
    except CannotAnswer as exc:
        raise ToolFailure(
            f"Search Console keeps about 16 months of data (from {first.isoformat()}), and {exc} "
            "Choose a later start_date, or other dimensions."
        ) from None
    except ArchiveDamaged:
        answer = None
        sources.unreadable = True
    if answer is None or not answer.copied:
        if end < first:
            raise ToolFailure(
                f"Search Console keeps about 16 months of data (from {first.isoformat()}), and SearchDesk has no "
                f"copy of {_span(start, old_end)} for this property on this computer; choose a later start_date."
            )
        sources.gaps.update(_days(start, old_end))
        sources.google.append((first, end))
        return raw
    sources.copied.update(answer.copied)
    sources.gaps.update(answer.gaps)
    sources.truncated.update(answer.truncated)
    if end < first:
        if isinstance(answer.rows, Columns):
            return answer.rows
        return {"rows": answer.rows, "responseAggregationType": "byPage" if "page" in dims else "byProperty"}
    sources.google.append((first, end))
    old = answer.rows.shaped() if isinstance(answer.rows, Columns) else answer.rows  # never asked for here
    return _merge(raw, old, dims, row_limit)


def _days(start: dt.date, end: dt.date) -> list[dt.date]:
    return [start + dt.timedelta(days=i) for i in range((end - start).days + 1)]


def _merge(raw: Any, old: list[dict[str, Any]], dims: Sequence[str], row_limit: int) -> dict[str, Any]:
    """Google's answer and the archive's rows as one answer of Google's shape."""
    doc = dict(raw) if isinstance(raw, dict) else {}
    google_rows = doc.get("rows") if isinstance(doc.get("rows"), list) else []
    merged = merge_rows([*old, *(google_rows or [])], dims)
    doc["rows"] = merged[:row_limit] + [r for r in merged[row_limit:] if not isinstance(r, dict) or "clicks" not in r]
    return doc
