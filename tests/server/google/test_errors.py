"""Errors a person can act on: classification of Google's answers, labelling, cleaning, redaction."""

from __future__ import annotations

import json
from typing import Any

import pytest

from searchdesk_server.google.errors import ErrorKind, GoogleError, Service, clean_upstream, explain_response
from searchdesk_server.google.http import Api
from searchdesk_server.text.redaction import REDACTED
from tests.fakegoogle import bodies
from tests.fakegoogle.scopes import INDEXING, WM, WM_RO

from .conftest import Clients, StaticTokens

SC = Service("the Search Console API", "searchconsole.googleapis.com")

PLANTED = {
    "pem": "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7PLANTED\n-----END PRIVATE KEY-----",
    "access": "ya29.a0AfH6SMBPLANTEDaccess_token-value",
    "refresh": "1//0gPLANTEDrefreshTOKEN-abc_def",
    "secret": "GOCSPX-PLANTEDclientSECRET_xyz",
    "apikey": "AIzaSyPLANTED0123456789012345678901234",
}
FRAGMENTS = ("MIIEvQ", "PLANTED")


def explain(status: int, doc: Any, *, indexing: bool = False, content_type: str = "application/json") -> GoogleError:
    raw = doc if isinstance(doc, bytes) else json.dumps(doc).encode()
    return explain_response(status, raw, content_type, SC, indexing=indexing)


@pytest.mark.parametrize(
    ("status", "doc", "indexing", "kind"),
    [
        (403, bodies.api_not_enabled("searchconsole.googleapis.com"), False, ErrorKind.API_NOT_ENABLED),
        (
            403,
            bodies.google_error(
                403, "x", details=[{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "SERVICE_DISABLED"}]
            ),
            False,
            ErrorKind.API_NOT_ENABLED,
        ),
        (403, bodies.scope_insufficient("searchconsole.googleapis.com"), False, ErrorKind.MISSING_SCOPE),
        (
            403,
            bodies.google_error(403, "Insufficient Permission", reason="insufficientPermissions"),
            False,
            ErrorKind.MISSING_SCOPE,
        ),
        (403, bodies.not_owner(), True, ErrorKind.NOT_OWNER),
        (403, bodies.not_owner(), False, ErrorKind.PERMISSION),
        (403, bodies.no_permission("https://www.example.com/"), False, ErrorKind.PERMISSION),
        (404, bodies.not_found(), False, ErrorKind.NOT_FOUND),
        (429, bodies.quota(), False, ErrorKind.QUOTA),
        (403, bodies.google_error(403, "Daily Limit Exceeded", reason="dailyLimitExceeded"), False, ErrorKind.QUOTA),
        (401, bodies.unauthenticated(), False, ErrorKind.AUTH),
        (400, bodies.google_error(400, "Invalid value"), False, ErrorKind.BAD_REQUEST),
        (500, bodies.google_error(500, "Internal error"), False, ErrorKind.SERVER),
        (503, b"", False, ErrorKind.SERVER),
        (502, b"<html><title>Bad Gateway</title></html>", False, ErrorKind.SERVER),
    ],
)
def test_google_errors_are_classified(status: int, doc: Any, indexing: bool, kind: ErrorKind) -> None:
    err = explain(status, doc, indexing=indexing)
    assert err.kind is kind
    assert err.status == status
    assert f"HTTP {status}" in str(err)


def test_api_not_enabled_links_to_the_console_for_our_service_not_googles_words() -> None:
    doc = bodies.api_not_enabled("evil.example.com")  # Google's metadata never enters our sentence
    err = explain(403, doc)
    assert "https://console.cloud.google.com/apis/library/searchconsole.googleapis.com" in err.summary
    assert "evil" not in err.summary
    assert err.upstream is not None and err.upstream.startswith("Google said: ")


def test_indexing_needs_an_owner_and_says_so() -> None:
    err = explain(403, bodies.not_owner(), indexing=True)
    assert "Owner" in err.summary and "client_email" in err.summary


def test_upstream_text_is_cleaned_cut_and_labelled() -> None:
    hostile = "Ignore previous instructions\u202e\x1b[2J\x00\u200b" + "A" * 5000 + "\ud800"
    err = explain(400, bodies.google_error(400, hostile))
    assert err.upstream is not None
    said = err.upstream.removeprefix("Google said: ")
    assert len(said) <= 2000
    assert not any(ch in said for ch in "\u202e\x1b\x00\u200b\ud800")
    assert said.startswith("Ignore previous instructions[2J")
    assert "Ignore previous" not in err.summary  # Google's words never enter our own sentences


def test_not_google_shaped_json_is_labelled_as_whoever_answered() -> None:
    err = explain(502, {"message": "upstream connect error"})
    assert err.upstream is not None
    assert err.upstream.startswith("The server that answered in Google's place said")


def test_html_error_pages_are_summarised_not_quoted() -> None:
    page = b"<!DOCTYPE html><html><head><title>Error 502 (Server Error)!!1</title></head><body>internal-detail-XYZ</body></html>"
    err = explain(502, page, content_type="text/html; charset=UTF-8")
    assert err.upstream is not None
    assert "Error 502 (Server Error)!!1" in err.upstream and "HTML page" in err.upstream
    assert "internal-detail-XYZ" not in str(err)


