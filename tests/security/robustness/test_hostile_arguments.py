"""Every tool fed arbitrary arguments: a clear answer or a clear refusal, never a crash, and never a
request at Google carrying a value the server did not validate and normalise (the fake's log judges:
every path parameter, query parameter and body field is re-checked). In-process, one server per
configuration; guarded tools are driven through the two-call token so their destructive requests are
judged too."""

from __future__ import annotations

import datetime as dt
import json
import re
import urllib.parse
from collections.abc import Iterator, Mapping
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from searchdesk_server import catalogue, tool_spec
from searchdesk_server.properties import check_url, covers, covers_url, normalise_property
from tests.fakegoogle import FakeGoogle
from tests.fakegoogle.backend import LoggedRequest

from ..conftest import EXAMPLES, PROPERTY_SETTINGS, Planted, Witness, new_fake
from ..hostile import CANARY, arguments
from ..inproc import InProcess, check_result, in_process, own_words, server_env, text_of

ALLOWED = ("sc-domain:example.com", "https://www.example.org/shop/")
FAMILIES = sorted({t.group for t in catalogue.TOOLS} | {"diagnostics"})
LANG = re.compile(r"[A-Za-z0-9-]{1,35}")
METHODS = {"DNS_TXT", "FILE", "META"}


@pytest.fixture(scope="module", params=["open", "allowed-sites"])
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, planted: Planted, witness: Witness
) -> Iterator[InProcess]:
    folder = tmp_path_factory.mktemp(f"arguments-{request.param}")
    fake = new_fake(folder / "fake", planted, witness)
    extra = {"MCP_DIAGNOSTICS": "true"}
    if request.param == "allowed-sites":
        extra |= {"GSC_ALLOWED_SITES": ",".join(ALLOWED), "GSC_SITE_URL": "https://www.example.com/"}
    try:
        with in_process(fake, server_env(fake, planted.service_account_env(fake), extra), folder) as srv:
            srv.allowed = ALLOWED if request.param == "allowed-sites" else ()  # type: ignore[attr-defined]
            yield srv
    finally:
        fake.close()


# --------------------------------------------------------------------------------------------------
# What may reach Google


class Unvalidated(AssertionError):
    pass


def _site(value: str, allowed: tuple[str, ...]) -> None:
    if normalise_property(value) != value:
        raise Unvalidated(f"property {value!r} reached Google without normalisation")
    if allowed and not any(covers(a, value) for a in allowed):
        raise Unvalidated(f"property {value!r} outside GSC_ALLOWED_SITES reached Google")


def _url(value: object, allowed: tuple[str, ...]) -> None:
    if not isinstance(value, str) or check_url(value) != value:
        raise Unvalidated(f"URL {value!r} reached Google without validation")
    if allowed and not any(covers_url(a, value) for a in allowed):
        raise Unvalidated(f"URL {value!r} outside GSC_ALLOWED_SITES reached Google")


def _resource(site: object, allowed: tuple[str, ...]) -> None:
    assert isinstance(site, dict) and set(site) == {"type", "identifier"}, site
    ident = site["identifier"]
    assert isinstance(ident, str)
    _site("sc-domain:" + ident if site["type"] == "INET_DOMAIN" else ident, allowed)
    assert site["type"] in ("INET_DOMAIN", "SITE")


def _date(value: object) -> None:
    assert isinstance(value, str) and dt.date.fromisoformat(value).isoformat() == value, value


