"""Tool calls measured end to end: our server as a real stdio subprocess, the fake Google over loopback
HTTPS through its CONNECT proxy (the path a user behind a company proxy takes), and the reference agent
standing in for the desktop app. Each function is one run of one scenario; run.py interleaves them.

Every scenario first makes one small call in the fresh process, so the figure measured is the steady
state of a conversation (modules imported, token fetched, TLS connection open); that first call's own
cost is reported separately where it matters.
"""

from __future__ import annotations

import asyncio
import contextlib
import cProfile
import datetime as dt
import json
import os
import pstats
import shutil
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from tests.bench.stdio import ServerFailed, StdioSession
from tests.fakegoogle import FakeGoogle, bodies

SITE = "https://www.example.com/"
ANALYTICS_PATTERN = r"/searchAnalytics/query$"
JSON_HEADERS = [("content-type", "application/json; charset=UTF-8")]
ANALYTICS_ROWS = 25_000
ANALYTICS_ARGS: dict[str, Any] = {
    "site": SITE,
    "dimensions": ["query", "page", "date"],
    "period": "last16months",
    "row_limit": ANALYTICS_ROWS,
}
BATCH_URLS = [f"{SITE}guides/bench-{i:02d}" for i in range(20)]
BATCH_LATENCY = 0.3
BENCH_SITEMAP = f"{SITE}bench-sitemap.xml"


# --------------------------------------------------------------------------------------------------
# The fake Google, with per-request latency and a count of requests in flight


@dataclass
class Seen:
    method: str
    path: str
    start: float  # perf_counter when the request reached the API layer
    end: float
    status: int


class Latency:
    """Wraps the fake's API (what sits behind its token and scope checks): sleeps `latency` seconds
    per request before answering, counts requests in flight, and can answer chosen requests 429.

    Uses the fake's public `backend.api` hook, so the fake itself is unchanged. The demo behind it
    is not thread-safe, so the answer itself is computed under a lock; the sleep is not.
    """

    def __init__(self, inner: Callable[[httpx.Request], httpx.Response]) -> None:
        self.inner = inner
        self._lock = threading.Lock()
        self._demo = threading.Lock()
        self.reset()

    def reset(self, latency: float = 0.0, fail: Callable[[int], bool] | None = None) -> None:
        with self._lock:
            self.latency = latency
            self.fail = fail
            self.count = 0
            self.in_flight = 0
            self.max_in_flight = 0
            self.seen: list[Seen] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        start = time.perf_counter()
        with self._lock:
            self.count += 1
            n = self.count
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            latency, fail = self.latency, self.fail
        response: httpx.Response | None = None
        try:
            if latency:
                time.sleep(latency)
            if fail is not None and fail(n):
                response = httpx.Response(429, content=bodies.encode(bodies.quota()), headers=dict(JSON_HEADERS))
            else:
                with self._demo:
                    response = self.inner(request)
                    response.read()
            return response
        finally:
            with self._lock:
                self.in_flight -= 1
                status = response.status_code if response is not None else 0
                self.seen.append(Seen(request.method, request.url.path, start, time.perf_counter(), status))


class Google:
    """One fake Google for the whole bench, its service-account key file, and the latency wrapper."""

    def __init__(self, folder: Path) -> None:
        self.fake = FakeGoogle(folder)
        self.api = Latency(self.fake.backend.api)
        self.fake.backend.api = self.api
        self.key_file = self.fake.service_account_file()

    def env(self, home: Path) -> dict[str, str]:
        return {**self.fake.env, "GSC_SERVICE_ACCOUNT_KEY_FILE": str(self.key_file), **home_env(home)}

    def script_analytics(self, body: bytes) -> None:
        """The next analytics query is answered with this document (no demo work in the timing), written
        as Google writes it: indented by default, compact when the request says prettyPrint=false."""
        doc = json.loads(body)
        self.fake.fail(ANALYTICS_PATTERN, status=200, body=doc, times=1, method="POST")

    def close(self) -> None:
        self.fake.close()


