"""The archive's figures for `make bench` (issue 28): a property with 20 million archived rows.

The fixture (16 months of one property: 486 days × 41,204 rows over the six tables) is built once
with the store's own `write_day` and kept between runs in ~/.cache/searchdesk-bench (or
$SEARCHDESK_BENCH_CACHE); building it takes minutes, measuring it seconds. Measured here:

- a year-over-year comparison by page (28 days against the same 28 days 52 weeks earlier, every
  page of both periods and the property totals, as compare_periods reads them), wall time;
- copying one day at Google's row limit (50,000 rows by page, by query and by query and page, plus
  the small tables) into a copy of that 16-month archive, as the daily copy adds a day, and also into
  a fresh file holding only the day before: CPU seconds, each in a process of its own;
- the file's size for those 16 months.

    python tests/bench/archive.py [--rounds 5] [--json]
    python tests/bench/archive.py --copy-only [--rounds 5]   # only the daily copy's CPU, both files
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
if str(REPO / "server") not in sys.path:
    sys.path.insert(0, str(REPO / "server"))

from searchdesk_server.archive.store import ROW_LIMIT, Archive  # noqa: E402

SITE = "sc-domain:bench.example"
DAYS = 486  # 16 months
LAST = dt.date(2026, 11, 1)
FIRST = LAST - dt.timedelta(days=DAYS - 1)
PER_DAY = {"totals": 1, "device": 3, "country": 200, "page": 8_000, "query": 12_000, "query_page": 21_000}
PAGES = 30_000
QUERIES = 200_000
VERSION = 1


def cache_folder() -> Path:
    base = os.environ.get("SEARCHDESK_BENCH_CACHE") or str(Path.home() / ".cache" / "searchdesk-bench")
    return Path(base)


def _row(rnd: random.Random, keys: list[str] | None) -> dict[str, Any]:
    impressions = 1 + int(rnd.paretovariate(1.3))
    clicks = min(impressions, int(impressions * rnd.random() * 0.3))
    row: dict[str, Any] = {
        "clicks": clicks,
        "impressions": impressions,
        "ctr": clicks / impressions,
        "position": round(1 + rnd.random() * 40, 2) if impressions > 1 else float(rnd.randint(1, 60)),
    }
    if keys is not None:
        row["keys"] = keys
    return row


def day_tables(day: dt.date, per_day: dict[str, int] = PER_DAY) -> dict[str, list[dict[str, Any]]]:
    """One day's six tables, deterministic: pages and queries drawn from fixed pools, shifting slowly."""
    rnd = random.Random(day.toordinal())
    shift = day.toordinal() * 7
    many = max(PAGES, per_day["page"])  # at Google's row limit a day has more pages than the pool
    pages = [f"https://bench.example/articles/{(shift + i * 3) % many}/some-words-of-a-slug" for i in range(many)]
    queries = [f"how to bench query {(shift * 11 + i * 7) % QUERIES} words" for i in range(QUERIES)]
    return {
        "totals": [_row(rnd, None) for _ in range(per_day["totals"])],
        "device": [_row(rnd, [d]) for d in ("DESKTOP", "MOBILE", "TABLET")[: per_day["device"]]],
        "country": [_row(rnd, [f"c{i:03d}"]) for i in range(per_day["country"])],
        "page": [_row(rnd, [pages[i]]) for i in range(per_day["page"])],
        "query": [_row(rnd, [queries[i]]) for i in range(per_day["query"])],
        "query_page": [_row(rnd, [queries[i % QUERIES], pages[i % 9_000]]) for i in range(per_day["query_page"])],
    }


def fixture(log: Any = None) -> Path:
    """The 20-million-row archive, built once (a `.ready` mark says it is whole), with its whole months
    summed as the app sums them once they have left Google's 16 months (`Archive.roll_up`): the reports
    read these months from the archive only then, so that is the state they meet."""
    folder = cache_folder()
    path = folder / f"archive-20m-v{VERSION}.sqlite3"
    ready = path.with_suffix(".ready")
    if ready.exists() and path.exists():
        with Archive.open(path) as archive:
            archive.roll_up(SITE, "web", LAST + dt.timedelta(days=1))  # nothing to do once done
        return path
    folder.mkdir(parents=True, exist_ok=True)
    for stale in folder.glob(f"{path.name}*"):
        stale.unlink()
    started = time.monotonic()
    with Archive.open(path) as archive:
        for n in range(DAYS):
            day = FIRST + dt.timedelta(days=n)
            archive.write_day(SITE, day, "web", day_tables(day))
            if log and n % 50 == 0:
                log(f"archive fixture: day {n + 1}/{DAYS} ({time.monotonic() - started:.0f} s)")
        archive.roll_up(SITE, "web", LAST + dt.timedelta(days=1))
        archive._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    ready.write_text(json.dumps({"rows": DAYS * sum(PER_DAY.values()), "built_s": time.monotonic() - started}))
    return path


