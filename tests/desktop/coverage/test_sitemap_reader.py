"""The sitemap reader against a hostile website over real HTTPS on loopback.

The website is tests/desktop/coverage/website.py; names reach it through a resolver handed to the reader
as a constructor argument (``site.test`` -> 127.0.0.1 and the website's port). The cases that are
allowed use ``allow_loopback=True``, the reader's one test flag; "loopback refused" uses the default.
Each hostile file must be kept out with its own reason (``Refused.why``).
"""

from __future__ import annotations

import gzip
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import pytest

from searchdesk_desktop.keeping.coverage_address import (
    Address,
    Refused,
    Site,
    Why,
    _parts,
    check_url,
    global_address,
    page_inside,
)
from searchdesk_desktop.keeping.coverage_sitemaps import DailyFetches, Limits, SitemapReader

from .website import Route, Website

SITE = "sc-domain:site.test"
NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'


def urlset(urls: list[str], pad: str = "") -> bytes:
    body = "".join(f"<url><loc>{u}</loc>{pad}</url>\n" for u in urls)
    return f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset {NS}>\n{body}</urlset>\n'.encode()


def index(urls: list[str]) -> bytes:
    body = "".join(f"<sitemap><loc>{u}</loc></sitemap>\n" for u in urls)
    return f'<?xml version="1.0"?>\n<sitemapindex {NS}>{body}</sitemapindex>\n'.encode()


PAGES = [f"https://site.test/page/{n}" for n in range(3)]


@pytest.fixture
def web(tmp_path: Path) -> Iterator[Website]:
    site = Website(tmp_path / "pki")
    try:
        yield site
    finally:
        site.close()


class Names:
    """The test's DNS: fixed answers per name, the website's port for 443 and 80; counts each ask."""

    def __init__(self, web: Website, answers: dict[str, list[str]] | None = None) -> None:
        self.web = web
        self.answers = answers or {}
        self.asked: list[str] = []

    def __call__(self, host: str, port: int) -> list[Address]:
        self.asked.append(host)
        ips = self.answers.get(host, ["127.0.0.1"])
        if callable(ips):
            ips = ips()
        return [(ip, self.web.port) for ip in ips]


def reader(web: Website, names: Names | None = None, *, loopback: bool = True, **kw: object) -> SitemapReader:
    return SitemapReader(
        SITE,
        resolver=names or Names(web),
        allow_loopback=loopback,
        ssl_context=web.client_context,
        **kw,  # type: ignore[arg-type]
    )


def refused(r: SitemapReader, url: str) -> Refused:
    with pytest.raises(Refused) as caught:
        r.read_file(url)
    return caught.value


# -- what is read ------------------------------------------------------------------------------


def test_plain_sitemap_is_read_with_no_cookie_or_token_sent(web: Website) -> None:
    web.routes["/sitemap.xml"] = Route(urlset(PAGES + ["https://elsewhere.test/x"]), headers={"Set-Cookie": "s=1"})
    with reader(web) as r:
        first = r.read_file("https://site.test/sitemap.xml")
        r.read_file("https://site.test/sitemap.xml")
    assert first.urls == PAGES and first.skipped_outside == 1 and not first.index
    assert [s.host for s in web.seen] == ["site.test", "site.test"]  # Host is the site's own name
    assert all(s.cookie is None and s.authorization is None for s in web.seen)


def test_gzip_file_and_content_encoding_over_gz(web: Website) -> None:
    web.routes["/a.xml.gz"] = Route(gzip.compress(urlset(PAGES)))
    web.routes["/b.xml.gz"] = Route(
        gzip.compress(gzip.compress(urlset(PAGES[:1]))), headers={"Content-Encoding": "gzip"}
    )
    with reader(web) as r:
        assert r.read_file("https://site.test/a.xml.gz").urls == PAGES
        assert r.read_file("https://site.test/b.xml.gz").urls == PAGES[:1]