def home_env(home: Path) -> dict[str, str]:
    """A private home: the server's quota file and any peer's config land in the bench's temp folder."""
    return {
        "HOME": str(home),
        "XDG_DATA_HOME": str(home / "data"),
        "XDG_CONFIG_HOME": str(home / "config"),
        "XDG_CACHE_HOME": str(home / "cache"),
        "XDG_STATE_HOME": str(home / "state"),
    }


def analytics_body(rows: int = ANALYTICS_ROWS) -> bytes:
    """A real 25,000-row answer as the demo's Search Console writes it (its own vocabulary, real shape)."""
    from searchdesk_server.demo import DemoGoogle

    url = "https://searchconsole.googleapis.com/webmasters/v3/sites/https%3A%2F%2Fwww.example.com%2F/searchAnalytics/query"
    today = dt.date.today()
    query = {
        "startDate": (today - dt.timedelta(days=470)).isoformat(),
        "endDate": (today - dt.timedelta(days=4)).isoformat(),
        "dimensions": ANALYTICS_ARGS["dimensions"],
        "rowLimit": rows,
        "dataState": "all",
    }
    request = httpx.Request("POST", url, json=query, headers={"authorization": "Bearer bench"})
    demo = DemoGoogle()
    response = demo(request)
    body = response.read()
    if response.status_code != 200:
        raise RuntimeError(f"the demo refused the bench query: {body[:200]!r}")
    got = len(json.loads(body).get("rows", []))
    if got != rows:
        raise RuntimeError(f"the demo gave {got} rows, not {rows}")
    return body


# --------------------------------------------------------------------------------------------------
# Helpers


def is_error(result: dict[str, Any]) -> bool:
    return bool(result.get("isError"))


def text_of(result: dict[str, Any]) -> str:
    return "".join(c.get("text", "") for c in result.get("content", []) if c.get("type") == "text")


def compact_size(value: object) -> int:
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode())


def _expect_ok(result: dict[str, Any], what: str) -> None:
    if is_error(result):
        raise ServerFailed(f"{what} returned an error result: {text_of(result)[:300]}")


def _session(command: list[str], env: dict[str, str], logs: Path, name: str) -> StdioSession:
    logs.mkdir(parents=True, exist_ok=True)
    session = StdioSession(command, env, stderr=logs / f"{name}-{time.monotonic_ns()}.log")
    session.initialize()
    return session


# --------------------------------------------------------------------------------------------------
# 3 + 4. A 25,000-row answer: time, CPU, bytes, peak RSS


def analytics_run(google: Google, command: list[str], env: dict[str, str], body: bytes, logs: Path) -> dict[str, Any]:
    google.fake.clear_faults()
    small = json.dumps({"rows": json.loads(body)["rows"][:10], "responseAggregationType": "byPage"}).encode()
    with _session(command, env, logs, "analytics") as s:
        s.list_tools()
        rss_listed = s.peak_rss_mib()
        google.script_analytics(small)
        cpu0 = s.cpu_seconds()
        first = s.call_tool("query_search_analytics", {**ANALYTICS_ARGS, "row_limit": 10})
        first_cpu = s.cpu_since(cpu0)
        _expect_ok(first.result, "the first (small) analytics call")
        google.script_analytics(body)
        cpu0 = s.cpu_seconds()
        big = s.call_tool("query_search_analytics", ANALYTICS_ARGS)
        cpu = s.cpu_since(cpu0)
        rss_after = s.peak_rss_mib()
    _expect_ok(big.result, "the 25,000-row analytics call")
    structured = big.result.get("structuredContent") or {}
    if structured.get("count") != ANALYTICS_ROWS:
        raise ServerFailed(f"the server counted {structured.get('count')} rows, not {ANALYTICS_ROWS}")
    return {
        "wall_s": big.elapsed,
        "cpu_s": cpu,
        "first_call_wall_s": first.elapsed,
        "first_call_cpu_s": first_cpu,
        "rss_after_list_mib": rss_listed,
        "rss_after_call_mib": rss_after,
        "google_bytes": len(body),
        "text_bytes": len(text_of(big.result).encode()),
        "structured_bytes": compact_size(structured),
        "message_bytes": big.line_bytes,
        "rows_shown": structured.get("shown", structured.get("count")),
    }


