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

from searchdesk_server.coverage.records import PageResult, WatchState, Why  # noqa: E402
from searchdesk_server.coverage.store import CoverageStore  # noqa: E402
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


# -- the sitemap reader and the idle watcher (issue 37's "fast and small") ---------------------------

#: The issue's targets for a 50,000-URL, 50 MB sitemap and for the idle watcher.
SITEMAP_CPU_S = 1.0
SITEMAP_EXTRA_MIB = 64.0
IDLE_WAKES_PER_MINUTE = 1.0


def big_sitemap() -> tuple[bytes, list[str]]:
    """50,000 pages with a dozen language alternates each, padded to 50 MB: the shape
    tests/desktop/coverage's time-and-memory test reads (the most elements a real 50 MB file is likely
    to hold)."""
    pad = "".join(
        f'<xhtml:link rel="alternate" hreflang="l{n}" href="https://site.test/l{n}/page"/>' for n in range(12)
    )
    pages = [f"https://site.test/products/item-{n:06d}" for n in range(50_000)]
    body = "".join(f"<url><loc>{u}</loc>{pad}</url>\n" for u in pages)
    xml = (
        '<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns:xhtml="http://www.w3.org/1999/xhtml" '
        f'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n{body}</urlset>\n'
    ).encode()
    fill = 50_000_000 - len(xml)
    return xml.replace(b"</urlset>", b" " * fill + b"</urlset>"), pages


def _rss_bytes() -> int:
    """This process's resident memory now (Linux's /proc; 0 where there is none)."""
    try:
        with open("/proc/self/statm", encoding="ascii") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        return 0


def measure_sitemap(rounds: int = 5) -> dict[str, Any]:
    """The real reader over HTTPS on loopback from the tests' fake website: a 50 MB, 50,000-URL sitemap.

    Each round is timed (wall, and the reading thread's CPU: ``time.thread_time``, which leaves out the
    fake website's own threads in this process); one more round runs under tracemalloc for the peak of
    Python's allocations. RSS growth is this process's resident memory after the timed rounds less
    before the first (the body itself is already resident: it is the website's)."""
    import tempfile
    import tracemalloc

    for path in (REPO / "desktop", REPO):
        if str(path) not in sys.path:
            sys.path.insert(0, str(path))
    from searchdesk_desktop.keeping.coverage_sitemaps import SitemapReader
    from tests.desktop.coverage.website import Route, Website

    body, pages = big_sitemap()
    with tempfile.TemporaryDirectory(prefix="searchdesk-bench-") as folder:
        web = Website(Path(folder) / "pki")
        try:
            web.routes["/big.xml"] = Route(body)
            walls: list[float] = []
            cpus: list[float] = []

            def resolve(host: str, port: int) -> list[tuple[str, int]]:
                return [("127.0.0.1", web.port)]

            reader = SitemapReader(
                "sc-domain:site.test", resolver=resolve, allow_loopback=True, ssl_context=web.client_context
            )
            with reader:
                rss_before = _rss_bytes()
                for _ in range(rounds):
                    wall, cpu = time.perf_counter(), time.thread_time()
                    got = reader.read_file("https://site.test/big.xml")
                    cpus.append(time.thread_time() - cpu)
                    walls.append(time.perf_counter() - wall)
                    if got.urls != pages:
                        raise AssertionError("the reader did not give the sitemap's 50,000 pages")
                    del got
                rss_growth = _rss_bytes() - rss_before
                tracemalloc.start()
                reader.read_file("https://site.test/big.xml")
                peak = tracemalloc.get_traced_memory()[1]
                tracemalloc.stop()
        finally:
            web.close()
    return {
        "bytes": len(body),
        "urls": len(pages),
        "rounds": rounds,
        "cpu_s": _summary(cpus),
        "wall_s": _summary(walls),
        "peak_mib": peak / 2**20,
        "rss_growth_mib": rss_growth / 2**20,
    }


def measure_idle(seconds: float = 15.0) -> dict[str, Any]:
    """The watcher idle with nothing to do, its real loop on its real thread with the real one-minute
    sleep, in a process of its own (so no other thread's wake-ups are counted): after its first round,
    every time one of its threads is woken in ``seconds`` is counted by Linux (each thread's voluntary
    context switches, /proc/self/task) and scaled to a minute."""
    import subprocess

    out = subprocess.run(
        [sys.executable, str(Path(__file__)), "--idle-child", str(seconds)],
        check=True,
        capture_output=True,
        text=True,
        timeout=seconds + 60,
    )
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def _switches(skip: int) -> int:
    """Voluntary context switches (each one a sleep the thread was woken from) of this process's
    threads other than ``skip``."""
    total = 0
    for task in Path("/proc/self/task").iterdir():
        if int(task.name) == skip:
            continue
        try:
            status = (task / "status").read_text(encoding="ascii")
        except OSError:  # the thread ended
            continue
        for line in status.splitlines():
            if line.startswith("voluntary_ctxt_switches:"):
                total += int(line.split()[1])
    return total