def _analytics(body: Mapping[str, Any]) -> None:
    known = {
        "startDate",
        "endDate",
        "rowLimit",
        "startRow",
        "dimensions",
        "type",
        "dataState",
        "aggregationType",
        "dimensionFilterGroups",
    }
    assert set(body) <= known, set(body) - known
    _date(body["startDate"])
    _date(body["endDate"])
    assert body["startDate"] <= body["endDate"]
    if "rowLimit" in body:
        assert type(body["rowLimit"]) is int and 1 <= body["rowLimit"] <= tool_spec.MAX_ROWS
    if "startRow" in body:
        assert type(body["startRow"]) is int and 0 <= body["startRow"] < 2**53
    dims = body.get("dimensions", [])
    assert isinstance(dims, list) and len(set(dims)) == len(dims) and set(dims) <= set(tool_spec.DIMENSIONS)
    assert body.get("type", "web") in tool_spec.SEARCH_TYPES
    assert body.get("dataState", "final") in tool_spec.DATA_STATES
    assert body.get("aggregationType", "auto") in tool_spec.AGGREGATIONS
    for group in body.get("dimensionFilterGroups", []):
        assert set(group) == {"groupType", "filters"} and group["groupType"] == "and"
        for f in group["filters"]:
            assert set(f) == {"dimension", "operator", "expression"}
            assert f["dimension"] in ("query", "page", "country", "device", "searchAppearance")
            assert f["operator"] in tool_spec.OPERATORS
            assert isinstance(f["expression"], str) and f["expression"].strip() and "\x00" not in f["expression"]


def check_request(entry: LoggedRequest, allowed: tuple[str, ...]) -> None:
    """Re-check every value in one request the fake received."""
    if entry.host == "oauth2.googleapis.com":
        return
    segments = [urllib.parse.unquote(s) for s in entry.path.split("/")[1:]]
    query = urllib.parse.parse_qs(entry.query, keep_blank_values=True)
    assert query.pop("prettyPrint", None) == ["false"], entry.query  # every call asks for compact JSON
    body = json.loads(entry.body) if entry.body else None
    where = (entry.host, entry.method, segments[:3])
    if entry.host == "searchconsole.googleapis.com" and segments[:3] == ["webmasters", "v3", "sites"]:
        rest = segments[3:]
        if not rest:
            assert entry.method == "GET" and not query and body is None, where
            return
        _site(rest[0], allowed)
        if rest[1:] == []:
            assert entry.method in ("GET", "PUT", "DELETE") and body is None, where
        elif rest[1:] == ["sitemaps"]:
            assert entry.method == "GET" and set(query) <= {"sitemapIndex"}, where
            for value in query.get("sitemapIndex", []):
                _url(value, allowed)
        elif rest[1] == "sitemaps" and len(rest) == 3:
            assert entry.method in ("GET", "PUT", "DELETE") and body is None, where
            _url(rest[2], allowed)
        elif rest[1:] == ["searchAnalytics", "query"]:
            assert entry.method == "POST" and isinstance(body, dict), where
            _analytics(body)
        else:
            raise Unvalidated(f"unexpected Search Console path {entry.path}")
    elif entry.host == "searchconsole.googleapis.com" and entry.path == "/v1/urlInspection/index:inspect":
        assert entry.method == "POST" and isinstance(body, dict)
        assert set(body) <= {"inspectionUrl", "siteUrl", "languageCode"}, body
        _site(body["siteUrl"], allowed)
        _url(body["inspectionUrl"], allowed)
        if "languageCode" in body:
            assert isinstance(body["languageCode"], str) and LANG.fullmatch(body["languageCode"])
    elif entry.host == "indexing.googleapis.com" and entry.path == "/v3/urlNotifications:publish":
        assert entry.method == "POST" and isinstance(body, dict) and set(body) == {"url", "type"}
        _url(body["url"], allowed)
        assert body["type"] in ("URL_UPDATED", "URL_DELETED")
    elif entry.host == "indexing.googleapis.com" and entry.path == "/v3/urlNotifications/metadata":
        assert entry.method == "GET" and set(query) == {"url"} and len(query["url"]) == 1
        _url(query["url"][0], allowed)
    elif entry.host == "www.googleapis.com" and segments[:3] == ["siteVerification", "v1", "webResource"]:
        rest = segments[3:]
        if not rest:
            if entry.method == "GET":
                assert not query and body is None
                return
            assert entry.method == "POST" and set(query) == {"verificationMethod"}
            assert query["verificationMethod"][0] in METHODS
            assert isinstance(body, dict) and set(body) == {"site"}
            _resource(body["site"], allowed)
            return
        assert len(rest) == 1
        ident = rest[0]
        _site("sc-domain:" + ident[len("dns://") :] if ident.startswith("dns://") else ident, allowed)
        if entry.method == "PUT":
            assert isinstance(body, dict) and set(body) == {"site", "owners"}
            _resource(body["site"], allowed)
            owners = body["owners"]
            assert isinstance(owners, list) and owners == sorted(set(owners)) and 1 <= len(owners) <= 100
            for owner in owners:
                assert isinstance(owner, str) and owner == owner.strip() and 1 <= len(owner) <= tool_spec.MAX_OWNER
                assert "\x00" not in owner
        else:
            assert entry.method in ("GET", "DELETE") and body is None
    elif entry.host == "www.googleapis.com" and entry.path == "/siteVerification/v1/token":
        assert entry.method == "POST" and isinstance(body, dict) and set(body) == {"site", "verificationMethod"}
        _resource(body["site"], allowed)
        assert body["verificationMethod"] in METHODS
    else:
        raise Unvalidated(f"unexpected request {entry.method} {entry.host}{entry.path}")


