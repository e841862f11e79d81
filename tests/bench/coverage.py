"""The coverage watch's figures for `make bench` (issue 37): a property with 100,000 watched pages and
a year of their history.

The fixture is built with the store's own API (`add_pages`, `record`) as the app's watcher writes it:
100,000 pages of one property, inspected every 7 days for a year in 52 passes; about one page in eight
changes verdict or coverage state between passes, so the year holds some 650,000 changes. It is built
once and kept in ~/.cache/searchdesk-bench (or $SEARCHDESK_BENCH_CACHE). Measured, wall time in the
bench's process, as `index_coverage` calls them:

- the counts for the property (`CoverageStore.counts`: known, inspected, by verdict and by state);
- the pages changed since a date a year back (`changed_since`, its count and the newest 1,000 the
  answer reads).

    python tests/bench/coverage.py [--rounds 5] [--json]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
for _path in (REPO / "server", REPO):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

from searchdesk_server.coverage.store import CoverageStore, PageResult, WatchState, Why  # noqa: E402
from tests.bench.archive import cache_folder  # noqa: E402

SITE = "sc-domain:bench.example"
PAGES = 100_000
PASSES = 52  # a year of weekly passes
CHANGE_SHARE = 0.125
START = dt.datetime(2025, 11, 1, tzinfo=dt.UTC)
VERSION = 2
STATES = (
    PageResult("PASS", "Submitted and indexed"),
    PageResult("PASS", "Indexed, not submitted in sitemap"),
    PageResult("NEUTRAL", "Crawled - currently not indexed"),
    PageResult("NEUTRAL", "Discovered - currently not indexed"),
    PageResult("NEUTRAL", "Excluded by ‘noindex’ tag"),
    PageResult("NEUTRAL", "Page with redirect"),
    PageResult("FAIL", "Not found (404)"),
    PageResult("NEUTRAL", "Duplicate without user-selected canonical"),
    PageResult("NEUTRAL", "Alternate page with proper canonical tag"),
    PageResult("NEUTRAL", "Blocked by robots.txt"),
    PageResult("FAIL", "Soft 404"),
    PageResult("FAIL", "Server error (5xx)"),
)


def fixture(log: Any = None) -> Path:
    """The 100,000-page, one-year store (built on first use, then kept)."""
    path = cache_folder() / f"coverage-v{VERSION}.sqlite3"
    if path.exists():
        return path
    if log:
        log(f"coverage bench: building the {PAGES:,}-page, one-year fixture once ({path})")
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    for leftover in (partial, Path(f"{partial}-wal"), Path(f"{partial}-shm")):
        leftover.unlink(missing_ok=True)
    rnd = random.Random(37)
    urls = [f"https://bench.example/section-{i % 40}/page-{i:06d}" for i in range(PAGES)]
    state = [rnd.randrange(len(STATES)) for _ in urls]
    with CoverageStore.open(partial) as store:
        store.set_watch(SITE, WatchState(True, pass_started=START))
        store.add_pages(SITE, urls, Why.SITEMAP, now=START)
        conn = store._conn
        for week in range(PASSES):
            conn.execute("BEGIN")  # one transaction a pass: the watcher's own writes are one a page
            for i, url in enumerate(urls):
                if week and rnd.random() < CHANGE_SHARE:
                    state[i] = rnd.randrange(len(STATES))
                when = START + dt.timedelta(days=7 * week, seconds=i * 6)
                _record(conn, url, STATES[state[i]], when)
            conn.execute("COMMIT")
    partial.rename(path)
    for suffix in ("-wal", "-shm"):
        side = Path(f"{partial}{suffix}")
        if side.exists():
            side.rename(Path(f"{path}{suffix}"))
    return path


def _record(conn: Any, url: str, result: PageResult, when: dt.datetime) -> None:
    """`CoverageStore.record`'s writes, inside the pass's transaction (the same rows and change rows)."""
    stamp = when.timestamp()
    row = conn.execute(
        "SELECT verdict, coverage, inspected_at FROM pages WHERE site=? AND url=?", (SITE, url)
    ).fetchone()
    conn.execute(
        "UPDATE pages SET inspected_at=?, verdict=?, coverage=? WHERE site=? AND url=?",
        (stamp, result.verdict, result.coverage, SITE, url),
    )
    if row[2] is not None and (row[0], row[1]) != (result.verdict, result.coverage):
        conn.execute(
            "INSERT INTO changes VALUES(?,?,?,?,?,?,?)",
            (SITE, url, stamp, row[0], result.verdict, row[1], result.coverage),
        )


def measure(rounds: int = 5, log: Any = None) -> dict[str, Any]:
    path = fixture(log)
    store = CoverageStore.open_readonly(path)
    assert store is not None
    since = START + dt.timedelta(days=1)
    counts: list[float] = []
    changed: list[float] = []
    with store:
        known = store.counts(SITE).known
        total = 0
        for _ in range(rounds):
            started = time.perf_counter()
            store.counts(SITE)
            counts.append(time.perf_counter() - started)
            started = time.perf_counter()
            _, total = store.changed_since(SITE, since, limit=1_000)
            changed.append(time.perf_counter() - started)
    return {
        "pages": known,
        "changes": total,
        "counts_s": _summary(counts),
        "changed_since_s": _summary(changed),
        "rounds": rounds,
        "size_bytes": sum(os.path.getsize(p) for p in (path, Path(f"{path}-wal")) if p.exists()),
    }


def _summary(values: list[float]) -> dict[str, float]:
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def markdown(result: dict[str, Any]) -> str:
    """The coverage watch's section of docs/performance.md."""
    c, s = result["counts_s"], result["changed_since_s"]
    return "\n".join(
        [
            "## The coverage watch (issue 37)",
            "",
            f"One property, {result['pages']:,} watched pages inspected weekly for a year "
            f"({result['changes']:,} changes of verdict or state); median of {result['rounds']} rounds, range "
            f"in brackets; the file is {result['size_bytes'] / 2**20:,.0f} MiB.",
            "",
            "| measurement | result | target |",
            "|---|---|---|",
            f"| the counts for the property | {c['median']:.3f} s ({c['min']:.3f}–{c['max']:.3f}) | ≤ 0.1 s |",
            f"| pages changed since a date a year back (count + newest 1,000) | {s['median']:.3f} s "
            f"({s['min']:.3f}–{s['max']:.3f}) | ≤ 0.2 s |",
            "",
            "Measured on the store (`tests/bench/coverage.py`) as `index_coverage` calls it, wall time.",
            "",
        ]
    )


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = measure(args.rounds, log=lambda m: print(m, file=sys.stderr, flush=True))
    print(json.dumps(result, indent=2) if args.json else markdown(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