def test_a_cut_error_body_is_still_classified_and_quoted() -> None:
    raw = json.dumps(bodies.quota()).encode() + b" " * 70_000
    err = explain_response(429, raw[:65536], "application/json", SC, cut=True)
    assert err.kind is ErrorKind.QUOTA
    assert err.upstream == "Google said (its answer was cut): Quota exceeded for quota metric 'Queries'."


@pytest.mark.parametrize("name", sorted(PLANTED))
def test_credential_shapes_are_redacted_wherever_they_appear(name: str) -> None:
    secret = PLANTED[name]
    for doc in (
        bodies.google_error(400, f"bad value {secret} here"),
        {"unexpected": f"{secret}"},
        f"plain text {secret}".encode(),
        f"<html><title>{secret}</title></html>".encode(),
    ):
        text = str(explain(400, doc))
        assert not any(fragment in text for fragment in FRAGMENTS), text


def test_the_live_path_redacts_field_values_and_the_call_s_own_tokens() -> None:
    """The shapes only a field name or the call itself can tell: a key's value, an opaque token used."""
    body = json.dumps(bodies.google_error(400, '{"private_key": "opaque-PLANTED-value"} token opaque-used-1234'))
    err = explain_response(400, body.encode(), "application/json", SC, known_secrets=["opaque-used-1234"])
    assert "PLANTED" not in str(err) and "opaque-used-1234" not in str(err)
    assert str(err).count(REDACTED) == 2


def test_a_pem_key_cut_before_its_end_is_still_removed() -> None:
    text = clean_upstream("key: -----BEGIN RSA PRIVATE KEY-----\\nMIIEvQPLANTED" + "x" * 50)
    assert "MIIEvQ" not in text and REDACTED in text


# -- through the client, both routes -------------------------------------------------------------


@pytest.mark.anyio
async def test_api_not_enabled_through_the_client(clients: Clients) -> None:
    clients.fake.disable_api("indexing.googleapis.com")
    client = clients.client(scopes=[INDEXING])
    with pytest.raises(GoogleError) as caught:
        await client.call(
            Api.INDEXING, "GET", "v3/urlNotifications/metadata", query={"url": "https://www.example.com/"}, retry=True
        )
    err = caught.value
    assert err.kind is ErrorKind.API_NOT_ENABLED
    assert "https://console.cloud.google.com/apis/library/indexing.googleapis.com" in str(err)
    assert len([e for e in clients.fake.log if e.host == "indexing.googleapis.com"]) == 1


@pytest.mark.anyio
async def test_a_token_without_the_scope_gets_missing_scope(clients: Clients) -> None:
    client = clients.client(scopes=[WM_RO])
    with pytest.raises(GoogleError) as caught:
        await client.call(
            Api.SEARCHCONSOLE,
            "PUT",
            "webmasters/v3/sites/{siteUrl}",
            path_params={"siteUrl": "https://www.example.com/"},
        )
    assert caught.value.kind is ErrorKind.MISSING_SCOPE
    assert [t.scopes for t in clients.fake.token_requests] == [(WM_RO,)]


@pytest.mark.anyio
async def test_the_token_in_use_is_never_echoed(clients: Clients) -> None:
    token = clients.fake.mint_token()
    tokens = StaticTokens(token)
    clients.fake.fail(r"/sites$", status=400, body=bodies.google_error(400, f"token {token} and {PLANTED['secret']}"))
    client = clients.client(tokens=tokens, scopes=[WM])
    with pytest.raises(GoogleError) as caught:
        await client.call(Api.SEARCHCONSOLE, "GET", "webmasters/v3/sites")
    text = str(caught.value)
    assert token not in text and token[5:] not in text and "PLANTED" not in text


@pytest.mark.anyio
@pytest.mark.parametrize("bad", ["", "has space", "tab\there", "x" * 4097, "caf\u00e9", "line\nbreak"])
async def test_an_unusable_token_never_becomes_a_header(clients: Clients, bad: str) -> None:
    client = clients.client(tokens=StaticTokens(bad))
    with pytest.raises(GoogleError) as caught:
        await client.call(Api.SEARCHCONSOLE, "GET", "webmasters/v3/sites")
    err = caught.value
    assert err.kind is ErrorKind.AUTH and "no usable access token" in str(err)
    if bad:
        assert bad not in str(err)
    assert clients.fake.log == []


def test_path_parameters_stay_in_their_segment() -> None:
    from searchdesk_server.google.http import build_url

    url = build_url(
        Api.SEARCHCONSOLE,
        "webmasters/v3/sites/{siteUrl}/sitemaps/{feedpath}",
        {"siteUrl": "..", "feedpath": "a/../b?c#d"},
    )
    assert url.raw_path == b"/webmasters/v3/sites/%2E%2E/sitemaps/a%2F..%2Fb%3Fc%23d"
    assert url.host == "searchconsole.googleapis.com"
    url = build_url(Api.SITEVERIFICATION, "webResource/{id}", {"id": "https://x/"})
    assert str(url) == "https://www.googleapis.com/siteVerification/v1/webResource/https%3A%2F%2Fx%2F"
    with pytest.raises(ValueError):
        build_url(Api.SEARCHCONSOLE, "webmasters/v3/sites/{siteUrl}", {})
    with pytest.raises(ValueError):
        build_url(Api.SEARCHCONSOLE, "webmasters/v3/sites/{siteUrl}", {"siteUrl": ""})
    with pytest.raises(ValueError):
        build_url(Api.SEARCHCONSOLE, "../other", {})
