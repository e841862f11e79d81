"""The watch's thread end to end: Google lists the account's properties and a property's sitemaps (the
fake Google over HTTPS), the sitemap is read from the person's website (the fake website over HTTPS on
loopback, reached through the resolver handed to the reader), and each page is inspected once into the
store on disk. A withheld account's properties stop being inspected at once."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from searchdesk_desktop.accounts.signin import load_service_account_file
from searchdesk_desktop.accounts.tokens import ServiceAccountTokens
from searchdesk_desktop.keeping.archive_copier import Pace, Scope
from searchdesk_desktop.keeping.coverage_sync import CoverageSync
from searchdesk_server.coverage.store import CoverageStore
from searchdesk_server.quota import QuotaBook
from tests.fakegoogle import FakeGoogle

from .test_sitemap_reader import Names, urlset
from .website import Route, Website

SITE = "sc-domain:site.test"
PAGES = [f"https://site.test/p/{n}" for n in range(30)]
POPULAR = "https://site.test/popular"  # in no sitemap, but people click it in Google


def READER(web: Website) -> dict[str, object]:
    """The reader's test options: the test's names, loopback let through, the website's certificate, and
    no proxy (the fake Google's environment names its own CONNECT proxy, which reaches Google only)."""
    return {"resolver": Names(web), "allow_loopback": True, "ssl_context": web.client_context, "proxy": None}


def api(request: httpx.Request) -> httpx.Response:
    path = request.url.path
    if path.endswith("/webmasters/v3/sites"):
        return httpx.Response(200, json={"siteEntry": [{"siteUrl": SITE, "permissionLevel": "siteOwner"}]})
    if path.endswith("/sitemaps"):
        return httpx.Response(200, json={"sitemap": [{"path": "https://site.test/sitemap.xml"}]})
    if path.endswith("/searchAnalytics/query"):
        rows = [
            {"keys": [POPULAR], "clicks": 40, "impressions": 900},
            {"keys": [PAGES[3]], "clicks": 2, "impressions": 50},
        ]
        return httpx.Response(200, json={"rows": rows})
    if path.endswith("index:inspect"):
        result = {"indexStatusResult": {"verdict": "PASS", "coverageState": "Submitted and indexed"}}
        return httpx.Response(200, json={"inspectionResult": result})
    return httpx.Response(404, json={"error": {"code": 404, "message": "not here"}})


@pytest.fixture
def google(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeGoogle]:
    fake = FakeGoogle(tmp_path / "google", api=api)
    fake.apply_env(monkeypatch)
    try:
        yield fake
    finally:
        fake.close()


@pytest.fixture
def web(tmp_path: Path) -> Iterator[Website]:
    site = Website(tmp_path / "pki")
    try:
        yield site
    finally:
        site.close()


def test_sitemaps_and_pages_seen_in_google_every_page_inspected_once(
    google: FakeGoogle, web: Website, tmp_path: Path
) -> None:
    web.routes["/sitemap.xml"] = Route(urlset(PAGES))
    tokens = ServiceAccountTokens(load_service_account_file(google.service_account_file()))
    path = tmp_path / "coverage.sqlite"
    sync = CoverageSync(
        lambda account: CoverageStore.open(path),
        QuotaBook(tmp_path / "quota.json"),
        lambda a, s, f: tokens.access_token(s, force_refresh=f).token,
        reader_args=READER(web),
        inspector_args={"pace": Pace(per_minute=None)},
    )
    sync.update(Scope(accounts=("me",)))
    sync.start()
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with CoverageStore.open(path) as store:
                if store.counts(SITE).inspected == len(PAGES) + 1:
                    break
            time.sleep(0.2)
    finally:
        sync.stop()
    with CoverageStore.open(path) as store:
        counts = store.counts(SITE)
    assert counts.known == counts.inspected == len(PAGES) + 1, sync.problem
    asked = [json.loads(e.body)["inspectionUrl"] for e in google.log if e.path.endswith("index:inspect")]
    assert sorted(asked) == sorted([*PAGES, POPULAR])
    assert asked[:2] == [POPULAR, PAGES[3]], "pages with clicks first"
    assert [s.path for s in web.seen] == ["/sitemap.xml"]
    assert all(s.authorization is None for s in web.seen)  # no Google token ever reaches the website


def test_a_withheld_account_is_not_inspected(google: FakeGoogle, web: Website, tmp_path: Path) -> None:
    web.routes["/sitemap.xml"] = Route(urlset(PAGES))
    tokens = ServiceAccountTokens(load_service_account_file(google.service_account_file()))
    path = tmp_path / "coverage.sqlite"
    sync = CoverageSync(
        lambda account: CoverageStore.open(path),
        QuotaBook(tmp_path / "quota.json"),
        lambda a, s, f: tokens.access_token(s, force_refresh=f).token,
        reader_args=READER(web),
        inspector_args={"pace": Pace(per_minute=60, minute=3.0)},  # 20 a second: time to withhold mid-pass
    )
    sync.update(Scope(accounts=("me",)))
    sync.start()
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not any(e.path.endswith("index:inspect") for e in google.log):
            time.sleep(0.02)
        sync.update(Scope(accounts=()))  # withheld from Claude
        time.sleep(0.3)
        before = sum(e.path.endswith("index:inspect") for e in google.log)
        time.sleep(1.0)
        after = sum(e.path.endswith("index:inspect") for e in google.log)
    finally:
        sync.stop()
    assert 0 < before < len(PAGES) and after == before
