"""Reports under test: the real server in-process over the demo (or a scripted Google), and an
independent way to read Google's rows so every number can be checked by different code."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import quote

import anyio
import httpx
import pytest
from mcp import Client

from searchdesk_server.config import load
from searchdesk_server.demo import DemoGoogle
from searchdesk_server.runtime import Runtime
from searchdesk_server.server import build_server

TODAY = date(2026, 11, 20)  # the demo's pinned day (tests/server/stdio.py uses the same)
LAST_FINAL = TODAY - timedelta(days=3)  # the demo finalises data three days back
BIG = "sc-domain:example.com"
WWW = "https://www.example.com/"
BLOG = "https://blog.example.com/"
SHOP = "https://shop.example.org/"
AUTH = {"authorization": "Bearer ya29.reports-test"}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def exports(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The export folder the server will use (platformdirs follows XDG_DATA_HOME on Linux)."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    return tmp_path / "data" / "searchdesk" / "exports"


@asynccontextmanager
async def served(transport: httpx.AsyncBaseTransport) -> AsyncIterator[Client]:
    """The real server (catalogue, validation, handlers, budget) in-process, Google replaced by `transport`."""
    config = load({}, demo_flag=True)
    runtime = Runtime(config, transport=transport)
    server = build_server(config, runtime=runtime)
    try:
        async with Client(server, mode="legacy") as client:
            yield client
    finally:
        await runtime.aclose()


def demo() -> httpx.AsyncBaseTransport:
    return httpx.MockTransport(DemoGoogle(TODAY))


def text_of(result: Any) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")


def table_rows(text: str) -> list[list[str]]:
    """The cells of the Markdown table's body rows."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("|---"))
    out = []
    for line in lines[start + 1 :]:
        if not line.startswith("| "):
            break
        out.append([cell.strip() for cell in line[2:-2].split(" | ")])
    return out


# --- an independent reader of Google's rows -------------------------------------------------------


def analytics_url(site: str) -> str:
    return f"https://searchconsole.googleapis.com/webmasters/v3/sites/{quote(site, safe='')}/searchAnalytics/query"


def raw_rows(
    site: str, start: date | str, end: date | str, dims: list[str], state: str = "final"
) -> list[dict[str, Any]]:
    """Every row the demo holds for a query, read straight from DemoGoogle with a plain loop."""
    google = DemoGoogle(TODAY)
    rows: list[dict[str, Any]] = []
    offset = 0
    while True:
        body: dict[str, Any] = {
            "startDate": str(start),
            "endDate": str(end),
            "dataState": state,
            "rowLimit": 25_000,
            "startRow": offset,
        }
        if dims:
            body["dimensions"] = dims
        response = google(httpx.Request("POST", analytics_url(site), json=body, headers=AUTH))
        assert response.status_code == 200
        page = json.loads(response.read()).get("rows", [])
        rows.extend(page)
        if len(page) < 25_000:
            return rows
        offset += 25_000


# --- a scripted Google for shapes the demo does not have ------------------------------------------

RowMaker = Callable[[int], dict[str, Any]]


def answer(status: int, payload: object) -> httpx.Response:
    """A JSON response whose body is still a stream, as from a real connection (the client reads it raw)."""
    data = json.dumps(payload).encode()
    headers = {"content-type": "application/json; charset=UTF-8", "content-length": str(len(data))}
    return httpx.Response(status, headers=headers, stream=httpx.ByteStream(data))


@dataclass
class Table:
    """`count` rows made on demand, so 200,000-row answers cost no memory in the fake."""

    count: int
    make: RowMaker

    @classmethod
    def of(cls, rows: list[dict[str, Any]]) -> Table:
        return cls(len(rows), rows.__getitem__)


@dataclass
class ScriptedGoogle:
    """searchAnalytics.query answering from tables keyed by (startDate, dimensions), sliced by
    startRow/rowLimit as Google does. The by-date request gets `days` and a first incomplete date.

    `hold_at`: a startRow whose request waits until the test lets it go (or cancels the call);
    `fail_at`: a startRow answered with Google's 400. Build it inside a test (its events need the loop).
    """

    last_final: date = LAST_FINAL
    tables: dict[tuple[str, tuple[str, ...]], Table] = field(default_factory=dict)
    days: dict[str, tuple[int, int, float]] = field(default_factory=dict)
    incomplete: str | None = None  # metadata.firstIncompleteDate as sent (default: the day after last_final)
    hold_at: int | None = None
    fail_at: int | None = None
    bodies: list[dict[str, Any]] = field(default_factory=list)
    held: anyio.Event = field(default_factory=anyio.Event)
    release: anyio.Event = field(default_factory=anyio.Event)

    def transport(self) -> httpx.AsyncBaseTransport:
        return httpx.MockTransport(self.handle)

    async def handle(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        self.bodies.append(body)
        dims = tuple(body.get("dimensions", ()))
        if dims == ("date",) and body.get("dataState") == "all":
            rows = [
                {"keys": [d], "clicks": c, "impressions": i, "ctr": c / i if i else 0, "position": p}
                for d, (c, i, p) in sorted(self.days.items())
            ]
            incomplete = self.incomplete or (self.last_final + timedelta(days=1)).isoformat()
            return answer(200, {"rows": rows, "metadata": {"firstIncompleteDate": incomplete}})
        start = int(body.get("startRow", 0))
        if start == self.fail_at:  # a 400 (Google's 5xx would be retried with waits)
            error = {
                "error": {"code": 400, "message": "Request contains an invalid argument.", "status": "INVALID_ARGUMENT"}
            }
            return answer(400, error)
        if start == self.hold_at:
            self.held.set()
            await self.release.wait()
        table = self.tables.get((body["startDate"], dims), Table(0, lambda i: {}))
        limit = int(body.get("rowLimit", 1000))
        rows = [table.make(i) for i in range(start, min(table.count, start + limit))]
        return answer(200, {"rows": rows} if rows else {})

    def starts(self, dims: tuple[str, ...]) -> list[tuple[int, int]]:
        """(startRow, rowLimit) of every request for `dims`, in the order they arrived."""
        return [
            (int(b.get("startRow", 0)), int(b.get("rowLimit", 0)))
            for b in self.bodies
            if tuple(b.get("dimensions", ())) == dims and b.get("dataState") == "final"
        ]


def period(days: int = 28, back: int = 0) -> tuple[str, str]:
    """The default report period (ending on the last final day), or one `back` days earlier."""
    end = LAST_FINAL - timedelta(days=back)
    return (end - timedelta(days=days - 1)).isoformat(), end.isoformat()


def row(key: str | list[str], clicks: int, impressions: int, pos: float) -> dict[str, Any]:
    keys = [key] if isinstance(key, str) else key
    return {
        "keys": keys,
        "clicks": clicks,
        "impressions": impressions,
        "ctr": clicks / impressions if impressions else 0,
        "position": pos,
    }
