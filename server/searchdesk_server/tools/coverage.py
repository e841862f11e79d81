"""`index_coverage`: which of a property's pages are in Google, from SearchDesk's own watch.

The watch (coverage/) is kept by the SearchDesk app in the background, one store per Google account;
this tool only reads it. The call is routed as a live call is (account_routing.py) and Google is asked once
whether the routed account sees the property now, so only accounts and properties Claude may use now
are read, and a withheld or removed account's store is never opened. The demo has a watch of its own
in memory (coverage/demo_watch.py).

Google's words (verdicts, coverage states) and the website's URLs are cleaned and marked untrusted as
a live answer is; the server's own sentence (`coverage.words.figures_sentence`) opens the answer.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any, Final, TypeVar

import anyio.to_thread

from ..coverage.records import Change, Counts, CoverageDamaged, Page, WatchState
from ..coverage.store import CoverageStore, path_for
from ..coverage.words import SWITCH_ON, figures_sentence
from ..google import shapes as sh
from ..google.http import Api
from ..result import Output, ToolFailure
from ..runtime import Call, plural
from ._listing import listing

#: Pages read from the store for one answer at most (the listing then fits them to the 100 kB budget).
PAGE: Final = 1_000
SITE_GET: Final = "webmasters/v3/sites/{siteUrl}"
ONE_PAGE_NOW = "inspect_url (Inspect URL) checks one page with Google now."
OWN_CREDENTIALS: Final = (
    "this server uses its own Google credentials, and the watch is kept by the SearchDesk app signed in to the "
    "same Google account"
)
T = TypeVar("T")
VERDICTS: Final = ("PASS", "PARTIAL", "FAIL", "NEUTRAL")
_LOOSE: Final = str.maketrans({"–": "-", "—": "-", "‘": "'", "’": "'", "“": '"', "”": '"'})


async def open_watch(call: Call, site: str, *, confirm: bool) -> CoverageStore | None:
    """The watch's store for this call's routed account (the demo's own in the demo); None: none kept.
    With `confirm`, Google is first asked whether the account sees `site` now (raises as a live call
    would) — only when there is a store to open. Raises CoverageDamaged."""
    path = None if call.config.demo else path_for(await call.account_name())
    if path is not None and not path.is_file():  # a stat, not an open
        return None
    if confirm:
        await call.google.call(Api.SEARCHCONSOLE, "GET", SITE_GET, path_params={"siteUrl": site}, retry=True)
    if path is None:
        from ..coverage.demo_watch import demo_watch
        from ..demo.clock import resolve_today

        return await anyio.to_thread.run_sync(demo_watch, resolve_today(call.config.today))
    return await anyio.to_thread.run_sync(CoverageStore.open_readonly, path)


async def read_watch(call: Call, site: str, read: Callable[[CoverageStore], T]) -> T | None:
    """`read(store)` in a worker thread, for a caller whose live call already confirmed access (the
    account's own store, never a withheld one's); None when no watch is kept or its file cannot be
    read: a note beside another answer never fails that answer."""
    try:
        store = await open_watch(call, site, confirm=False)
    except (CoverageDamaged, OSError):
        return None
    if store is None:
        return None
    try:
        return await anyio.to_thread.run_sync(read, store)
    finally:
        store.close()


async def older_result(call: Call, site: str, url: str) -> dict[str, str] | None:
    """What the watch last found for `url` (for `inspect_url`: the live call already confirmed access);
    None when the watch has nothing for it or cannot be read."""
    page = await read_watch(call, site, lambda store: store.page(site, url))
    if page is None or page.result is None or page.inspected_at is None:
        return None
    return sh.record(
        {
            "inspected_at": page.inspected_at.isoformat(timespec="seconds"),
            "verdict": page.result.verdict,
            "coverage": page.result.coverage,
        }
    )


def _no_watch(site: str, why: str) -> Output:
    text = (
        f"SearchDesk is not keeping watch over which of {site}'s pages are in Google: {why}. {ONE_PAGE_NOW} "
        f"To keep watch: {SWITCH_ON}; it then checks the site's pages in the background within Google's daily "
        "limit, and this answers from what it found."
    )
    return Output(text, {"site": site, "watch": "none", "reason": why}, from_google=False)


def _day(value: dt.datetime | None) -> str:
    return value.date().isoformat() if value else ""


def _since(raw: object) -> dt.datetime | None:
    if raw is None:
        return None
    try:
        day = dt.date.fromisoformat(str(raw))
    except ValueError:
        raise ToolFailure("since must be a date as YYYY-MM-DD.") from None
    return dt.datetime.combine(day, dt.time(0), tzinfo=dt.UTC)


def _summary(counts: Counts, watch: WatchState | None) -> tuple[str, dict[str, Any]]:
    """The opening sentence and figures every answer carries."""
    waiting = counts.known - counts.inspected
    lines = [
        figures_sentence(counts.inspected, counts.oldest, counts.newest),
        f"{plural(waiting, 'page')} of the {counts.known:,} it watches {'is' if waiting == 1 else 'are'} not "
        "inspected yet.",
    ]
    if watch is not None and watch.paused:
        lines.append("The watch is paused in the SearchDesk app: these results are not being refreshed.")
    data: dict[str, Any] = {
        "known": counts.known,
        "inspected": counts.inspected,
        "not_inspected": waiting,
        "oldest": counts.oldest.isoformat(timespec="seconds") if counts.oldest else None,
        "newest": counts.newest.isoformat(timespec="seconds") if counts.newest else None,
        "paused": bool(watch and watch.paused),
        "next_pass": watch.next_pass.isoformat(timespec="seconds") if watch and watch.next_pass else None,
    }
    return "\n".join(lines), data


def _counts_table(title: str, counts: dict[str, int]) -> str:
    rows = [[sh.cell(k or "(none)"), sh.cell(v)] for k, v in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]
    return sh.md_table([title, "Pages"], rows)


def _page_entry(page: Page) -> dict[str, Any]:
    result = page.result
    assert result is not None and page.inspected_at is not None  # only inspected pages are listed
    return sh.record(
        {
            "url": page.url,
            "verdict": result.verdict,
            "coverage": result.coverage,
            "last_crawl": result.last_crawl,
            "google_canonical": result.google_canonical,
            "user_canonical": result.user_canonical,
            "inspected_at": page.inspected_at.isoformat(timespec="seconds"),
            "why": page.why.words(),
        }
    )


def _change_entry(change: Change) -> dict[str, Any]:
    return sh.record(
        {
            "url": change.url,
            "when": change.changed_at.isoformat(timespec="seconds"),
            "from": {"verdict": change.from_verdict, "coverage": change.from_coverage},
            "to": {"verdict": change.to_verdict, "coverage": change.to_coverage},
        }
    )


def _state_of(raw: str, counts: Counts) -> tuple[str | None, str | None]:
    """(coverage state, verdict) the `state` argument names: a verdict, or a coverage state as the
    counts list it (case, dashes and curly quotes aside: Google writes ‘noindex’, people type 'noindex')."""
    if raw.upper() in VERDICTS:
        return None, raw.upper()

    def key(s: str) -> str:
        return " ".join(s.casefold().translate(_LOOSE).split())

    for state in counts.by_coverage:
        if key(state) == key(raw):
            return state, None
    raise ToolFailure(
        "state: no inspected page of this property is in that state. Give a coverage state exactly as this tool's "
        "counts list it (call it with only site), or a verdict: PASS, PARTIAL, FAIL or NEUTRAL."
    )


def _paged(out: Output, start_row: int, total: int) -> Output:
    """Where the next page starts when this one did not reach the end (said in the text too)."""
    shown = int(out.data.get("shown", out.data.get("count", 0)))
    if start_row + shown < total:
        out.data["next_start_row"] = start_row + shown
        if f"start_row={start_row + shown}" not in out.text:
            out.text += f"\n\n{total - start_row - shown:,} more: call again with start_row={start_row + shown}."
    return out


async def index_coverage(call: Call) -> Output:
    site = call.site()
    since = _since(call.args.get("since"))
    start_row = int(call.args.get("start_row", 0))
    try:
        store = await open_watch(call, site, confirm=True)
    except CoverageDamaged:
        raise ToolFailure(
            "SearchDesk's record of this watch could not be read; the SearchDesk app sets a damaged record aside "
            f"and recovers what it can when it next starts. {ONE_PAGE_NOW}"
        ) from None
    if store is None:
        own = call.config.credential.kind not in ("desktop", "demo")
        return _no_watch(site, OWN_CREDENTIALS if own else "the watch is switched off")
    try:
        return await anyio.to_thread.run_sync(_answer, store, call, site, since, start_row)
    finally:
        store.close()


def _answer(store: CoverageStore, call: Call, site: str, since: dt.datetime | None, start_row: int) -> Output:
    watch = store.watch(site)
    if watch is None or not watch.switched_on:
        return _no_watch(site, "the watch is switched off for this property")
    counts = store.counts(site)
    if counts.inspected == 0:
        return _no_watch(site, "the watch is on, but its first pass over the pages has not begun yet")
    opening, data = _summary(counts, watch)
    data = {"site": site, **data}
    if since is not None:
        changes, total = store.changed_since(site, since, limit=PAGE, offset=start_row)
        out = listing(
            entries=[_change_entry(c) for c in changes],
            headers=["When (UTC)", "Page", "Was", "Now"],
            row=lambda e: [
                sh.cell(e["when"][:16].replace("T", " ")),
                sh.cell(e["url"], 300),
                sh.cell(f"{e['from']['verdict']} — {e['from']['coverage']}"),
                sh.cell(f"{e['to']['verdict']} — {e['to']['coverage']}"),
            ],
            intro=f"{plural(total, 'change')} of verdict or coverage state since {since.date()}, "
            "newest first" + (f", from row {start_row:,}" if start_row else "") + ":",
            key="changes",
            narrow=lambda shown: f"Call again with start_row={start_row + shown} for older changes.",
            noun="changes",
            extra={**data, "since": since.date().isoformat(), "total": total, "start_row": start_row},
        )
        out.opening = opening
        return _paged(out, start_row, total)
    state = call.args.get("state")
    if state is not None:
        coverage, verdict = _state_of(str(state), counts)
        pages, total = store.pages(site, coverage=coverage, verdict=verdict, offset=start_row, limit=PAGE)
        out = listing(
            entries=[_page_entry(p) for p in pages],
            headers=["Page", "Verdict", "Coverage", "Last crawl", "Inspected (UTC)"],
            row=lambda e: [
                sh.cell(e["url"], 300),
                sh.cell(e["verdict"]),
                sh.cell(e["coverage"]),
                sh.cell(e["last_crawl"][:10]),
                sh.cell(e["inspected_at"][:10]),
            ],
            intro=f"{plural(total, 'page')} in that state, by address"
            + (f", from row {start_row:,}" if start_row else "")
            + ":",
            key="pages",
            narrow=lambda shown: f"Call again with start_row={start_row + shown} for the next pages.",
            noun="pages",
            extra={**data, "state": coverage or verdict, "total": total, "start_row": start_row},
        )
        out.opening = opening
        return _paged(out, start_row, total)
    lines = [
        _counts_table("Verdict", counts.by_verdict),
        "",
        _counts_table("Coverage state", counts.by_coverage),
        "",
        "Give state for the pages in one state, or since (YYYY-MM-DD) for what changed.",
    ]
    data["by_verdict"] = sh.record(counts.by_verdict)
    data["by_coverage"] = sh.record(counts.by_coverage)
    return Output("\n".join(lines), data, opening=opening)