def test_index_one_level_deep_each_page_once(web: Website) -> None:
    web.routes["/index.xml"] = Route(
        index(["https://site.test/one.xml", "https://www.site.test/two.xml", "https://site.test/inner.xml"])
    )
    web.routes["/one.xml"] = Route(urlset(PAGES[:2]))
    web.routes["/two.xml"] = Route(urlset(PAGES[1:]))
    web.routes["/inner.xml"] = Route(index(["https://site.test/one.xml"]))
    with reader(web) as r:
        got = r.read_all(["https://site.test/index.xml"])
    assert got.urls == PAGES
    assert [x.why for x in got.refused] == [Why.NESTED]
    assert any("index inside a sitemap index" in n for n in got.notes())


def test_fifty_thousand_urls_are_read_and_no_more(web: Website) -> None:
    many = [f"https://site.test/p/{n}" for n in range(50_001)]
    web.routes["/big.xml"] = Route(urlset(many))
    with reader(web) as r:
        got = r.read_file("https://site.test/big.xml")
    assert len(got.urls) == 50_000 and got.truncated


def test_long_urls_are_skipped(web: Website) -> None:
    web.routes["/long.xml"] = Route(urlset(["https://site.test/" + "a" * 2100, PAGES[0]]))
    with reader(web) as r:
        got = r.read_file("https://site.test/long.xml")
    assert got.urls == [PAGES[0]] and got.skipped_long == 1


# -- what is kept out, each with its reason ----------------------------------------------------


def test_billion_laughs_is_refused(web: Website) -> None:
    laughs = (
        '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">'
        + "".join(
            f'<!ENTITY lol{i} "{("&lol" + str(i - 1) + ";") * 10 if i > 1 else "&lol;" * 10}">' for i in range(1, 10)
        )
        + f"]><urlset {NS}><url><loc>https://site.test/&lol9;</loc></url></urlset>"
    )
    web.routes["/laughs.xml"] = Route(laughs.encode())
    with reader(web) as r:
        assert refused(r, "https://site.test/laughs.xml").why is Why.DOCTYPE