def analytics_in_process(body: bytes, *, profile: bool = False) -> dict[str, Any]:
    """Where our CPU goes for the same answer, with no network: the handler on an in-memory transport
    (httpx + JSON decode + shape checks + cleaning + totals + budget), then to_result, then the SDK's
    own dump of the JSON-RPC message. Measured with time.process_time (this thread's process CPU)."""
    return asyncio.run(_in_process(body, profile))


async def _in_process(body: bytes, profile: bool) -> dict[str, Any]:
    from mcp_types import JSONRPCResponse

    from searchdesk_server import catalogue
    from searchdesk_server.config import load
    from searchdesk_server.result import to_result
    from searchdesk_server.runtime import Call, Runtime
    from searchdesk_server.validate import check_arguments

    def answer(request: httpx.Request) -> httpx.Response:
        # A body still to be streamed, as from a real connection (the client reads it raw, capped).
        return httpx.Response(200, headers=dict(JSON_HEADERS), stream=httpx.ByteStream(body))

    transport = httpx.MockTransport(answer)
    runtime = Runtime(load({}, demo_flag=True), transport=transport)
    spec = catalogue.BY_NAME["query_search_analytics"]
    handler = catalogue.resolve(spec.handler)

    async def once() -> dict[str, float]:
        marks = [time.process_time()]
        args = check_arguments(spec, ANALYTICS_ARGS)
        out = await handler(Call(spec, args, runtime))
        marks.append(time.process_time())
        result = to_result(out)
        marks.append(time.process_time())
        dumped = result.model_dump(by_alias=True, mode="json", exclude_none=True)
        JSONRPCResponse(jsonrpc="2.0", id=1, result=dumped).model_dump_json(by_alias=True, exclude_unset=True)
        marks.append(time.process_time())
        return {
            "tool_s": marks[1] - marks[0],
            "to_result_s": marks[2] - marks[1],
            "sdk_dump_s": marks[3] - marks[2],
            "total_s": marks[3] - marks[0],
        }

    try:
        await once()  # the first call builds the client and imports the tool module
        if not profile:
            return await once()
        profiler = cProfile.Profile()
        profiler.enable()
        stages = await once()
        profiler.disable()
        return {**stages, "profile": _profile_summary(profiler)}
    finally:
        await runtime.aclose()


_CATEGORIES = (
    ("JSON decode of Google's answer", ("json/decoder.py", "json/__init__.py:loads", "google/http.py:_decode")),
    ("text cleaning (searchdesk_server.text)", ("searchdesk_server/text/",)),
    ("shape checks (google/shapes.py)", ("searchdesk_server/google/shapes.py",)),
    ("analytics tool (rows, totals, table cells)", ("searchdesk_server/tools/analytics/",)),
    (
        "result budget (budget.py, shrink.py, _listing.py)",
        ("searchdesk_server/budget.py", "searchdesk_server/shrink.py", "searchdesk_server/tools/_listing.py"),
    ),
    ("JSON encode (measuring and writing)", ("json/encoder.py",)),
    ("pydantic / SDK models", ("pydantic", "mcp_types", "/mcp/")),
    ("httpx and the Google client", ("httpx", "httpcore", "searchdesk_server/google/")),
)


def _category(filename: str, func: str) -> str:
    where = f"{filename}:{func}"
    return next((name for name, keys in _CATEGORIES if any(k in where for k in keys)), "other (asyncio, stdlib)")


