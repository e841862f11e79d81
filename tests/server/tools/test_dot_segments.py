"""Dot segments ("." and "..", also written %2e, any case) in a property, sitemap or page URL are refused.

GSC_ALLOWED_SITES scopes by whole path segments, compared as text: without this refusal
`https://www.example.com/blog/../` reads as inside `https://www.example.com/blog/` while it names the
whole site. The stdio tests run the real server against the fake Google, whose log shows that nothing
was sent; the unit tests pin down which spellings are dot segments and which are not.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from searchdesk_server.config import load
from searchdesk_server.properties import PropertyError, check_url, normalise_property
from searchdesk_server.text.phrases import describe
from searchdesk_server.variables import ConfigError
from tests.fakegoogle import FakeGoogle
from tests.server.stdio import connect, text_of

BLOG = "https://www.example.com/blog/"

#: A dot segment of each spelling, in each kind of URL argument: (tool, arguments, the argument named).
ESCAPES: list[tuple[str, dict[str, Any], str]] = [
    ("get_site", {"site": "https://www.example.com/blog/../"}, "site"),
    ("list_sitemaps", {"site": "https://www.example.com/blog/%2e%2e/"}, "site"),
    ("delete_site", {"site": "https://www.example.com/blog/.%2E"}, "site"),
    (
        "list_sitemaps",
        {"site": BLOG, "sitemap_index": "https://www.example.com/blog/../sitemap_index.xml"},
        "sitemap_index",
    ),
    ("get_sitemap", {"site": BLOG, "feedpath": "https://www.example.com/blog/%2E%2e/sitemap.xml"}, "feedpath"),
    ("delete_sitemap", {"site": BLOG, "feedpath": "https://www.example.com/blog/%2e/../sitemap.xml"}, "feedpath"),
    ("submit_sitemaps", {"site": BLOG, "feedpaths": [f"{BLOG}a.xml", f"{BLOG}..\\b.xml"]}, "feedpaths[1]"),
    ("inspect_url", {"site": BLOG, "url": "https://www.example.com/blog/../admin"}, "url"),
    ("inspect_urls", {"site": BLOG, "urls": [f"{BLOG}post", "https://www.example.com/blog/./x"]}, "urls[1]"),
    ("request_indexing", {"url": "https://www.example.com/blog/%2e%2E/jobs/42"}, "url"),
]


@pytest.mark.anyio
async def test_every_url_argument_refuses_dot_segments_and_nothing_reaches_google(
    fake_google: FakeGoogle, tmp_path: Path
) -> None:
    env = {
        **fake_google.env,
        "GSC_SERVICE_ACCOUNT_KEY_FILE": str(fake_google.service_account_file()),
        "GSC_ALLOWED_SITES": BLOG,
    }
    async with connect(args=(), env=env) as client:
        results = [(await client.call_tool(tool, args), key, args) for tool, args, key in ESCAPES]
        assert fake_google.api_requests() == [], "a dot-segment URL reached Google"
        # The control: the same server sends a URL inside /blog/ whose dots are not segments.
        control = await client.call_tool("get_indexing_status", {"url": f"{BLOG}a..b/.well-known/x"})
    for result, key, args in results:
        text = text_of(result)
        assert result.is_error, text
        assert text.startswith(f"{key}: ") and '"." or ".."' in text, text
        assert "confirm_token" not in (result.structured_content or {}), "a refused URL was offered a token"
        for value in args.values():
            for url in value if isinstance(value, list) else [value]:
                if url != BLOG and not describe(url).startswith('"'):
                    assert url not in text, "a value describe() would not quote was echoed"
    assert "GSC_ALLOWED_SITES" not in text_of(control), text_of(control)
    assert [r.path for r in fake_google.api_requests()] == ["/v3/urlNotifications/metadata"]


@pytest.mark.parametrize(
    "url",
    [
        "https://www.example.com/blog/..",
        "https://www.example.com/blog/../",
        "https://www.example.com/blog/.",
        "https://www.example.com/./blog/",
        "https://www.example.com/blog/%2e%2e/",
        "https://www.example.com/blog/%2E%2E/",
        "https://www.example.com/blog/.%2e/",
        "https://www.example.com/blog/%2E./",
        "https://www.example.com/blog/%2e/",
        "https://www.example.com/blog/..%2f",
        "https://www.example.com/blog/..%5Cx/",
        "https://www.example.com/blog\\..\\",
        "HTTPS://WWW.EXAMPLE.COM/blog/%2e%2E",
    ],
)
def test_dot_segments_are_refused_in_properties_and_urls(url: str) -> None:
    with pytest.raises(PropertyError, match=r'"\." or "\.\."'):
        normalise_property(url)
    for page in (url, url.rstrip("/") + "/page"):  # also when the path goes on after the segment
        with pytest.raises(PropertyError, match=r'"\." or "\.\."'):
            check_url(page)


@pytest.mark.parametrize(
    "url",
    [
        "https://www.example.com/blog/a..b/",
        "https://www.example.com/.well-known/",
        "https://www.example.com/blog/.../",
        "https://www.example.com/blog/..a/",
        "https://www.example.com/blog/%2e%2e%2e/",
        "https://www.example.com/blog/%252e%252e/",
        "https://www.example.com/v1.2/",
    ],
)
def test_dots_that_are_not_segments_pass(url: str) -> None:
    assert normalise_property(url) == url
    assert check_url(url + "page?next=../x") == url + "page?next=../x"  # a query is not a path


def test_the_query_of_a_page_url_may_hold_dots() -> None:
    assert check_url("https://www.example.com/search?q=./..") == "https://www.example.com/search?q=./.."


@pytest.mark.parametrize("name", ["GSC_SITE_URL", "GSC_ALLOWED_SITES"])
def test_settings_refuse_dot_segments_naming_the_variable(name: str) -> None:
    bad = "https://www.example.com/blog/%2e%2e/" if name == "GSC_SITE_URL" else f"{BLOG}../"
    with pytest.raises(ConfigError) as caught:
        load({name: bad if name == "GSC_SITE_URL" else f"{BLOG}, {bad}"})
    message = str(caught.value)
    assert message.startswith(f"{name}: ") and '"." or ".."' in message
    assert describe(bad) in message
    if not describe(bad).startswith('"'):
        assert bad not in message  # described (its length), never quoted
