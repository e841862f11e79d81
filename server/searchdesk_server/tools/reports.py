"""Reports: answers computed here from every row Google returns, past 25,000 rows a request.

Why on the server: a busy site's rows run to millions of characters, and a model adding them up
itself gets the arithmetic wrong (it calls growth a decline). Each report pages through Search
Analytics (`startRow`, 25,000 rows a request, a few requests at a time, up to `ROW_CAP` rows),
adds every page into per-key sums as it arrives (memory grows with keys, never with pages), and
hands back a short table with its provenance: the date ranges, Google's first incomplete date,
the rows read, and whether Google's row limits may have hidden data.

The arithmetic is fixed: CTR = clicks / impressions, position weighted by impressions, a change
in % undefined (null, shown "new") when its base is 0, CTR and position changes taken from the
rounded values shown (so a change always agrees with the two numbers beside it), and every
ordering broken by the key so equal values always come out the same way.
Reports read final data only (`dataState` final, sent explicitly) so a period never ends in
half-counted days; the default periods end on the last final day Google reports.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Awaitable, Callable, Coroutine, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, overload

import anyio

from ..google.http import Api, Limit
from ..result import Output, ToolFailure
from ..runtime import Call, plural
from . import _shape as sh
from ._listing import listing
from .analytics import QUERY, _months_back, date_range, google_today

PAGE_ROWS: Final = 25_000  # Google's most rows per request
ROW_CAP: Final = 200_000  # the most rows one report (or one all_rows export) reads
WINDOW: Final = 3  # requests in flight at once for one call: well inside Google's per-site QPS
DEFAULT_DAYS: Final = 28
YEAR_DAYS: Final = 364  # "a year earlier" = 52 weeks, so weekdays line up
MIN_IMPRESSIONS: Final = 100  # quick wins and cannibalisation ignore keys with fewer in the period
MIN_SHARE: Final = 0.10  # cannibalisation: a page counts when it has ≥ 10% of a query's impressions
QUICK_POSITIONS: Final = (4, 20)
MAX_AMOUNT: Final = 1e15  # far above any real count; a larger one is an odd row and is dropped
# Traffic-drop rules (relative changes between the two periods).
IMPRESSIONS_FELL: Final = 0.20  # impressions down by at least 20%
CTR_FELL: Final = 0.20  # CTR down by at least 20%
POSITION_FELL: Final = 1.0  # average position at least one place worse (a larger number)

#: Expected organic CTR by position, (first, last, ctr): our rounding of published industry
#: averages. A rough yardstick, not Google's figure.
CTR_CURVE: Final[tuple[tuple[int, int, float], ...]] = (
    (1, 1, 0.28),
    (2, 2, 0.155),
    (3, 3, 0.11),
    (4, 4, 0.08),
    (5, 5, 0.06),
    (6, 6, 0.045),
    (7, 7, 0.035),
    (8, 8, 0.03),
    (9, 9, 0.025),
    (10, 10, 0.02),
    (11, 15, 0.012),
    (16, 20, 0.008),
)
CTR_CURVE_SOURCE: Final = (
    "SearchDesk's rounding of published industry averages of organic click-through rate by Google "
    "position (desktop and mobile together). A rough yardstick, not Google's own figure: real CTR "
    "varies with brand, search intent and what else the results page shows."
)

Sums = list[float]  # clicks, impressions, position × impressions, impressions with a position
Entry = tuple[Any, float, float, float, float]
Sink = Callable[[list[Any]], Awaitable[None]]  # takes one page of Google's rows, in order
Job = Callable[[], Coroutine[Any, Any, None]]


# --- arithmetic ---------------------------------------------------------------------------------


def ctr(clicks: float, impressions: float) -> float | None:
    return clicks / impressions if impressions else None


def position(weighted: float, weight: float) -> float | None:
    return weighted / weight if weight else None


def change(now: float | None, before: float | None) -> float | None:
    return None if now is None or before is None else now - before


def change_pct(now: float | None, before: float | None) -> float | None:
    """The change in % of `before`; undefined (None) when there is no base to divide by."""
    if now is None or before is None or before == 0:
        return None
    return (now - before) / before * 100


def _count(value: float) -> int | float:
    return int(value) if float(value).is_integer() else round(value, 2)


def _round(value: float | None, digits: int) -> float | None:
    return None if value is None else round(value, digits) + 0.0  # + 0.0: never "-0.0"


def add_sums(into: Sums, entry: Entry, at: int = 0) -> None:
    into[at] += entry[1]
    into[at + 1] += entry[2]
    into[at + 2] += entry[3]
    into[at + 3] += entry[4]


# --- reading Google -----------------------------------------------------------------------------


def _word(value: object) -> str | None:
    # The common case (a printable string) without a call per row into the general cleaner.
    if type(value) is str and value.isprintable():
        return value
    return sh.text(value)


def _amount(value: object) -> float | None:
    """A non-negative number below MAX_AMOUNT (Google's counts; int64 ones may come as strings).

    The ceiling keeps 200,000 rows' sums finite: an absurd 1e308 would otherwise add up to
    infinity and turn a change into NaN.
    """
    if type(value) is int or type(value) is float:
        number: float | None = value
    else:
        number = sh.number(value)
    return number if number is not None and 0 <= number < MAX_AMOUNT else None


def entries(rows: object, dims: int) -> Iterator[Entry]:
    """(key, clicks, impressions, position × impressions, impressions with a position) per usable row.

    The key is the cleaned dimension value (a tuple for several). A row that is not an object, lacks
    its keys or has a negative or non-numeric count is dropped, as elsewhere in SearchDesk. This runs
    once per row of up to 200,000, so the common case takes the short paths.
    """
    if not isinstance(rows, list):
        return
    for raw in rows:
        if not isinstance(raw, dict):
            continue
        key: Any = ()
        if dims:
            keys = raw.get("keys")
            if not isinstance(keys, list) or len(keys) < dims:
                continue
            if dims == 1:
                key = _word(keys[0])
                if key is None:
                    continue
            else:
                words = tuple(_word(k) for k in keys[:dims])
                if None in words:
                    continue
                key = words
        clicks = _amount(raw.get("clicks"))
        impressions = _amount(raw.get("impressions"))
        if clicks is None or impressions is None:
            continue
        pos = _amount(raw.get("position"))
        if not pos:
            yield key, clicks, impressions, 0.0, 0.0
        else:
            yield key, clicks, impressions, pos * impressions, float(impressions)


def first_incomplete(raw: Mapping[str, Any]) -> str | None:
    """Google's metadata.firstIncompleteDate, only when it is a real date: it goes into our sentences."""
    meta = raw.get("metadata")
    value = meta.get("firstIncompleteDate") if isinstance(meta, dict) else None
    if not isinstance(value, str) or len(value) != 10:
        return None
    try:
        return dt.date.fromisoformat(value).isoformat()
    except ValueError:
        return None


@dataclass
class Pages:
    """What one paged read found."""

    rows: int = 0
    first_incomplete: str | None = None
    cap_reached: bool = False  # every page up to the cap was full
    more_at_google: bool = False  # …and a one-row look past the cap found another row


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
        async with self._limiter:
            raw = await self.call.google(
                Api.SEARCHCONSOLE,
                "POST",
                QUERY,
                path_params={"siteUrl": self.site},
                body=dict(body),
                limit=Limit.ANALYTICS,
                retry=True,
            )
        self.requests += 1
        return raw if isinstance(raw, dict) else {}

    async def _report(self) -> None:
        # Progress must only go up; concurrent pages could otherwise send their counts out of order.
        async with self._progress_lock:
            if self.rows > self._reported:
                self._reported = self.rows
                await self.call.progress(self.rows, None, f"Read {self.rows:,} rows from Google")

    def _fetch(self, body: Mapping[str, Any], at: int, into: dict[int, dict[str, Any]]) -> Job:
        async def fetch() -> None:
            into[at] = await self.request({**body, "startRow": at, "rowLimit": min(PAGE_ROWS, self.cap - at)})

        return fetch

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
            count = max(1, min(WINDOW, start // PAGE_ROWS, math.ceil((self.cap - start) / PAGE_ROWS)))
            starts = [start + k * PAGE_ROWS for k in range(count)]
            answers: dict[int, dict[str, Any]] = {}

            await together(*(self._fetch(body, at, answers) for at in starts))
            short = False
            for at in starts:
                raw = answers.pop(at)
                if at == 0:
                    found.first_incomplete = first_incomplete(raw)
                rows = raw.get("rows")
                batch: list[Any] = rows if isinstance(rows, list) else []
                got = len(batch)
                if got:
                    await sink(batch)
                found.rows += got
                self.rows += got
                await self._report()
                if got < min(PAGE_ROWS, self.cap - at):
                    short = True
                    break
            answers.clear()
            if short:
                return found
            start = starts[-1] + PAGE_ROWS
        found.cap_reached = True
        beyond = await self.request({**body, "startRow": self.cap, "rowLimit": 1})
        found.more_at_google = bool(beyond.get("rows"))
        return found


# --- dates --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Period:
    start: dt.date
    end: dt.date

    @property
    def days(self) -> int:
        return (self.end - self.start).days + 1

    def shifted(self, days: int) -> Period:
        return Period(self.start - dt.timedelta(days=days), self.end - dt.timedelta(days=days))

    def data(self) -> dict[str, Any]:
        return {"start": self.start.isoformat(), "end": self.end.isoformat(), "days": self.days}

    def words(self) -> str:
        return f"{self.start.isoformat()} to {self.end.isoformat()} ({plural(self.days, 'day')})"

    def body(self, dims: Sequence[str]) -> dict[str, Any]:
        body: dict[str, Any] = {
            "startDate": self.start.isoformat(),
            "endDate": self.end.isoformat(),
            "type": "web",
            "dataState": "final",
        }
        if dims:
            body["dimensions"] = list(dims)
        return body


@dataclass
class Timeline:
    """The property's days: which have data and which are final.

    One by-date request over Search Console's 16 months with dataState all tells both: Google's
    metadata names the first incomplete date (only such a request carries it).
    """

    today: dt.date
    days: set[str] = field(default_factory=set)
    first_incomplete: str | None = None

    @property
    def last_final(self) -> dt.date | None:
        if self.first_incomplete:
            return dt.date.fromisoformat(self.first_incomplete) - dt.timedelta(days=1)
        # No incomplete date in a range reaching today means every day Google returned is final.
        return dt.date.fromisoformat(max(self.days)) if self.days else None

    @property
    def first_day(self) -> str | None:
        return min(self.days) if self.days else None


async def timeline(reader: Reader) -> Timeline:
    today = google_today()
    body = {
        "startDate": _months_back(today, 16).isoformat(),
        "endDate": today.isoformat(),
        "dimensions": ["date"],
        "type": "web",
        "dataState": "all",
        "rowLimit": PAGE_ROWS,
        "startRow": 0,
    }
    raw = await reader.request(body)
    tl = Timeline(today, first_incomplete=first_incomplete(raw))
    for entry in entries(raw.get("rows"), 1):
        try:
            tl.days.add(dt.date.fromisoformat(entry[0]).isoformat())
        except ValueError:
            continue
    return tl


@dataclass
class PeriodRead:
    """One period's rows read into a sink, and Google's own total for the property in that period."""

    period: Period
    pages: Pages
    total: Sums


async def read_period(reader: Reader, period: Period, dims: list[str], sink: Sink) -> PeriodRead:
    """The period's rows and its property total (a request without dimensions), fetched together."""
    found: list[Pages] = []
    total: Sums = [0, 0, 0.0, 0.0]

    async def rows() -> None:
        found.append(await reader.pages(period.body(dims), sink))

    async def overall() -> None:
        raw = await reader.request({**period.body([]), "rowLimit": 1, "startRow": 0})
        for entry in entries(raw.get("rows"), 0):
            add_sums(total, entry)

    await together(rows, overall)
    return PeriodRead(period, found[0], total)


def current_period(args: Mapping[str, Any], tl: Timeline) -> Period:
    last = tl.last_final or tl.today - dt.timedelta(days=3)
    if "start_date" in args or "end_date" in args:
        if "start_date" not in args or "end_date" not in args:
            raise ToolFailure("Give both start_date and end_date (YYYY-MM-DD), or neither for the last 28 final days.")
        start, end = date_range({"start_date": args["start_date"], "end_date": args["end_date"]}, tl.today)
        if tl.last_final and end > tl.last_final:
            raise ToolFailure(
                f"end_date is after {tl.last_final.isoformat()}, the last day with final data; reports use "
                "final data only so no period ends in half-counted days. Choose an earlier end_date, or leave "
                "the dates out for the last 28 final days."
            )
        return Period(start, end)
    return Period(last - dt.timedelta(days=DEFAULT_DAYS - 1), last)


def earlier_period(args: Mapping[str, Any], now: Period) -> Period:
    vs = str(args.get("vs", "previous")).strip()
    if vs == "previous":
        return now.shifted(now.days)
    if vs == "year":
        return now.shifted(YEAR_DAYS)
    try:
        start = dt.date.fromisoformat(vs)
    except ValueError:
        raise ToolFailure("vs must be previous, year, or the earlier period's start date as YYYY-MM-DD.") from None
    before = Period(start, start + dt.timedelta(days=now.days - 1))
    if before.end >= now.start:
        raise ToolFailure(
            f"vs: the earlier period ({before.words()}, as long as the first) must end before "
            f"{now.start.isoformat()}; choose an earlier date."
        )
    return before


# --- shared result parts ------------------------------------------------------------------------


class LazyRows(Sequence[Mapping[str, Any]]):
    """Result rows built only when the budget reaches them: a report may rank 200,000 keys, but a
    100 kB result shows a few hundred, so only those are ever turned into dictionaries."""

    def __init__(self, keys: Sequence[Any], build: Callable[[Any], dict[str, Any]]) -> None:
        self._keys = keys
        self._build = build
        self._made: dict[int, dict[str, Any]] = {}

    def __len__(self) -> int:
        return len(self._keys)

    def _one(self, index: int) -> dict[str, Any]:
        row = self._made.get(index)
        if row is None:
            row = self._made[index] = self._build(self._keys[index])
        return row

    @overload
    def __getitem__(self, index: int) -> Mapping[str, Any]: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Mapping[str, Any]]: ...
    def __getitem__(self, index: int | slice) -> Mapping[str, Any] | Sequence[Mapping[str, Any]]:
        if isinstance(index, slice):
            return [self._one(i) for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        return self._one(index)


def coverage(part: float, whole: float) -> float | None:
    return round(part / whole, 4) if whole else None


def _share_words(share: float | None) -> str:
    return "n/a" if share is None else f"{share * 100:.1f}%"


NOUNS: Final = {"page": "pages", "query": "queries", "country": "countries", "device": "devices"}


@dataclass(frozen=True)
class Read:
    """One period's paged read, with what it covers of the property's own clicks."""

    key: str  # "period" or "previous" in the structured half
    words: str  # "this period" or "the earlier period" in the text
    pages: Pages
    rows_clicks: float
    property_clicks: float

    @property
    def coverage(self) -> float | None:
        return coverage(self.rows_clicks, self.property_clicks)


def provenance(reader: Reader, tl: Timeline, by: str, reads: Sequence[Read]) -> tuple[list[str], dict[str, Any]]:
    """The lines every report opens with, and the same facts for the structured half: freshness,
    rows read, and whether Google's row limits (or SearchDesk's cap) may have hidden data."""
    if tl.first_incomplete:
        fresh = f"Google's first incomplete date is {tl.first_incomplete}; later days are still being counted."
    elif tl.days:
        fresh = "Google reported no incomplete days."
    else:
        fresh = "Google has no web search data for this property in the last 16 months."
    read = " and ".join(f"{plural(r.pages.rows, 'row')} for {r.words}" for r in reads)
    lines = [
        "Web search, final data only (dataState final); dates are Google's days (Pacific time). " + fresh,
        f"Read {read} in {plural(reader.requests, 'request')} (pages of {PAGE_ROWS:,}, at most {ROW_CAP:,} rows "
        "a period).",
    ]
    more = any(r.pages.more_at_google for r in reads)
    if more:
        lines.append(
            f"Stopped at the {ROW_CAP:,}-row cap with more rows at Google: the smallest keys are missing. "
            "Narrow the dates."
        )
    elif any(r.pages.cap_reached for r in reads):
        lines.append(f"Exactly {ROW_CAP:,} rows: nothing lies beyond the cap.")
    first, *rest = reads
    held = f"{_share_words(first.coverage)} of the property's clicks for {first.words}" + "".join(
        f" and {_share_words(r.coverage)} for {r.words}" for r in rest
    )
    hidden = more or any(r.rows_clicks < r.property_clicks for r in reads)
    if hidden:
        why = "leaves out rare (anonymised) queries and " if by == "query" else ""
        lines.append(
            f"These rows hold {held}: Google {why}returns only its top rows "
            f"(about 50,000 a day), so small {NOUNS.get(by, 'keys')} may be missing."
        )
    else:
        lines.append(f"These rows hold {held}: no clicks are missing.")
    data = {
        "search_type": "web",
        "data_state": "final",
        "first_incomplete_date": tl.first_incomplete,
        "last_final_date": tl.last_final.isoformat() if tl.last_final else None,
        "first_data_date": tl.first_day,
        "rows_read": {r.key: r.pages.rows for r in reads},
        "requests": reader.requests,
        "row_cap": ROW_CAP,
        "cap_reached": any(r.pages.cap_reached for r in reads),
        "more_rows_at_google": more,
        "clicks_coverage": {r.key: r.coverage for r in reads},
        "may_be_incomplete": hidden,
    }
    return lines, data


def _empty_sums(width: int) -> Sums:
    return [0.0] * width


def _num(value: float | None, kind: str) -> str:
    if value is None:
        return "–"
    if kind == "ctr":
        return f"{value * 100:.2f}%"
    if kind == "position":
        return f"{value:.2f}"
    return f"{value:,}"


def _signed(value: float | None, kind: str) -> str:
    if value is None:
        return "–"
    if kind == "ctr":
        return f"{value * 100:+.2f} pt"
    if kind == "position":
        return f"{value:+.2f}"
    return f"{value:+,}"


def _pct(value: float | None, now: float | None) -> str:
    if value is None:
        return "new" if now not in (None, 0) else "–"
    return f"{value:+.1f}%"


def _tally(width: int, dims: int, at: int, sums: dict[Any, Sums]) -> Sink:
    """A sink adding each page's rows into per-key sums at slot `at` (memory grows with keys only)."""

    async def add(rows: list[Any]) -> None:
        for key, clicks, impressions, weighted, weight in entries(rows, dims):
            cell = sums.get(key)
            if cell is None:
                cell = sums[key] = _empty_sums(width)
            cell[at] += clicks
            cell[at + 1] += impressions
            cell[at + 2] += weighted
            cell[at + 3] += weight

    return add


def _column(sums: Mapping[Any, Sums], at: int) -> float:
    return math.fsum(s[at] for s in sums.values()) if sums else 0


def _columns(sums: Mapping[Any, Sums], width: int) -> Sums:
    """Every slot summed over all keys, in one pass."""
    out = _empty_sums(width)
    for s in sums.values():
        for k in range(width):
            out[k] += s[k]
    return out


# --- compare_periods and report_traffic_drops ---------------------------------------------------

METRICS: Final = ("clicks", "impressions", "ctr", "position")


@dataclass
class Comparison:
    """Both periods read and summed per key: slots 0-3 this period, 4-7 the earlier one."""

    site: str
    by: str
    reader: Reader
    tl: Timeline
    sums: dict[Any, Sums]
    now: PeriodRead
    before: PeriodRead

    def reads(self) -> tuple[Read, Read]:
        return (
            Read("period", "this period", self.now.pages, _column(self.sums, 0), self.now.total[0]),
            Read("previous", "the earlier period", self.before.pages, _column(self.sums, 4), self.before.total[0]),
        )


async def compare(call: Call, by: str) -> Comparison:
    site = call.site()
    reader = Reader(call, site)
    tl = await timeline(reader)
    now = current_period(call.args, tl)
    before = earlier_period(call.args, now)
    sums: dict[Any, Sums] = {}
    found: dict[int, PeriodRead] = {}

    def job(at: int, period: Period) -> Job:
        async def run() -> None:
            found[at] = await read_period(reader, period, [by], _tally(8, 1, at, sums))

        return run

    await together(job(0, now), job(4, before))
    return Comparison(site, by, reader, tl, sums, found[0], found[4])


def pair(s: Sums, metric: str) -> tuple[float | None, float | None]:
    """(this period, earlier) for one metric: counts exact, CTR and position rounded as shown, so a
    change always agrees with the two numbers beside it."""
    if metric == "clicks":
        return s[0], s[4]
    if metric == "impressions":
        return s[1], s[5]
    if metric == "ctr":
        return _round(ctr(s[0], s[1]), 4), _round(ctr(s[4], s[5]), 4)
    return _round(position(s[2], s[3]), 2), _round(position(s[6], s[7]), 2)


def status(s: Sums) -> str:
    if not s[4] and not s[5]:
        return "new"
    if not s[0] and not s[1]:
        return "gone"
    return "both"


def compared_row(by: str, key: Any, s: Sums) -> dict[str, Any]:
    """One key's metrics in both periods with their changes, absolute and in % of the earlier value."""
    row: dict[str, Any] = {by: key, "status": status(s)}
    for m in METRICS:
        now, before = pair(s, m)
        delta = change(now, before)
        if m in ("clicks", "impressions"):
            row[m], row[f"{m}_prev"] = _count(now or 0), _count(before or 0)
            row[f"{m}_change"] = None if delta is None else _count(delta)
        else:
            row[m], row[f"{m}_prev"] = now, before
            row[f"{m}_change"] = _round(delta, 4 if m == "ctr" else 2)
        row[f"{m}_change_pct"] = _round(change_pct(now, before), 1)
    return row


def _move(row: Mapping[str, Any], m: str) -> str:
    return (
        f"{_num(row[f'{m}_prev'], m)} → {_num(row[m], m)} "
        f"({_signed(row[f'{m}_change'], m)}, {_pct(row[f'{m}_change_pct'], row[m])})"
    )


def _totals(s: Sums) -> dict[str, Any]:
    row = compared_row("key", "", s)
    del row["key"], row["status"]
    return row


def _totals_words(t: Mapping[str, Any]) -> str:
    return "; ".join(f"{m} {_move(t, m)}" for m in METRICS)


def comparison_head(title: str, c: Comparison) -> tuple[list[str], dict[str, Any]]:
    """Dates, provenance, and the totals of the rows for both periods beside the property's own."""
    lines, data = provenance(c.reader, c.tl, c.by, c.reads())
    rows_total = _columns(c.sums, 8)
    prop_total = c.now.total + c.before.total
    rows_t, prop_t = _totals(rows_total), _totals(prop_total)
    head = [
        f"{title} for {c.site}, by {c.by}.",
        f"This period: {c.now.period.words()}; earlier period: {c.before.period.words()}.",
        *lines,
        f"Totals of these rows (earlier → this period): {_totals_words(rows_t)}.",
        f"The property's own totals: {_totals_words(prop_t)}.",
    ]
    if c.by == "page":
        head.append("By-page counts give each page its own impressions, so pages may add up to more impressions.")
    first = c.tl.first_day
    if first and c.before.period.start.isoformat() < first:
        head.append(f"Search Console has web data from {first} only; the earlier period starts before it.")
    return head, {
        "site": c.site,
        "by": c.by,
        "period": c.now.period.data(),
        "previous": c.before.period.data(),
        **data,
        "totals": rows_t,
        "property_totals": prop_t,
    }


async def compare_periods(call: Call) -> Output:
    by = call.args.get("by", "page")
    metric = call.args.get("sort", "clicks")
    c = await compare(call, by)
    head, data = comparison_head("Compare periods", c)

    def order(key: Any) -> tuple[Any, ...]:
        s = c.sums[key]
        delta = change(*pair(s, metric))
        return (delta is None, -abs(delta or 0.0), -s[0], -s[4], key)

    keys = sorted(c.sums, key=order)
    counts = {"both": 0, "new": 0, "gone": 0}
    for s in c.sums.values():
        counts[status(s)] += 1
    head.append(
        f"{plural(len(keys), by, NOUNS[by])}: {counts['both']:,} in both periods, {counts['new']:,} new, "
        f"{counts['gone']:,} gone. Largest change in {metric} first."
    )
    return listing(
        entries=LazyRows(keys, lambda k: compared_row(by, k, c.sums[k])),
        headers=[by, "Status", "Clicks", "Impressions", "CTR", "Position"],
        row=lambda r: [sh.cell(r[by]), r["status"], *(_move(r, m) for m in METRICS)],
        intro="\n".join(head),
        key="rows",
        narrow="Narrow the dates, or use report_traffic_drops for the losers alone.",
        noun=NOUNS[by],
        extra={**data, "sort": metric, "keys": counts},
        footer=(
            "Each cell: earlier → this period (change, change in % of the earlier value; 'new' where that is 0). "
            "A lower position is better, so a negative position change is an improvement."
        ),
    )


def diagnose(s: Sums) -> tuple[str, str]:
    """A short, rule-based likely cause for a key that lost clicks (the rules are in the module head)."""
    now_c, now_i, now_ps, now_pi, old_c, old_i, old_ps, old_pi = s
    if not now_i:
        return "gone", "no impressions now; dropped out of the results"
    pos_now, pos_old = position(now_ps, now_pi), position(old_ps, old_pi)
    worse = pos_now is not None and pos_old is not None and pos_now - pos_old >= POSITION_FELL
    fell = old_i > 0 and (now_i - old_i) / old_i <= -IMPRESSIONS_FELL
    if fell and worse:
        return "ranking", "fewer impressions at a worse position; lost rankings"
    if fell:
        return "visibility", "fewer impressions at a similar position; less demand or shown for fewer searches"
    if worse:
        return "position", "similar impressions at a worse position"
    ctr_now, ctr_old = ctr(now_c, now_i), ctr(old_c, old_i)
    if ctr_now is not None and ctr_old and (ctr_now - ctr_old) / ctr_old <= -CTR_FELL:
        return "snippet", "similar impressions and position, lower CTR; the title, snippet or results page changed"
    return "mixed", "smaller changes in impressions and CTR together"


DROP_FIELDS: Final = (
    "clicks",
    "clicks_prev",
    "clicks_change",
    "clicks_change_pct",
    "impressions",
    "impressions_prev",
    "impressions_change_pct",
    "ctr",
    "ctr_prev",
    "position",
    "position_prev",
)


def drop_row(by: str, key: Any, s: Sums) -> dict[str, Any]:
    full = compared_row(by, key, s)
    code, why = diagnose(s)
    return {by: key, **{k: full[k] for k in DROP_FIELDS}, "cause": code, "why": why}


def _drop_cells(by: str, r: Mapping[str, Any]) -> list[str]:
    return [
        sh.cell(r[by]),
        f"{_num(r['clicks_prev'], 'clicks')} → {_num(r['clicks'], 'clicks')} "
        f"({_signed(r['clicks_change'], 'clicks')}, {_pct(r['clicks_change_pct'], r['clicks'])})",
        f"{_num(r['impressions_prev'], 'i')} → {_num(r['impressions'], 'i')} "
        f"({_pct(r['impressions_change_pct'], r['impressions'])})",
        f"{_num(r['ctr_prev'], 'ctr')} → {_num(r['ctr'], 'ctr')}",
        f"{_num(r['position_prev'], 'position')} → {_num(r['position'], 'position')}",
        f"{r['cause']}: {r['why']}",
    ]


async def report_traffic_drops(call: Call) -> Output:
    by = call.args.get("by", "page")
    c = await compare(call, by)
    head, data = comparison_head("Traffic drops", c)
    losers = [k for k, s in c.sums.items() if s[0] < s[4]]
    losers.sort(key=lambda k: (c.sums[k][0] - c.sums[k][4], -c.sums[k][4], k))
    lost = sum(c.sums[k][4] - c.sums[k][0] for k in losers)
    causes: dict[str, int] = {}
    for k in losers:
        code = diagnose(c.sums[k])[0]
        causes[code] = causes.get(code, 0) + 1
    head.append(
        f"{plural(len(losers), by, NOUNS[by])} lost clicks, {_count(lost):,} clicks in all; the most lost first."
    )
    return listing(
        entries=LazyRows(losers, lambda k: drop_row(by, k, c.sums[k])),
        headers=[by, "Clicks", "Impressions", "CTR", "Position", "Likely cause"],
        row=lambda r: _drop_cells(by, r),
        intro="\n".join(head),
        key="rows",
        narrow="Narrow the dates, or look at one key with query_search_analytics filters.",
        noun=NOUNS[by],
        extra={**data, "lost_clicks": _count(lost), "causes": dict(sorted(causes.items()))},
        footer=(
            "Cells: earlier → this period. Likely causes, checked in this order: gone (no impressions now); "
            f"ranking (impressions down ≥ {IMPRESSIONS_FELL:.0%} and position ≥ {POSITION_FELL:g} worse); "
            f"visibility (impressions down ≥ {IMPRESSIONS_FELL:.0%}); position (≥ {POSITION_FELL:g} worse); "
            f"snippet (CTR down ≥ {CTR_FELL:.0%}); else mixed. A rule of thumb, not a verdict: "
            "inspect_urls tells whether a lost page is still indexed."
        ),
    )


# --- report_quick_wins --------------------------------------------------------------------------


def expected_ctr(pos: float) -> float | None:
    """The curve's CTR for a position rounded to the nearest whole place (halves round up)."""
    place = math.floor(pos + 0.5)
    for first, last, value in CTR_CURVE:
        if first <= place <= last:
            return value
    return None


def curve_words() -> str:
    lo, hi = QUICK_POSITIONS
    parts = [
        f"{first}{'' if first == last else f'-{last}'}: {value * 100:.1f}%"
        for first, last, value in CTR_CURVE
        if last >= lo and first <= hi
    ]
    return ", ".join(parts)


def extra_clicks(s: Sums) -> float | None:
    """Impressions × the curve's CTR − clicks, for a key in the quick-win positions with enough
    impressions and a CTR below the curve; None for every other key."""
    c, i, ps, pi = s
    pos = position(ps, pi)
    lo, hi = QUICK_POSITIONS
    if i < MIN_IMPRESSIONS or pos is None or not lo <= math.floor(pos + 0.5) <= hi:
        return None
    expected = expected_ctr(pos)
    if expected is None:
        return None
    # In thousandths (the curve's precision), exactly: 6 clicks of 500 at 1.2% sit on the curve, not
    # below it, though 0.012 has no exact binary form; and equal gaps are truly equal for the ordering.
    gap = round(i * round(expected * 1000)) - round(c * 1000)
    return gap / 1000 if gap > 0 else None


def quick_win(by: str, key: Any, s: Sums) -> dict[str, Any]:
    c, i, ps, pi = s
    pos = position(ps, pi)
    return {
        by: key,
        "impressions": _count(i),
        "clicks": _count(c),
        "ctr": _round(ctr(c, i), 4),
        "position": _round(pos, 2),
        "expected_ctr": expected_ctr(pos) if pos is not None else None,
        "extra_clicks": _round(extra_clicks(s), 1),
    }


async def single(call: Call, dims: list[str]) -> tuple[Reader, Timeline, PeriodRead, dict[Any, Sums]]:
    """One period read and summed per key (the reports that look at one period)."""
    reader = Reader(call, call.site())
    tl = await timeline(reader)
    now = current_period(call.args, tl)
    sums: dict[Any, Sums] = {}
    found = await read_period(reader, now, dims, _tally(4, len(dims), 0, sums))
    return reader, tl, found, sums


async def report_quick_wins(call: Call) -> Output:
    by = call.args.get("by", "query")
    reader, tl, found, sums = await single(call, [by])
    now = found.period
    gains = {k: g for k, s in sums.items() if (g := extra_clicks(s)) is not None}
    keys = sorted(gains, key=lambda k: (-gains[k], -sums[k][1], k))
    read = Read("period", "this period", found.pages, _column(sums, 0), found.total[0])
    lines, data = provenance(reader, tl, by, (read,))
    lo, hi = QUICK_POSITIONS
    head = [
        f"Quick wins for {reader.site}, by {by}: {now.words()}.",
        *lines,
        f"{plural(len(keys), by, NOUNS[by])} at positions {lo}-{hi} with at least {MIN_IMPRESSIONS} impressions "
        f"and a CTR below the curve; about {sum(gains.values()):,.0f} extra clicks in all if each reached it. "
        "Most extra clicks first.",
        f"CTR curve used (expected CTR at a position rounded to a whole place): {curve_words()}. "
        f"Source: {CTR_CURVE_SOURCE}",
    ]
    curve = [{"positions": [first, last], "ctr": value} for first, last, value in CTR_CURVE]
    return listing(
        entries=LazyRows(keys, lambda k: quick_win(by, k, sums[k])),
        headers=[by, "Impressions", "Clicks", "CTR", "Position", "Curve CTR", "Extra clicks"],
        row=lambda r: [
            sh.cell(r[by]),
            _num(r["impressions"], "i"),
            _num(r["clicks"], "i"),
            _num(r["ctr"], "ctr"),
            _num(r["position"], "position"),
            _num(r["expected_ctr"], "ctr"),
            f"{r['extra_clicks']:,.1f}",
        ],
        intro="\n".join(head),
        key="rows",
        narrow="Narrow the dates or filter with query_search_analytics.",
        noun=NOUNS[by],
        extra={
            "site": reader.site,
            "by": by,
            "period": now.data(),
            **data,
            "positions": list(QUICK_POSITIONS),
            "min_impressions": MIN_IMPRESSIONS,
            "extra_clicks": _round(sum(gains.values()), 1),
            "ctr_curve": {"source": CTR_CURVE_SOURCE, "buckets": curve},
        },
        footer=(
            "Extra clicks = impressions × curve CTR − clicks: what a better title and snippet might earn at the "
            "same position. A lower position number is better."
        ),
    )


# --- report_cannibalisation ---------------------------------------------------------------------


def split_queries(sums: Mapping[Any, Sums]) -> list[tuple[float, str, list[str]]]:
    """(impressions over all pages, query, pages with ≥ MIN_SHARE of them, largest first) for each
    query with enough impressions that two or more pages split; the most impressions first."""
    pages: dict[str, list[str]] = {}
    for query, page in sums:
        pages.setdefault(query, []).append(page)
    out = []
    for query, urls in pages.items():
        total = sum(sums[(query, p)][1] for p in urls)
        if total < MIN_IMPRESSIONS:
            continue
        big = [p for p in urls if sums[(query, p)][1] / total >= MIN_SHARE]
        if len(big) >= 2:
            big.sort(key=lambda p: (-sums[(query, p)][1], p))
            out.append((total, query, big))
    out.sort(key=lambda t: (-t[0], t[1]))
    return out


async def report_cannibalisation(call: Call) -> Output:
    reader, tl, found, sums = await single(call, ["query", "page"])
    now = found.period
    split = split_queries(sums)
    pairs = [(query, page, total) for total, query, big in split for page in big]

    def build(item: tuple[str, str, float]) -> dict[str, Any]:
        query, page, total = item
        s = sums[(query, page)]
        return {
            "query": query,
            "query_impressions": _count(total),
            "page": page,
            "impressions": _count(s[1]),
            "share": _round(s[1] / total, 4),
            "clicks": _count(s[0]),
            "position": _round(position(s[2], s[3]), 2),
        }

    read = Read("period", "this period", found.pages, _column(sums, 0), found.total[0])
    lines, data = provenance(reader, tl, "query", (read,))
    head = [
        f"Cannibalisation for {reader.site}: {now.words()}.",
        *lines,
        f"{plural(len(split), 'query', 'queries')} where two or more of the site's pages each hold at least "
        f"{MIN_SHARE:.0%} of the query's impressions (queries with at least {MIN_IMPRESSIONS} impressions); "
        "the most impressions first, one row per page.",
    ]
    return listing(
        entries=LazyRows(pairs, build),
        headers=["query", "Query impressions", "page", "Impressions", "Share", "Clicks", "Position"],
        row=lambda r: [
            sh.cell(r["query"]),
            _num(r["query_impressions"], "i"),
            sh.cell(r["page"]),
            _num(r["impressions"], "i"),
            _share_words(r["share"]),
            _num(r["clicks"], "i"),
            _num(r["position"], "position"),
        ],
        intro="\n".join(head),
        key="rows",
        narrow="Narrow the dates to see the rest.",
        noun="rows",
        extra={
            "site": reader.site,
            "period": now.data(),
            **data,
            "queries": len(split),
            "min_share": MIN_SHARE,
            "min_impressions": MIN_IMPRESSIONS,
        },
        footer=(
            "Share = the page's impressions / the impressions of all the site's pages for that query (pages "
            "under the threshold are not listed, so shares may add up to less than 100%)."
        ),
    )