def yoy_by_page(path: Path) -> int:
    """compare_periods' reads: every page of both periods (pages of 25,000 rows) and the totals, the
    two periods at once as the report reads them (`read_period` runs in worker threads, each with
    its own connection, as the server's reader opens one per request)."""
    from concurrent.futures import ThreadPoolExecutor

    now_start = LAST - dt.timedelta(days=27)

    def period(start: dt.date) -> int:
        end = start + dt.timedelta(days=27)
        archive = Archive.open_readonly(path)
        assert archive is not None
        try:
            rows = at = 0
            while True:
                got = archive.query(SITE, start, end, ["page"], "web", row_limit=25_000, start_row=at).rows
                rows += len(got)
                if len(got) < 25_000:
                    break
                at += 25_000
            archive.query(SITE, start, end, [], "web")
            return rows
        finally:
            archive.close()

    with ThreadPoolExecutor(2) as pool:
        return sum(pool.map(period, (now_start, now_start - dt.timedelta(days=364))))


def sum_a_month_cpu(path: Path) -> float:
    """Our CPU to sum one month of the page table once, as the copier does when the month leaves Google's
    16 months (`Archive.roll_up`): March 2026's sums are dropped and made again, in the fixture itself."""
    from searchdesk_server.archive import months

    with Archive.open(path) as archive:
        part = archive._part(SITE, "web", "page", create=False)
        assert part is not None
        archive._conn.execute("BEGIN IMMEDIATE")
        months.drop(archive._conn, part, dt.date(2026, 3, 1))
        archive._conn.execute("COMMIT")
        started = time.process_time()
        summed = archive.roll_up(SITE, "web", LAST + dt.timedelta(days=1))
        cpu = time.process_time() - started
    assert summed == 1
    return cpu


def copy_day_cpu(folder: Path, into: str = "") -> tuple[float, int]:
    """CPU seconds of write_day for one day at Google's row limit.

    Into `into` (a copy of the 16-month fixture, where nearly every page and query is already kept),
    or else into a fresh file (where most of the day's pages and queries are new to it); either way
    the same process has just written the day before, as the app's copier goes day after day."""
    limit = {**PER_DAY, "page": ROW_LIMIT, "query": ROW_LIMIT, "query_page": ROW_LIMIT}
    path = folder / "copy.sqlite3"
    if into:
        shutil.copyfile(into, path)
        day = LAST + dt.timedelta(days=2)
    else:
        day = LAST
    with Archive.open(path) as archive:
        # The day before, by the same copier (as the app copies day after day in one process).
        archive.write_day(SITE, day - dt.timedelta(days=1), "web", day_tables(day - dt.timedelta(days=1), limit))
        tables = day_tables(day, limit)
        started = time.process_time()
        archive.write_day(SITE, day, "web", tables)
        cpu = time.process_time() - started
    return cpu, sum(len(t) for t in tables.values())


def copy_day_in_a_fresh_process(into: str = "") -> tuple[float, int]:
    """`copy_day_cpu` in a process of its own, as the app's copier runs: with the bench's own objects
    (the 25,000-row answers, the peers' results) in the same heap, every collection the copy's
    allocations start walks them too, and the figure would be the bench's rather than the copy's."""
    import subprocess

    code = (
        "import json, sys, tempfile; from pathlib import Path; "
        "from tests.bench.archive import copy_day_cpu; "
        "t = tempfile.TemporaryDirectory(); print(json.dumps(copy_day_cpu(Path(t.name), sys.argv[1]))); t.cleanup()"
    )
    done = subprocess.run([sys.executable, "-c", code, into], cwd=REPO, capture_output=True, text=True, check=True)
    cpu, rows = json.loads(done.stdout)
    return float(cpu), int(rows)


def measure(rounds: int = 5, log: Any = None) -> dict[str, Any]:
    path = fixture(log)
    size = sum(os.path.getsize(p) for p in (path, Path(f"{path}-wal")) if p.exists())
    yoy: list[float] = []
    rows = 0
    for _ in range(rounds):
        started = time.perf_counter()
        rows = yoy_by_page(path)
        yoy.append(time.perf_counter() - started)
    from tests.bench.report_reads import scenarios

    reports: dict[str, list[float]] = {}
    report_rows: dict[str, int] = {}
    for name, run in scenarios(path, SITE, FIRST, LAST).items():
        for _ in range(rounds):
            started = time.perf_counter()
            report_rows[name] = run()
            reports.setdefault(name, []).append(time.perf_counter() - started)
    month: list[float] = []
    for _ in range(rounds):
        month.append(sum_a_month_cpu(path))
    copy: list[float] = []
    fresh: list[float] = []
    copied_rows = 0
    for _ in range(rounds):
        cpu, copied_rows = copy_day_in_a_fresh_process(str(path))
        copy.append(cpu)
        fresh.append(copy_day_in_a_fresh_process()[0])
    return {
        "rows": DAYS * sum(PER_DAY.values()),
        "days": DAYS,
        "size_bytes": size,
        "yoy_by_page_s": _summary(yoy),
        "yoy_rows": rows,
        "copy_day_cpu_s": _summary(copy),
        "copy_day_fresh_cpu_s": _summary(fresh),
        "copy_day_rows": copied_rows,
        "reports_s": {name: _summary(values) for name, values in reports.items()},
        "sum_month_cpu_s": _summary(month),
        "report_rows": report_rows,
        "rounds": rounds,
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }


def measure_copy(rounds: int = 5, log: Any = None) -> dict[str, Any]:
    """Only the copy's figures (`measure`'s copy rounds, the same scenario), for working on the copy
    without the comparisons' and reports' minutes."""
    path = fixture(log)
    copy: list[float] = []
    fresh: list[float] = []
    for _ in range(rounds):
        copy.append(copy_day_in_a_fresh_process(str(path))[0])
        fresh.append(copy_day_in_a_fresh_process()[0])
    return {"copy_day_cpu_s": _summary(copy), "copy_day_fresh_cpu_s": _summary(fresh), "rounds": rounds}


def _summary(values: list[float]) -> dict[str, float]:
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def markdown(result: dict[str, Any]) -> str:
    """The archive's section of docs/performance.md."""
    y, c = result["yoy_by_page_s"], result["copy_day_cpu_s"]
    f = result.get("copy_day_fresh_cpu_s")
    mib = result["size_bytes"] / 2**20
    fresh = (
        [
            f"| the same day into a fresh file holding only the day before (most pages and queries new to it) "
            f"| {f['median']:.3f} s ({f['min']:.3f}–{f['max']:.3f}) | — |"
        ]
        if f
        else []
    )
    return "\n".join(
        [
            "## The archive (issue 28)",
            "",
            f"One property, {result['days']} days (16 months), {result['rows']:,} archived rows over the six "
            f"tables; median of {result['rounds']} rounds, range in brackets.",
            "",
            "| measurement | result | target |",
            "|---|---|---|",
            f"| year over year by page (28 days vs 52 weeks earlier, {result['yoy_rows']:,} page rows + totals) "
            f"| {y['median']:.3f} s ({y['min']:.3f}–{y['max']:.3f}) | ≤ 1 s |",
            f"| copying one day at Google's row limit ({result['copy_day_rows']:,} rows) into the 16-month "
            f"archive, our CPU | {c['median']:.3f} s ({c['min']:.3f}–{c['max']:.3f}) | ≤ 0.5 s |",
            *fresh,
            f"| the file for 16 months | {mib:,.0f} MiB | ≤ 1 GB |",
            *(
                f"| `{name}`: its reads and its arithmetic ({result['report_rows'][name]:,} rows) "
                f"| {r['median']:.3f} s ({r['min']:.3f}–{r['max']:.3f}) | ≤ 1 s |"
                for name, r in result.get("reports_s", {}).items()
            ),
            *(
                [
                    "| summing one month of pages once it has left Google's 16 months (the copier, once a month), "
                    f"our CPU | {m['median']:.3f} s ({m['min']:.3f}–{m['max']:.3f}) | — |"
                ]
                if (m := result.get("sum_month_cpu_s"))
                else []
            ),
            "",
            "Measured on the store (`tests/bench/archive.py`), as the server's reader and the app's copier "
            "call it. The comparison is `Archive.query` for every page of both periods (pages of 25,000 rows) "
            "and both periods' totals, the two periods in two threads as compare_periods reads them, wall "
            "time, in the bench's process. The copy is `write_day` of one day whose tables by page, by query "
            "and by query and page each hold 50,000 rows, `time.process_time()` around it, each round in a "
            "process of its own as the app's copier runs (in the bench's process its heap would slow every "
            "collection): into a copy of the 16-month fixture, the day after its last (the daily copy), and "
            "into a fresh file. The fixture is built once with `write_day` and kept in "
            "~/.cache/searchdesk-bench, with its whole months summed as the copier sums them once they have left "
            "Google's 16 months (`Archive.roll_up`): the reports read months from the archive only then. Each "
            "report makes its reads as its reader does (`tests/bench/report_reads.py`): pages asked three at a "
            "time in worker threads, typed, and summed on the calling thread. SQLite keeps no memory "
            "statistics in the bench's process, as in the server's (`sqlite_memory.py`). Load average after "
            "the run: "
            + " / ".join(str(x) for x in result.get("load_average", []))
            + " (this 2-core machine was shared with other work).",
            "",
        ]
    )


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--copy-only", action="store_true", help="only the daily copy's CPU (both files)")
    args = parser.parse_args()
    from searchdesk_server import sqlite_memory

    sqlite_memory.statistics_off()  # as the server's main does (run.py too)
    if args.copy_only:
        print(json.dumps(measure_copy(args.rounds, log=lambda m: print(m, file=sys.stderr, flush=True)), indent=2))
        return 0
    result = measure(args.rounds, log=lambda m: print(m, file=sys.stderr, flush=True))
    print(json.dumps(result, indent=2) if args.json else markdown(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