def test_external_entity_is_refused(web: Website, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("https://site.test/SECRET")
    xxe = (
        f'<?xml version="1.0"?><!DOCTYPE u [<!ENTITY x SYSTEM "file://{secret}">]>'
        f"<urlset {NS}><url><loc>&x;</loc></url></urlset>"
    )
    web.routes["/xxe.xml"] = Route(xxe.encode())
    with reader(web) as r:
        assert refused(r, "https://site.test/xxe.xml").why is Why.DOCTYPE


def test_redirects_stay_in_the_property_and_are_counted(web: Website) -> None:
    web.routes["/away.xml"] = Route(status=302, headers={"Location": "https://other.test/sitemap.xml"})
    web.routes["/moved.xml"] = Route(status=301, headers={"Location": "https://www.site.test/sitemap.xml"})
    web.routes["/sitemap.xml"] = Route(urlset(PAGES))
    for n in range(7):
        web.routes[f"/loop{n}.xml"] = Route(status=302, headers={"Location": f"/loop{n + 1}.xml"})
    with reader(web) as r:
        assert refused(r, "https://site.test/away.xml").why is Why.OUTSIDE
        assert r.read_file("https://site.test/moved.xml").urls == PAGES
        assert refused(r, "https://site.test/loop0.xml").why is Why.REDIRECTS
    assert not any(s.host == "other.test" for s in web.seen)


def test_loopback_is_refused_by_default(web: Website) -> None:
    web.routes["/sitemap.xml"] = Route(urlset(PAGES))
    with reader(web, loopback=False) as r:
        assert refused(r, "https://site.test/sitemap.xml").why is Why.NOT_GLOBAL
    assert web.seen == []


def test_ipv4_mapped_private_is_refused_even_with_loopback_allowed(web: Website) -> None:
    names = Names(web, {"site.test": ["::ffff:10.0.0.1"]})
    with reader(web, names) as r:
        assert refused(r, "https://site.test/sitemap.xml").why is Why.NOT_GLOBAL


def test_a_name_that_changes_its_answer_is_asked_once_and_the_checked_address_used(web: Website) -> None:
    answers = iter([["127.0.0.1"], ["10.0.0.1"]])
    names = Names(web, {"site.test": lambda: next(answers)})  # type: ignore[dict-item]
    web.routes["/sitemap.xml"] = Route(urlset(PAGES))
    with reader(web, names) as r:
        assert r.read_file("https://site.test/sitemap.xml").urls == PAGES
        assert names.asked == ["site.test"]  # resolved once: the connection went where the check looked
        assert r.backend.connected == [("site.test", ("127.0.0.1", web.port))]
    with reader(web, names) as r2:  # a new connection asks again, and now the answer is private
        assert refused(r2, "https://site.test/sitemap.xml").why is Why.NOT_GLOBAL


def test_a_port_other_than_443_is_refused(web: Website) -> None:
    with reader(web) as r:
        assert refused(r, f"https://site.test:{web.port}/sitemap.xml").why is Why.PORT
        assert refused(r, "https://user:pw@site.test/sitemap.xml").why is Why.USERINFO
        assert refused(r, "ftp://site.test/sitemap.xml").why is Why.SCHEME
    assert web.seen == []


def test_gzip_bombs_are_stopped_at_fifty_megabytes(web: Website) -> None:
    zeros = gzip.compress(b" " * 60_000_000, compresslevel=9)
    web.routes["/bomb.xml.gz"] = Route(zeros)
    web.routes["/bomb.xml"] = Route(zeros, headers={"Content-Encoding": "gzip"})
    web.routes["/double.xml.gz"] = Route(gzip.compress(zeros), headers={"Content-Encoding": "gzip"})
    tracemalloc.start()
    try:
        with reader(web) as r:
            for path in ("/bomb.xml.gz", "/bomb.xml", "/double.xml.gz"):
                assert refused(r, f"https://site.test{path}").why is Why.TOO_BIG
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 * 1024 * 1024


def test_daily_cap_per_property(web: Website) -> None:
    web.routes["/sitemap.xml"] = Route(urlset(PAGES))
    daily = DailyFetches(None, 2, lambda: __import__("datetime").date(2026, 12, 4))
    with reader(web, daily=daily) as r:
        r.read_file("https://site.test/sitemap.xml")
        r.read_file("https://site.test/sitemap.xml")
        assert refused(r, "https://site.test/sitemap.xml").why is Why.DAILY


def test_slow_website_runs_out_of_time(web: Website) -> None:
    web.routes["/sitemap.xml"] = Route(urlset(PAGES))
    ticks = iter(range(0, 10_000, 100))
    with reader(web, limits=Limits(seconds_per_file=50), clock=lambda: float(next(ticks))) as r:
        assert refused(r, "https://site.test/sitemap.xml").why is Why.SLOW


# -- the rules themselves ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ip", "ok"),
    [
        ("93.184.216.34", True),
        ("2606:2800:220:1:248:1893:25c8:1946", True),
        ("127.0.0.1", False),
        ("10.0.0.1", False),
        ("169.254.169.254", False),
        ("100.64.0.1", False),
        ("224.0.0.1", False),
        ("::1", False),
        ("::ffff:10.0.0.1", False),
        ("::ffff:93.184.216.34", True),
        ("2002:a00:1::", False),  # 6to4 of 10.0.0.1
        ("64:ff9b::a00:1", False),  # NAT64 of 10.0.0.1
        ("64:ff9b::5db8:d822", True),  # NAT64 of 93.184.216.34
        ("64:ff9b:1::a00:1", False),
        ("fe80::1%eth0", False),
        ("fc00::1", False),
    ],
)
def test_global_addresses(ip: str, ok: bool) -> None:
    assert global_address(ip) is ok


@pytest.mark.parametrize(
    ("site", "url", "ok"),
    [
        ("sc-domain:site.test", "https://SITE.test./a", True),
        ("sc-domain:site.test", "http://deep.www.site.test/a", True),
        ("sc-domain:site.test", "https://evilsite.test/a", False),
        ("sc-domain:site.test", "https://site.test.evil/a", False),
        ("sc-domain:bücher.test", "https://xn--bcher-kva.test/a", True),
        ("sc-domain:xn--bcher-kva.test", "https://BÜCHER.test/a", True),
        ("https://site.test/shop/", "https://site.test/shop/a.xml", True),
        ("https://site.test/shop/", "https://site.test/shopping/a.xml", False),
        ("https://site.test/shop/", "http://site.test/shop/a.xml", False),
        ("https://site.test/shop/", "https://www.site.test/shop/a.xml", False),
        ("https://site.test/", "https://site.test:443/a.xml", True),
    ],
)
def test_inside_the_property(site: str, url: str, ok: bool) -> None:
    try:
        check_url(Site.of(site), url)
    except Refused as exc:
        assert not ok, exc
    else:
        assert ok


