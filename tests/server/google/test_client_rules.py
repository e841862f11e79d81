"""The client's rules, against the fake Google over both routes (loopback TLS via the CONNECT proxy,
and in-process): hosts, redirects, retries, body ceilings, broken connections."""

from __future__ import annotations

import json

import pytest

from searchdesk_server.google.errors import ErrorKind, GoogleError
from searchdesk_server.google.http import Api, Limit, RetryPolicy
from tests.fakegoogle import GOOGLE_HOSTS, bodies
from tests.fakegoogle.backend import FakeRequest

from .conftest import Clients

pytestmark = pytest.mark.anyio

SITES = "webmasters/v3/sites"
SITES_RE = r"searchconsole\.googleapis\.com/webmasters/v3/sites$"
MB = 1 << 20


async def list_sites(clients: Clients, **kwargs: object) -> object:
    client = clients.made[-1] if clients.made else clients.client()
    return await client.call(Api.SEARCHCONSOLE, "GET", SITES, **kwargs)  # type: ignore[arg-type]


def api_hits(clients: Clients) -> int:
    return sum(1 for e in clients.fake.log if e.path == "/webmasters/v3/sites")


async def test_a_call_goes_through_and_only_to_google(clients: Clients) -> None:
    answer = await list_sites(clients)
    assert isinstance(answer, dict) and "siteEntry" in answer
    log = clients.fake.log
    assert [e.host for e in log] == ["oauth2.googleapis.com", "searchconsole.googleapis.com"]
    assert not log[0].authorized  # the token endpoint never sees a bearer token
    assert log[1].token is not None and log[1].token.startswith("ya29.")
    if clients.route == "proxy":
        assert {e.via for e in log} == {"https"}
        assert set(clients.fake.proxy_log) <= {f"{h}:443" for h in GOOGLE_HOSTS}
        assert clients.fake.proxy_log  # the proxy really carried it


@pytest.mark.parametrize(
    "target", ["https://collector.example.net/steal?k=v", "https://www.googleapis.com/elsewhere", "/relative"]
)
async def test_redirects_are_not_followed_and_the_token_stays_home(clients: Clients, target: str) -> None:
    clients.fake.fail(SITES_RE, redirect_to=target, status=307)
    with pytest.raises(GoogleError) as caught:
        await list_sites(clients, retry=True)
    err = caught.value
    assert err.kind is ErrorKind.REDIRECT and err.status == 307
    if "collector" in target:
        assert "collector.example.net" in str(err)
    assert "steal" not in str(err) and "elsewhere" not in str(err)  # the host only, never the path
    assert api_hits(clients) == 1
    assert [e.path for e in clients.fake.log if e.host != "oauth2.googleapis.com"] == ["/webmasters/v3/sites"]
    assert set(clients.fake.tokens_seen_by_host()) == {"searchconsole.googleapis.com"}
    assert all("collector" not in c for c in clients.fake.proxy_log)


async def test_429_with_a_megabyte_body_is_retried_and_then_succeeds(clients: Clients) -> None:
    fault = clients.fake.fail(SITES_RE, status=429, body=bodies.quota(), headers={"retry-after": "0"}, size=MB, times=2)
    answer = await list_sites(clients, retry=True)
    assert isinstance(answer, dict) and "siteEntry" in answer
    assert fault.hits == 2 and api_hits(clients) == 3


async def test_503_that_keeps_failing_is_tried_three_times_and_explained(clients: Clients) -> None:
    clients.fake.fail(SITES_RE, status=503, body=bodies.unavailable(), size=2 * MB, times=10)
    with pytest.raises(GoogleError) as caught:
        await list_sites(clients, retry=True)
    err = caught.value
    assert err.kind is ErrorKind.SERVER and err.status == 503 and err.attempts == 3
    assert api_hits(clients) == 3
    text = str(err)
    assert "tried 3 times" in text
    assert "Google said (its answer was cut): The service is currently unavailable." in text


async def test_a_call_that_may_not_be_repeated_reaches_google_exactly_once(clients: Clients) -> None:
    clients.fake.fail(r"/sitemaps/", status=503, body=bodies.unavailable(), times=10)
    client = clients.client(scopes=["https://www.googleapis.com/auth/webmasters"])
    with pytest.raises(GoogleError) as caught:
        await client.call(
            Api.SEARCHCONSOLE,
            "DELETE",
            "webmasters/v3/sites/{siteUrl}/sitemaps/{feedpath}",
            path_params={"siteUrl": "https://www.example.com/", "feedpath": "https://www.example.com/s.xml"},
            retry=False,
        )
    assert caught.value.kind is ErrorKind.SERVER and caught.value.attempts == 1
    deletes = [e for e in clients.fake.log if e.method == "DELETE"]
    assert len(deletes) == 1
    assert deletes[0].path == (
        "/webmasters/v3/sites/https%3A%2F%2Fwww.example.com%2F/sitemaps/https%3A%2F%2Fwww.example.com%2Fs.xml"
    )