def check_refusal(result: Any) -> None:
    """A refusal in the server's own words: nothing the caller sent is echoed before a quoted part."""
    own = own_words(text_of(result))
    assert CANARY not in own, f"a rejected value was echoed: {own[:300]!r}"


# --------------------------------------------------------------------------------------------------


def _tools(family: str) -> list[str]:
    if family == "diagnostics":
        return ["describe_connection"]
    return [t.name for t in catalogue.TOOLS if t.group == family]


@st.composite
def calls(draw: st.DrawFn, family: str) -> tuple[str, dict[str, Any]]:
    tool = draw(st.sampled_from(_tools(family)))
    return tool, draw(arguments(tool))


@pytest.mark.parametrize("family", FAMILIES)
def test_arbitrary_arguments_are_refused_clearly_or_validated(server: InProcess, witness: Witness, family: str) -> None:
    fake: FakeGoogle = server.fake
    allowed: tuple[str, ...] = server.allowed  # type: ignore[attr-defined]
    outcomes = {"answered": 0, "refused": 0, "google requests": 0}

    @settings(PROPERTY_SETTINGS)
    @given(calls(family))
    def run(case: tuple[str, dict[str, Any]]) -> None:
        tool, args = case
        server.fresh_quota()
        start = len(fake.log)
        result = server.call(tool, args)
        check_result(tool, result, witness)
        if result.is_error:
            check_refusal(result)
        token = (result.structured_content or {}).get("confirm_token")
        if catalogue.BY_NAME[tool].guarded and isinstance(token, str) and not args.get("confirm_token"):
            second = server.call(tool, {**args, "confirm_token": token})
            check_result(tool, second, witness)
        outcomes["refused" if result.is_error else "answered"] += 1
        for entry in fake.log[start:]:
            check_request(entry, allowed)
            outcomes["google requests"] += 1

    run()
    witness.counts[f"hostile arguments ({family}, {'allowed' if allowed else 'open'})"] = sum(
        outcomes[k] for k in ("answered", "refused")
    )
    witness.counts["hostile arguments: Google requests re-validated"] = (
        witness.counts.get("hostile arguments: Google requests re-validated", 0) + outcomes["google requests"]
    )
    witness.counts["hostile arguments: answered"] = (
        witness.counts.get("hostile arguments: answered", 0) + outcomes["answered"]
    )
    assert outcomes["answered"] >= EXAMPLES // 20 or family == "diagnostics", f"too few calls got through: {outcomes}"