def _profile_summary(profiler: cProfile.Profile) -> dict[str, Any]:
    """Self time by area. A builtin (isinstance, str.isprintable, the C JSON scanner) has no file of its
    own, so its time on each call edge is given to the area of the function that called it."""
    stats = pstats.Stats(profiler)
    raw: dict[tuple[str, int, str], Any] = stats.stats  # type: ignore[attr-defined]
    total = sum(v[2] for v in raw.values())
    by_category: dict[str, float] = {}
    functions = []
    for (filename, line, func), (_cc, calls, tottime, cumtime, callers) in raw.items():
        if filename == "~" and callers:
            for (c_file, _c_line, c_func), edge in callers.items():
                category = _category(c_file, c_func)
                by_category[category] = by_category.get(category, 0.0) + edge[2]
        else:
            category = _category(filename, func)
            by_category[category] = by_category.get(category, 0.0) + tottime
        functions.append(
            {"function": f"{_short_path(filename)}:{line}({func})", "calls": calls, "self_s": tottime, "cum_s": cumtime}
        )
    functions.sort(key=lambda f: -f["self_s"])
    watched = {}
    for (filename, _line, func), (_cc, calls, tottime, cumtime, _callers) in raw.items():
        for label, (file_part, name) in _WATCH.items():
            if func == name and filename.endswith(file_part):
                watched[label] = {"calls": calls, "self_s": tottime, "cum_s": cumtime}
    return {
        "total_s": total,
        "by_category": dict(sorted(by_category.items(), key=lambda kv: -kv[1])),
        "top_self": functions[:12],
        "watched": watched,
    }


#: Functions the report names when it explains where the time goes.
_WATCH = {
    "text.clean_json": ("searchdesk_server/text/cleaning.py", "clean_json"),
    "text.clean": ("searchdesk_server/text/cleaning.py", "clean"),
    "shapes.records": ("searchdesk_server/google/shapes.py", "records"),
    "shapes.text": ("searchdesk_server/google/shapes.py", "text"),
    "shapes.number": ("searchdesk_server/google/shapes.py", "number"),
    "rows.entries": ("searchdesk_server/tools/analytics/rows.py", "entries"),
    "budget.fit_listing": ("searchdesk_server/budget.py", "fit_listing"),
}


def _short_path(filename: str) -> str:
    for marker in ("site-packages/", "server/", "lib/python3.11/"):
        if marker in filename:
            return filename.split(marker, 1)[1]
    return filename


# --------------------------------------------------------------------------------------------------
# 5. inspect_urls × 20 at 300 ms a request


def batch_run(
    google: Google,
    command: list[str],
    env: dict[str, str],
    logs: Path,
    *,
    fail: Callable[[int], bool] | None = None,
) -> dict[str, Any]:
    with _session(command, env, logs, "batch") as s:
        google.api.reset()
        warm = s.call_tool("inspect_url", {"site": SITE, "url": BATCH_URLS[0]})
        _expect_ok(warm.result, "the first inspect_url call")
        google.api.reset(latency=BATCH_LATENCY, fail=fail)
        answer = s.call_tool("inspect_urls", {"site": SITE, "urls": BATCH_URLS})
        seen = list(google.api.seen)
        max_in_flight = google.api.max_in_flight
        google.api.reset()
    structured = answer.result.get("structuredContent") or {}
    results = structured.get("results", [])
    inspections = [r for r in seen if r.path.endswith("urlInspection/index:inspect")]
    first_429 = min((r.start for r in inspections if r.status == 429), default=None)
    statuses: dict[str, int] = {}
    for r in results:
        statuses[r.get("status", "?")] = statuses.get(r.get("status", "?"), 0) + 1
    out: dict[str, Any] = {
        "wall_s": answer.elapsed,
        "max_in_flight": max_in_flight,
        "requests": len(inspections),
        "answered_429": sum(r.status == 429 for r in inspections),
        "statuses": statuses,
        "is_error": is_error(answer.result),
        "first_line": text_of(answer.result).split("\n\n", 1)[-1].splitlines()[0][:200] if results else "",
        "stop_note": _stop_note(text_of(answer.result)),
        "peak_per_minute": _peak_per_minute([r.start for r in inspections]),
    }
    if first_429 is not None:
        out["requests_started_after_first_429"] = sum(r.start > first_429 for r in inspections)
    if not results:
        raise ServerFailed(f"inspect_urls returned no results: {text_of(answer.result)[:300]}")
    return out


def _stop_note(text: str) -> str:
    for line in text.splitlines():
        if "429" in line or "not attempted" in line or "Stopped" in line:
            return line.strip()[:200]
    return ""


def _peak_per_minute(starts: list[float]) -> int:
    starts = sorted(starts)
    best = 0
    j = 0
    for i, t in enumerate(starts):
        while starts[j] < t - 60:
            j += 1
        best = max(best, i - j + 1)
    return best