async def test_403_is_never_retried(clients: Clients) -> None:
    clients.fake.fail(SITES_RE, status=403, body=bodies.google_error(403, "Rate limit", reason="rateLimitExceeded"))
    with pytest.raises(GoogleError) as caught:
        await list_sites(clients, retry=True)
    assert caught.value.kind is ErrorKind.QUOTA and caught.value.status == 403
    assert api_hits(clients) == 1


async def test_a_long_retry_after_is_reported_not_waited_out(clients: Clients) -> None:
    clients.fake.fail(SITES_RE, status=429, body=bodies.quota(), headers={"retry-after": "3600"}, times=5)
    with pytest.raises(GoogleError) as caught:
        await list_sites(clients, retry=True)
    err = caught.value
    assert err.kind is ErrorKind.QUOTA and err.retry_after == 3600
    assert "wait about 60 minutes" in str(err)
    assert api_hits(clients) == 1


async def test_retry_info_in_the_body_is_honoured(clients: Clients) -> None:
    fault = clients.fake.fail(SITES_RE, status=429, body=bodies.quota(retry_delay="0.05s"), times=1)
    await list_sites(clients, retry=True)
    assert fault.hits == 1 and api_hits(clients) == 2
    clients.fake.fail(SITES_RE, status=429, body=bodies.quota(retry_delay="86400s"), times=1)
    with pytest.raises(GoogleError) as caught:
        await list_sites(clients, retry=True)
    assert caught.value.retry_after == 86400 and caught.value.attempts == 1


async def test_a_passed_deadline_stops_the_retries(clients: Clients) -> None:
    import time

    clients.fake.fail(SITES_RE, status=503, times=5)
    with pytest.raises(GoogleError) as caught:
        await list_sites(clients, retry=True, deadline=time.monotonic())
    assert caught.value.attempts == 1 and api_hits(clients) == 1


@pytest.mark.parametrize("framing", ["length", "chunked", "close"])
async def test_a_100_mb_body_is_refused_early_and_the_next_call_works(clients: Clients, framing: str) -> None:
    fault = clients.fake.fail(SITES_RE, status=200, body=b'{"siteEntry": [', size=100 * MB, framing=framing)  # type: ignore[arg-type]
    with pytest.raises(GoogleError) as caught:
        await list_sites(clients)
    err = caught.value
    assert err.kind is ErrorKind.TOO_LARGE
    assert "1 MB" in str(err)
    assert fault.hits == 1
    # The reader stopped near the ceiling; only socket buffers (client, proxy, server) lie beyond it.
    assert fault.bytes_out < (2 * MB if clients.route == "transport" else 40 * MB)
    answer = await list_sites(clients)
    assert isinstance(answer, dict) and "siteEntry" in answer


async def test_the_ceiling_depends_on_the_kind_of_call(clients: Clients) -> None:
    doc = json.dumps({"siteEntry": []}).encode()
    clients.fake.fail(SITES_RE, status=200, body=doc, size=3 * MB, times=2)
    with pytest.raises(GoogleError):
        await list_sites(clients, limit=Limit.RECORD)
    assert await list_sites(clients, limit=Limit.INSPECTION) == {"siteEntry": []}


async def test_a_lying_content_length_changes_nothing(clients: Clients) -> None:
    if clients.route == "transport":
        # In-process the body is not framed by the header: it claims 20 bytes and sends 100 MB.
        clients.fake.fail(SITES_RE, status=200, body=b'{"siteEntry": [', size=100 * MB, content_length=20)
        with pytest.raises(GoogleError) as caught:
            await list_sites(clients)
        assert caught.value.kind is ErrorKind.TOO_LARGE
    else:
        # On the wire it claims 100 MB and sends 2 kB, then hangs up: an error, not a short answer.
        clients.fake.fail(SITES_RE, status=200, body=b'{"siteEntry": []}', size=2048, content_length=100 * MB)
        with pytest.raises(GoogleError) as caught:
            await list_sites(clients)
        assert caught.value.kind is ErrorKind.NETWORK
        # ... and claims 17 bytes while sending 100 MB: the client reads its 17 bytes and moves on.
        fault = clients.fake.fail(SITES_RE, status=200, body=b'{"siteEntry": []}', size=100 * MB, content_length=17)
        assert await list_sites(clients) == {"siteEntry": []}
        assert fault.hits == 1
    # The lie leaves the rest of its body on that connection; a call that may be repeated gets past
    # it (a broken connection is retried on a fresh one), and never reads the leftover as an answer.
    answer = await list_sites(clients, retry=True)
    assert isinstance(answer, dict) and answer.get("siteEntry")
    assert not any(f.remaining for f in clients.fake.backend.faults)