@pytest.mark.parametrize(
    ("site", "url", "ok"),
    [
        ("sc-domain:site.test", "https://SITE.test./a", True),
        ("sc-domain:site.test", "HTTPS://www.site.test/a?b#c", True),
        ("sc-domain:site.test", "https://site.test.evil/a", False),
        ("sc-domain:site.test", "https://user@site.test/a", False),
        ("sc-domain:site.test", "https://evil.test@site.test/a", False),
        ("sc-domain:site.test", "https://site.test:8080/a", False),
        ("sc-domain:site.test", "https://site.test:x/a", False),
        ("sc-domain:site.test", "https://site.test\\@evil.test/a", False),
        ("sc-domain:site.test", "https://site.test/a b", False),
        ("sc-domain:site.test", "https://site.test/a\tb", False),
        ("sc-domain:site.test", "ftp://site.test/a", False),
        ("sc-domain:site.test", "a:b://site.test/a", False),
        ("sc-domain:site.test", "https:/x://site.test/a", False),
        ("sc-domain:site.test", "https://[::1/a", False),
        ("sc-domain:site.test", "https://evil.test?site.test/", False),
        ("sc-domain:site.test", "https://evil.test#.site.test/", False),
        ("sc-domain:bücher.test", "https://BÜCHER.test/a", True),
        ("https://site.test/shop/", "https://site.test/shop?x=1", True),
        ("https://site.test/shop/", "https://site.test/shop/a#x", True),
        ("https://site.test/shop/", "https://site.test?/shop/a", False),
        ("https://site.test/shop/", "https://site.test#/shop/a", False),
        ("https://site.test/shop/", "https://site.test/shopping/a", False),
        ("https://site.test/", "https://site.test", True),
        ("https://site.test/", "https://site.test:443#x", True),
        ("https://site.test/", "http://site.test/a", False),
    ],
)
def test_a_page_inside_is_decided_as_the_full_split_decides(site: str, url: str, ok: bool) -> None:
    """The sitemap's fast check (each address's beginning split once) agrees with splitting it whole."""
    prop = Site.of(site)
    try:
        whole = prop.holds(*_parts(url))
    except Refused:
        whole = False
    assert page_inside(prop, url) is whole is ok


def test_fifty_megabyte_sitemap_time_and_memory(web: Website) -> None:
    """50,000 pages with a dozen language alternates each (the most elements a real 50 MB sitemap is
    likely to hold), over HTTPS. The issue's target is <= 1 s and <= 64 MiB extra; memory is asserted
    as the target, time as the reading thread's CPU with room for a machine shared by many jobs
    (make bench measures it on a quiet one)."""
    pad = "".join(
        f'<xhtml:link rel="alternate" hreflang="l{n}" href="https://site.test/l{n}/page"/>' for n in range(12)
    )
    pages = [f"https://site.test/products/item-{n:06d}" for n in range(50_000)]
    body = urlset(pages, pad).replace(b"<urlset ", b'<urlset xmlns:xhtml="http://www.w3.org/1999/xhtml" ')
    fill = 50_000_000 - len(body)
    assert fill >= 0, len(body)
    body = body.replace(b"</urlset>", b" " * fill + b"</urlset>")
    web.routes["/big.xml"] = Route(body)
    with reader(web) as r:
        walls, cpus = [], []
        for _ in range(3):
            wall, cpu = time.perf_counter(), time.thread_time()
            got = r.read_file("https://site.test/big.xml")
            walls.append(time.perf_counter() - wall)
            cpus.append(time.thread_time() - cpu)
        tracemalloc.start()
        r.read_file("https://site.test/big.xml")
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    assert got.urls == pages
    print(f"50 MB sitemap: wall {sorted(walls)} s, cpu {sorted(cpus)} s, peak {peak / 2**20:.1f} MiB")
    assert peak <= 64 * 2**20
    assert min(cpus) <= 3.0