# --------------------------------------------------------------------------------------------------
# 6. Approval: server → reference agent (auto-approve) → server


class Agent:
    """The reference agent on its own loop in a thread, answering every question "approve" at once,
    with each event time-stamped on this process's perf_counter clock."""

    def __init__(self) -> None:
        from tests.agentref import ApprovalScript, ReferenceAgent, Script

        self.folder = Path(tempfile.mkdtemp(prefix="sd-bench-"))  # ours, 0700, short enough for a socket
        self.path = str(self.folder / "agent.sock")
        self.events: list[tuple[float, dict[str, Any]]] = []
        self._lock = threading.Lock()
        self._loop = asyncio.new_event_loop()
        script = Script(approval=ApprovalScript("approve", delay=0.0))
        self._agent = ReferenceAgent(self.path, script, on_event=self._on_event)
        self._stop: asyncio.Event | None = None
        ready = threading.Event()
        failure: list[BaseException] = []

        async def main() -> None:
            self._stop = asyncio.Event()
            try:
                await self._agent.start()
            except BaseException as exc:
                failure.append(exc)
                ready.set()
                return
            ready.set()
            await self._stop.wait()
            await self._agent.stop()

        self._thread = threading.Thread(target=lambda: self._loop.run_until_complete(main()), daemon=True)
        self._thread.start()
        if not ready.wait(10) or failure:
            raise RuntimeError(f"the reference agent did not start: {failure[0] if failure else 'timeout'}")

    def _on_event(self, event: dict[str, Any]) -> None:
        with self._lock:
            self.events.append((time.perf_counter(), event))

    def take_events(self) -> list[tuple[float, dict[str, Any]]]:
        with self._lock:
            events, self.events = self.events, []
        return events

    def close(self) -> None:
        if self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(10)
        with contextlib.suppress(RuntimeError):
            self._loop.close()
        shutil.rmtree(self.folder, ignore_errors=True)


@dataclass
class ApprovalSample:
    delete_s: float
    submit_s: float
    agent_first_s: float  # call sent → the agent's first request
    agent_answer_s: float  # the agent's first request → it answered
    google_after_answer_s: float  # the answer → Google's DELETE arrives
    methods: list[str] = field(default_factory=list)


def approval_run(
    google: Google, agent: Agent, command: list[str], env: dict[str, str], logs: Path
) -> list[ApprovalSample]:
    """Two guarded calls in one fresh process: the first (which also connects to the agent and imports
    the approval code) and a second one, each paired with the same path's unguarded call."""
    env = {**env, "ELICITATION": "false", "SEARCHDESK_AGENT_SOCKET": agent.path}
    with _session(command, env, logs, "approval") as s:
        _expect_ok(s.call_tool("submit_sitemap", FEED).result, "the first submit_sitemap")  # imports, token, TLS
        return [_approval_pair(google, agent, s), _approval_pair(google, agent, s)]


FEED = {"site": SITE, "feedpath": BENCH_SITEMAP}


def _approval_pair(google: Google, agent: Agent, s: StdioSession) -> ApprovalSample:
    google.api.reset()
    submit = s.call_tool("submit_sitemap", FEED)  # also puts the sitemap back for the delete
    _expect_ok(submit.result, "submit_sitemap")
    agent.take_events()
    google.api.reset()
    sent = time.perf_counter()
    delete = s.call_tool("delete_sitemap", FEED)
    events = agent.take_events()
    seen = list(google.api.seen)
    if is_error(delete.result):
        raise ServerFailed(f"delete_sitemap was not approved and done: {text_of(delete.result)[:300]}")
    requests = [(t, e) for t, e in events if e.get("event") == "request"]
    answers = [t for t, e in events if e.get("event") == "answer"]
    deletes = [r.start for r in seen if r.method == "DELETE"]
    if not requests or not answers or not deletes:
        raise ServerFailed(f"the approval left no trace (agent events {len(events)}, DELETEs {len(deletes)})")
    return ApprovalSample(
        delete_s=delete.elapsed,
        submit_s=submit.elapsed,
        agent_first_s=requests[0][0] - sent,
        agent_answer_s=answers[0] - requests[0][0],
        google_after_answer_s=deletes[0] - answers[0],
        methods=[str(e.get("method")) for _, e in requests],
    )