async def test_a_connection_reset_mid_body_is_a_network_error_and_retried_when_allowed(clients: Clients) -> None:
    clients.fake.fail(SITES_RE, status=200, body=b'{"siteEntry": [', size=300_000, reset_after=20_000, times=2)
    with pytest.raises(GoogleError) as caught:
        await list_sites(clients, retry=False)
    assert caught.value.kind is ErrorKind.NETWORK and "broke off" in str(caught.value)
    assert api_hits(clients) == 1
    answer = await list_sites(clients, retry=True)  # one more reset, then the real answer
    assert isinstance(answer, dict) and "siteEntry" in answer
    assert api_hits(clients) == 3


async def test_a_slow_loris_body_is_cut_off_by_the_per_request_limit(clients: Clients) -> None:
    clients.client(policy=RetryPolicy(request_timeout=1.0))
    clients.fake.fail(SITES_RE, status=200, body=b"{", chunk_size=1, delay=0.05, endless=True, framing="chunked")
    with pytest.raises(GoogleError) as caught:
        await list_sites(clients, retry=False)
    err = caught.value
    assert err.kind is ErrorKind.NETWORK and "longer than 1 second." in str(err)
    assert await list_sites(clients, retry=False) != {}  # the next call works


async def test_an_empty_success_is_an_empty_record(clients: Clients) -> None:
    clients.fake.fail(SITES_RE, status=204)
    assert await list_sites(clients) == {}


async def test_a_login_page_instead_of_json_is_summarised_not_quoted(clients: Clients) -> None:
    page = b"<html><head><title>Corporate\x1b[31m Wi-Fi Login</title></head><body>SECRET-BODY-TEXT</body></html>"
    clients.fake.fail(SITES_RE, status=200, body=page, headers={"content-type": "text/html"})
    with pytest.raises(GoogleError) as caught:
        await list_sites(clients)
    text = str(caught.value)
    assert caught.value.kind is ErrorKind.SERVER
    assert "Corporate[31m Wi-Fi Login" in text and "\x1b" not in text
    assert "SECRET-BODY-TEXT" not in text
    assert "answered in Google's place" in text


async def test_every_call_asks_for_compact_json_and_the_fake_answers_as_asked(clients: Clients) -> None:
    """Google indents its JSON unless told prettyPrint=false; the client says so on every API call, and
    the fake (like Google) then answers without whitespace, errors included."""
    answer = await list_sites(clients)
    (entry,) = [e for e in clients.fake.log if e.path == "/webmasters/v3/sites"]
    assert entry.query == "prettyPrint=false"
    assert isinstance(answer, dict)
    served = clients.fake.backend.handle(
        FakeRequest(
            "GET",
            "searchconsole.googleapis.com",
            entry.path,
            entry.query,
            {"authorization": f"Bearer {entry.token}"},
            b"",
        ),
        "transport",
    )
    compact = b"".join(served.chunks)
    assert b"\n" not in compact and b": " not in compact and json.loads(compact) == answer
    served = clients.fake.backend.handle(
        FakeRequest(
            "GET", "searchconsole.googleapis.com", entry.path, "", {"authorization": f"Bearer {entry.token}"}, b""
        ),
        "transport",
    )
    assert b'\n  "siteEntry": [' in b"".join(served.chunks)  # Google's default: indented by two spaces
    refused = clients.fake.backend.handle(
        FakeRequest("GET", "searchconsole.googleapis.com", entry.path, entry.query, {}, b""), "transport"
    )
    assert b"\n" not in b"".join(refused.chunks)


@pytest.mark.parametrize(
    ("raw", "value"),
    [
        (
            b'{"siteEntry": [{"siteUrl": "https://example.com/\\ud800", "permissionLevel": "siteOwner"}]}',
            "https://example.com/\ud800",
        ),
        (b'{"siteEntry": [], "n": 123456789012345678901234567890}', 123456789012345678901234567890),
        (b'{"siteEntry": [], "n": -9223372036854775809}', -9223372036854775809),
        (b'\xef\xbb\xbf{"siteEntry": [], "n": NaN}', "nan"),
    ],
)
async def test_an_answer_the_standard_decoder_reads_is_read_the_same(
    clients: Clients, raw: bytes, value: object
) -> None:
    """The fast decoder refuses lone surrogates, NaN and a byte order mark, and turns integers beyond
    64 bits into floats; each such answer is read as the standard library reads it, never refused."""
    clients.fake.fail(SITES_RE, status=200, body=raw, headers={"content-type": "application/json"})
    answer = await list_sites(clients)
    assert answer == json.loads(raw) or value == "nan"
    assert isinstance(answer, dict)
    got = answer["siteEntry"][0]["siteUrl"] if answer["siteEntry"] else answer["n"]
    if value == "nan":
        assert got != got
    else:
        assert got == value and type(got) is type(value)
