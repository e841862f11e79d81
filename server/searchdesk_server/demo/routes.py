"""Every method the demo serves: host, HTTP method, discovery path, scopes, query parameters, handler.

Paths and scopes are copied from Google's discovery documents (searchconsole v1, siteVerification v1,
indexing v3); a test checks them against the documents.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import unquote

from . import indexing_api, site_verification, url_inspection, webmasters
from .faults import bad_request
from .request import DemoRequest
from .state import DemoState

SEARCHCONSOLE = "searchconsole.googleapis.com"
GOOGLEAPIS = "www.googleapis.com"
INDEXING = "indexing.googleapis.com"

SCOPE_WM = "https://www.googleapis.com/auth/webmasters"
SCOPE_WM_RO = "https://www.googleapis.com/auth/webmasters.readonly"
SCOPE_SV = "https://www.googleapis.com/auth/siteverification"
SCOPE_SV_VERIFY = "https://www.googleapis.com/auth/siteverification.verify_only"
SCOPE_INDEXING = "https://www.googleapis.com/auth/indexing"

READ = frozenset({SCOPE_WM, SCOPE_WM_RO})
WRITE = frozenset({SCOPE_WM})
SV = frozenset({SCOPE_SV})
SV_VERIFY = frozenset({SCOPE_SV, SCOPE_SV_VERIFY})
INDEX = frozenset({SCOPE_INDEXING})

# Parameters every Google API accepts in the query string.
STANDARD_PARAMETERS = frozenset(
    {"$.xgafv", "access_token", "alt", "callback", "fields", "key", "oauth_token", "prettyPrint", "quotaUser"}
    | {"upload_protocol", "uploadType", "userIp"}
)

Handler = Callable[[DemoState, DemoRequest], object]


@dataclass(frozen=True)
class Route:
    id: str  # the discovery method id
    host: str
    method: str
    path: str  # the discovery path, from the host's root
    scopes: frozenset[str]
    handler: Handler
    query: frozenset[str] = frozenset()

    def match(self, segments: list[str]) -> dict[str, str] | None:
        """The decoded path parameters when `segments` (still percent-encoded) fit this path."""
        template = self.path.split("/")
        if len(template) != len(segments):
            return None
        params: dict[str, str] = {}
        for expected, actual in zip(template, segments, strict=True):
            if expected.startswith("{") and expected.endswith("}"):
                if not actual:
                    return None
                try:
                    params[expected[1:-1]] = unquote(actual, errors="strict")
                except UnicodeDecodeError:
                    raise bad_request("A path parameter is not valid percent-encoded UTF-8.") from None
            elif unquote(actual) != expected:
                return None
        return params


WM = "webmasters/v3/sites"
SV_ROOT = "siteVerification/v1"
ROUTES: tuple[Route, ...] = (
    Route("webmasters.sites.list", SEARCHCONSOLE, "GET", WM, READ, webmasters.list_sites),
    Route("webmasters.sites.get", SEARCHCONSOLE, "GET", WM + "/{siteUrl}", READ, webmasters.get_site),
    Route("webmasters.sites.add", SEARCHCONSOLE, "PUT", WM + "/{siteUrl}", WRITE, webmasters.add_site),
    Route("webmasters.sites.delete", SEARCHCONSOLE, "DELETE", WM + "/{siteUrl}", WRITE, webmasters.delete_site),
    Route(
        "webmasters.sitemaps.list",
        SEARCHCONSOLE,
        "GET",
        WM + "/{siteUrl}/sitemaps",
        READ,
        webmasters.list_sitemaps,
        frozenset({"sitemapIndex"}),
    ),
    Route(
        "webmasters.sitemaps.get",
        SEARCHCONSOLE,
        "GET",
        WM + "/{siteUrl}/sitemaps/{feedpath}",
        READ,
        webmasters.get_sitemap,
    ),
    Route(
        "webmasters.sitemaps.submit",
        SEARCHCONSOLE,
        "PUT",
        WM + "/{siteUrl}/sitemaps/{feedpath}",
        WRITE,
        webmasters.submit_sitemap,
    ),
    Route(
        "webmasters.sitemaps.delete",
        SEARCHCONSOLE,
        "DELETE",
        WM + "/{siteUrl}/sitemaps/{feedpath}",
        WRITE,
        webmasters.delete_sitemap,
    ),
    Route(
        "webmasters.searchanalytics.query",
        SEARCHCONSOLE,
        "POST",
        WM + "/{siteUrl}/searchAnalytics/query",
        READ,
        webmasters.query_analytics,
    ),
    Route(
        "searchconsole.urlInspection.index.inspect",
        SEARCHCONSOLE,
        "POST",
        "v1/urlInspection/index:inspect",
        READ,
        url_inspection.inspect,
    ),
    Route(
        "siteVerification.webResource.list",
        GOOGLEAPIS,
        "GET",
        SV_ROOT + "/webResource",
        SV,
        site_verification.list_resources,
    ),
    Route(
        "siteVerification.webResource.get",
        GOOGLEAPIS,
        "GET",
        SV_ROOT + "/webResource/{id}",
        SV,
        site_verification.get_resource,
    ),
    Route(
        "siteVerification.webResource.insert",
        GOOGLEAPIS,
        "POST",
        SV_ROOT + "/webResource",
        SV_VERIFY,
        site_verification.insert,
        frozenset({"verificationMethod"}),
    ),
    Route(
        "siteVerification.webResource.update",
        GOOGLEAPIS,
        "PUT",
        SV_ROOT + "/webResource/{id}",
        SV,
        site_verification.update,
    ),
    Route(
        "siteVerification.webResource.patch",
        GOOGLEAPIS,
        "PATCH",
        SV_ROOT + "/webResource/{id}",
        SV,
        site_verification.patch,
    ),
    Route(
        "siteVerification.webResource.delete",
        GOOGLEAPIS,
        "DELETE",
        SV_ROOT + "/webResource/{id}",
        SV,
        site_verification.delete,
    ),
    Route(
        "siteVerification.webResource.getToken",
        GOOGLEAPIS,
        "POST",
        SV_ROOT + "/token",
        SV_VERIFY,
        site_verification.get_token,
    ),
    Route(
        "indexing.urlNotifications.publish",
        INDEXING,
        "POST",
        "v3/urlNotifications:publish",
        INDEX,
        indexing_api.publish,
    ),
    Route(
        "indexing.urlNotifications.getMetadata",
        INDEXING,
        "GET",
        "v3/urlNotifications/metadata",
        INDEX,
        indexing_api.metadata,
        frozenset({"url"}),
    ),
)
HOSTS = frozenset(route.host for route in ROUTES)


def find(host: str, method: str, segments: list[str]) -> tuple[Route, dict[str, str]] | None:
    for route in ROUTES:
        if route.host == host and route.method == method:
            params = route.match(segments)
            if params is not None:
                return route, params
    return None