def _idle_child(seconds: float) -> dict[str, Any]:
    import tempfile
    import threading

    for path in (REPO / "desktop", REPO):
        if str(path) not in sys.path:
            sys.path.insert(0, str(path))
    from searchdesk_desktop.keeping.coverage_sync import IDLE_SECONDS, CoverageSync
    from searchdesk_server.quota import QuotaBook

    def no_token(*_: object) -> str:
        raise AssertionError("an idle watcher with no account asks for no token")

    with tempfile.TemporaryDirectory(prefix="searchdesk-bench-") as folder:
        sync = CoverageSync(lambda account: CoverageStore.in_memory(), QuotaBook(Path(folder) / "quota.json"), no_token)
        sync.start()
        try:
            deadline = time.monotonic() + 10
            while sync.wakes < 1 and time.monotonic() < deadline:
                time.sleep(0.05)
            time.sleep(0.5)  # its first round (nothing to do) over, it is asleep
            me = threading.get_native_id()
            before, rounds = _switches(me), sync.wakes
            time.sleep(seconds)
            woken, rounds = _switches(me) - before, sync.wakes - rounds
        finally:
            sync.stop()
    return {
        "seconds": seconds,
        "idle_s": IDLE_SECONDS,
        "woken": woken,
        "rounds": rounds,
        "wakes_per_minute": woken * 60 / seconds,
    }


def sitemap_markdown(result: dict[str, Any]) -> list[str]:
    """The reader's and the idle watcher's rows (under the coverage section)."""
    lines: list[str] = []
    s = result.get("sitemap")
    if s:
        c, w = s["cpu_s"], s["wall_s"]
        lines += [
            "",
            f"Reading a {s['urls']:,}-URL, {s['bytes'] / 1e6:.0f} MB sitemap (a dozen language alternates a page) "
            "with the app's reader from a website over HTTPS on loopback; median of "
            f"{s['rounds']} rounds, range in brackets. The target is judged on the reading thread's CPU time "
            "(the website's own threads share this machine's two cores and are left out); wall time is shown "
            "beside it.",
            "",
            "| measurement | result | target | verdict |",
            "|---|---|---|---|",
            f"| CPU time of the reading thread | {c['median']:.2f} s ({c['min']:.2f}–{c['max']:.2f}) "
            f"| ≤ {SITEMAP_CPU_S:.0f} s | {_verdict(c['median'] <= SITEMAP_CPU_S)} |",
            f"| wall time | {w['median']:.2f} s ({w['min']:.2f}–{w['max']:.2f}) | (shown) | |",
            f"| extra memory, peak of Python's allocations (tracemalloc) | {s['peak_mib']:.1f} MiB "
            f"| ≤ {SITEMAP_EXTRA_MIB:.0f} MiB | {_verdict(s['peak_mib'] <= SITEMAP_EXTRA_MIB)} |",
            f"| extra memory, growth of resident memory over the rounds | {s['rss_growth_mib']:.1f} MiB "
            f"| ≤ {SITEMAP_EXTRA_MIB:.0f} MiB | {_verdict(s['rss_growth_mib'] <= SITEMAP_EXTRA_MIB)} |",
        ]
    i = result.get("idle")
    if i:
        lines += [
            "",
            f"The watcher idle (nothing due): its real loop and thread with the real {i['idle_s']:.0f} s sleep, in "
            f"a process of its own; every time Linux woke one of its threads in {i['seconds']:.0f} s is counted "
            "(voluntary context switches) and scaled to a minute. The window starts after its first round, so "
            "the one wake a minute, at the sleep's end, falls after it; anything that polls falls inside.",
            "",
            "| measurement | result | target | verdict |",
            "|---|---|---|---|",
            f"| wake-ups a minute when idle | {i['wakes_per_minute']:.0f} ({i['woken']} in {i['seconds']:.0f} s) "
            f"| ≤ {IDLE_WAKES_PER_MINUTE:.0f} | {_verdict(i['wakes_per_minute'] <= IDLE_WAKES_PER_MINUTE)} |",
        ]
    return lines


def _verdict(met: bool) -> str:
    return "met" if met else "**missed**"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--sitemap", action="store_true", help="only the reader's and the idle watcher's figures")
    parser.add_argument("--idle-seconds", type=float, default=15.0)
    parser.add_argument("--idle-child", type=float, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.idle_child is not None:
        print(json.dumps(_idle_child(args.idle_child)))
        return 0
    if args.sitemap:
        fast = {"sitemap": measure_sitemap(args.rounds), "idle": measure_idle(args.idle_seconds)}
        print(json.dumps(fast, indent=2) if args.json else "\n".join(sitemap_markdown(fast)))
        return 0
    result = measure(args.rounds, log=lambda m: print(m, file=sys.stderr, flush=True))
    print(json.dumps(result, indent=2) if args.json else markdown(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