# --------------------------------------------------------------------------------------------------
# Import time of the real start-up path


def import_profile(python: str, env: dict[str, str], cwd: str) -> dict[str, Any]:
    """`python -X importtime -m searchdesk_server` serving until stdin ends: the real start-up path."""
    import subprocess

    proc = subprocess.run(
        [python, "-X", "importtime", "-m", "searchdesk_server"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=60,
        check=False,
    )
    rows: list[tuple[str, int, int]] = []
    for line in proc.stderr.splitlines():
        if not line.startswith("import time:") or "|" not in line:
            continue
        try:
            self_us, cumulative, name = line.split(":", 1)[1].split("|")
            rows.append((name.rstrip(), int(self_us), int(cumulative)))
        except ValueError:
            continue
    if not rows:
        raise ServerFailed(f"no import times (exit {proc.returncode}): {proc.stderr[-300:]}")
    by_package: dict[str, int] = {}
    for name, self_us, _ in rows:
        package = name.strip().split(".", 1)[0]
        by_package[package] = by_package.get(package, 0) + self_us
    top_level = sorted(((n.strip(), c) for n, _, c in rows if not n.startswith(" ")), key=lambda r: -r[1])
    ours = sorted(
        ((n.strip(), s) for n, s, _ in rows if n.strip().startswith("searchdesk_server")), key=lambda r: -r[1]
    )
    lazy = (
        "httpx",
        "google.auth",
        "cryptography",
        "platformdirs",
        "searchdesk_server.demo",
        "searchdesk_server.google",
    )
    return {
        "total_self_us": sum(s for _, s, _ in rows),
        "by_package_us": dict(sorted(by_package.items(), key=lambda kv: -kv[1])),
        "top_level_cumulative_us": top_level,
        "ours_self_us": ours,
        "ours_modules": len(ours),
        "kept_off_startup": {name: _importer_chain(rows, name) for name in lazy},
    }


def _importer_chain(rows: list[tuple[str, int, int]], module: str) -> str | None:
    """None when `module` was not imported; else who imported it, as a chain up to the top level.

    -X importtime prints a module after everything it imported, indented two spaces per level, so a
    module's importer is the next line one level shallower."""

    def depth(name: str) -> int:
        return (len(name) - len(name.lstrip(" "))) // 2

    for i, (name, _, _) in enumerate(rows):
        if name.strip() != module:
            continue
        level = depth(name)
        chain = [module]
        for other, _, _ in rows[i + 1 :]:
            if level == 0:
                break
            if depth(other) == level - 1:
                chain.append(other.strip())
                level -= 1
        return " ← ".join(chain if len(chain) <= 4 else [*chain[:3], "…", chain[-1]])
    return None


def median_import_profile(profiles: list[dict[str, Any]]) -> dict[str, Any]:
    """Per-item medians over several runs (import time is noisy on a shared machine)."""
    import statistics

    def med(getter: Callable[[dict[str, Any]], dict[str, int]]) -> dict[str, float]:
        keys = {k for p in profiles for k in getter(p)}
        return {k: statistics.median(getter(p).get(k, 0) for p in profiles) for k in keys}

    by_package = med(lambda p: p["by_package_us"])
    top = med(lambda p: dict(p["top_level_cumulative_us"]))
    ours = med(lambda p: dict(p["ours_self_us"]))
    return {
        "runs": len(profiles),
        "total_self_us": statistics.median(p["total_self_us"] for p in profiles),
        "by_package_us": sorted(by_package.items(), key=lambda kv: -kv[1]),
        "top_level_cumulative_us": sorted(top.items(), key=lambda kv: -kv[1]),
        "ours_self_us": sorted(ours.items(), key=lambda kv: -kv[1]),
        "kept_off_startup": profiles[-1]["kept_off_startup"],
    }


def python_env(home: Path) -> dict[str, str]:
    return {"PATH": os.environ.get("PATH", ""), **home_env(home)}
