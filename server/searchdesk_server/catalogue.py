"""The one table of tools.

Registration, scopes, annotations, each tool's handler, the question a guarded tool asks a person,
the quota it counts against, the README's tool table and the docs all derive from `TOOLS`; tests
fail when any of them drifts. Descriptions are read into the model's context on every turn, so each
word must earn its place while keeping the limits the model needs.
This module is on the start-up path: stdlib only. A handler or question builder is named here by its
qualified name and imported on the tool's first call (`resolve`), so tools/list pays for none of
them, and a search for a handler's qualified name finds its entry. docs/architecture.md says where
every other kind of fact lives.
"""

from __future__ import annotations

import copy
import functools
import importlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any, Final, Literal

SCOPE_WM: Final = "https://www.googleapis.com/auth/webmasters"
SCOPE_WM_RO: Final = "https://www.googleapis.com/auth/webmasters.readonly"
SCOPE_SV: Final = "https://www.googleapis.com/auth/siteverification"
SCOPE_SV_VERIFY: Final = "https://www.googleapis.com/auth/siteverification.verify_only"
SCOPE_INDEXING: Final = "https://www.googleapis.com/auth/indexing"

#: Google's token endpoint: the address a service-account key must name (`config` refuses another at
#: start) and where every grant goes (`google/grants.py`, which owns everything else about grants).
TOKEN_URL: Final = "https://oauth2.googleapis.com/token"  # noqa: S105 (an address, not a secret)
#: A scope that grants everything the key's scope grants (used to request the fewest scopes).
SCOPE_IMPLIES: Final[Mapping[str, frozenset[str]]] = {
    SCOPE_WM: frozenset({SCOPE_WM_RO}),
    SCOPE_SV: frozenset({SCOPE_SV_VERIFY}),
}
#: Scopes that can change something; read-only mode names them when a tool brings one in.
WRITE_CAPABLE_SCOPES: Final = frozenset({SCOPE_WM, SCOPE_SV, SCOPE_SV_VERIFY, SCOPE_INDEXING})

Service = Literal["searchconsole", "siteVerification", "indexing", "none"]
Kind = Literal["read", "write", "guarded"]
#: Which Google account a call goes to when the SearchDesk app holds several (accounts.py):
#: "property" the account that sees its property best in Search Console; "verified" one that verified
#: it; "url" one that sees a property containing its URL, owner first; "named" the `account` argument,
#: else the default; "every" each account (the handler merges); "none" no Google call.
Route = Literal["property", "verified", "url", "named", "every", "none"]


class QuotaKind(StrEnum):
    """A daily quota Google enforces and SearchDesk counts before it asks (quota.py keeps the counts)."""

    INDEXING = "indexing"  # key: the Google Cloud project ("project:<id>"), else the account
    INSPECTION = "inspection"  # key: the property (siteUrl)


GROUPS: Final = (
    "essential",
    "sites",
    "sitemaps",
    "analytics",
    "inspection",
    "indexing",
    "verification",
    "reports",
    "changes",
    "coverage",
)


#: What `menu_terse` leaves off a parameter in the menu (the validator still checks it): a lower bound
#: and a count of items. An upper bound stays: 25,000 rows is worth telling a model before it asks.
MENU_UNSAID: Final = frozenset({"minimum", "maxItems"})


@dataclass(frozen=True)
class ToolSpec:
    """One tool: everything the server, the docs and the tests need to know about it."""

    name: str
    group: str
    service: Service
    endpoint: str  # discovery method id(s) it calls, for the docs and the fake's checks
    kind: Kind
    scopes: tuple[str, ...]
    title: str
    description: str
    params: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    required: tuple[str, ...] = ()
    essential: bool = False
    #: Scopes the tool can do without (it reports less); left out in read-only mode.
    optional_scopes: tuple[str, ...] = ()
    #: Registered only with MCP_DIAGNOSTICS=true; never part of groups or presets.
    diagnostic: bool = False
    route: Route = "property"
    #: The handler's qualified name, e.g. "searchdesk_server.tools.sites.list_sites": an async function
    #: of a `runtime.Call` returning a `result.Output`, imported on the first call (`resolve`).
    handler: str = field(kw_only=True)
    #: A guarded tool's question builder, by qualified name: an async function of the call returning
    #: the `approval.question.Question` a person answers before the handler acts. Set for exactly the
    #: guarded tools: this is what makes the approval chain ask.
    question: str | None = field(default=None, kw_only=True)
    #: The daily quota each call spends (the handler counts it in `Runtime.quota`), if any.
    quota: QuotaKind | None = field(default=None, kw_only=True)
    #: The output schema's properties, for a tool that declares them (every schema stays open).
    output: Mapping[str, Mapping[str, Any]] | None = field(default=None, kw_only=True)
    #: Parameters (a dotted path into `params`) whose checks the menu leaves to the validator: a list of
    #: values Google's own API defines under the same names, which a model knows; a lower bound nobody
    #: would cross (1 row, row 0), a count of filters, a filter's required keys. The validator names
    #: each on any other value. Checked exactly as before (`input_schema`); only the menu
    #: (`menu_schema`) is shorter, by the characters every turn would otherwise pay for.
    menu_terse: tuple[str, ...] = field(default=(), kw_only=True)

    def __post_init__(self) -> None:
        if (self.kind == "guarded") != (self.question is not None):
            raise ValueError(f"{self.name}: a guarded tool names its question builder, and only a guarded tool does")

    @property
    def write(self) -> bool:
        return self.kind != "read"

    @property
    def guarded(self) -> bool:
        """Asks a person before acting: it has a question to ask."""
        return self.question is not None

    @property
    def groups(self) -> tuple[str, ...]:
        return (self.group, "essential") if self.essential else (self.group,)

    @property
    def annotations(self) -> dict[str, bool]:
        """All four hints, always explicit: a client may not assume defaults."""
        return {
            "readOnlyHint": not self.write,
            "destructiveHint": self.guarded,
            "idempotentHint": True,
            "openWorldHint": False,
        }

    @property
    def input_schema(self) -> dict[str, Any]:
        """The tool's parameters; a guarded tool also takes the two-call token (`confirm_token`)."""
        schema: dict[str, Any] = {"type": "object"}
        params = {**self.params, "confirm_token": TOKEN} if self.guarded else self.params
        if params:
            schema["properties"] = {k: dict(v) for k, v in params.items()}
        if self.required:
            schema["required"] = list(self.required)
        return schema

    @property
    def menu_schema(self) -> dict[str, Any]:
        """The input schema as tools/list shows it: `input_schema` with each `menu_terse` parameter's
        list of values replaced by its type (string), and its `MENU_UNSAID` checks left out. The
        validator keeps checking `input_schema`."""
        schema = copy.deepcopy(self.input_schema)  # nested mappings are the catalogue's own
        for path in self.menu_terse:
            *parents, leaf = path.split(".")
            props = schema["properties"]
            for name in parents:
                props = props[name]["items"]["properties"] if "items" in props[name] else props[name]["properties"]
            said = {k: v for k, v in props[leaf].items() if k not in MENU_UNSAID}
            items = said.get("items", {})
            if "enum" in said:
                said = {"type": "string"}
            elif "enum" in items:  # a list of names, each one of Google's
                said["items"] = {"type": "string"}
            elif "required" in items:
                said["items"] = {k: v for k, v in items.items() if k != "required"}
            if said == props[leaf]:
                raise ValueError(f"{self.name}: menu_terse names {path}, which has nothing to leave out")
            props[leaf] = said
        return schema

    @property
    def output_schema(self) -> dict[str, Any]:
        # Open on purpose: an odd Google answer must never make the schema refuse a result.
        if self.output:
            return {"type": "object", "properties": {k: dict(v) for k, v in self.output.items()}}
        return {"type": "object"}


# --- parameter shapes (kept terse: every character is paid for on every turn) -------------------

MAX_ID = 2048
MAX_OWNER = 254

# String ceilings (2,048 for ids and URLs) are enforced by `validate` and not repeated on the menu.
SITE: Final[Mapping[str, Any]] = {"type": "string"}
SITE_REQ: Final = SITE  # same shape; listed in `required`, so GSC_SITE_URL is never assumed
URL: Final = SITE
FEEDPATH: Final = URL
LANG: Final = SITE
TOKEN: Final = SITE
ACCOUNT: Final = SITE  # a Google account's e-mail, as list_sites shows it
DIMENSIONS: Final = ("date", "query", "page", "country", "device", "searchAppearance", "hour")
PERIODS: Final = (
    "today",
    "yesterday",
    "last7days",
    "last28days",
    "last3months",
    "last6months",
    "last12months",
    "last16months",
)
OPERATORS: Final = ("equals", "notEquals", "contains", "notContains", "includingRegex", "excludingRegex")
SEARCH_TYPES: Final = ("web", "image", "video", "news", "discover", "googleNews")
DATA_STATES: Final = ("final", "all", "hourly_all")
AGGREGATIONS: Final = ("auto", "byPage", "byProperty")
VERIFY_METHODS: Final = ("DNS", "FILE", "META")
MAX_ROWS = 25_000
DEFAULT_ROWS = 100

REPORT_DATES: Final[Mapping[str, Mapping[str, Any]]] = {"site": SITE, "start_date": SITE, "end_date": SITE}
REPORT_VS: Final = SITE  # previous | year | YYYY-MM-DD

GUARD_NOTE = " Asks a person first."

TOOLS: Final[tuple[ToolSpec, ...]] = (
    # --- sites ------------------------------------------------------------------------------
    ToolSpec(
        name="list_sites",
        group="sites",
        service="searchconsole",
        endpoint="webmasters.sites.list",
        kind="read",
        scopes=(SCOPE_WM_RO,),
        title="List properties",
        description="Your properties and your permission on each.",
        essential=True,
        route="every",
        handler="searchdesk_server.tools.sites.list_sites",
    ),
    ToolSpec(
        name="get_site",
        group="sites",
        service="searchconsole",
        endpoint="webmasters.sites.get",
        kind="read",
        scopes=(SCOPE_WM_RO,),
        title="Get property",
        description="One property's permission level.",
        params={"site": SITE},
        essential=True,
        handler="searchdesk_server.tools.sites.get_site",
    ),
    ToolSpec(
        name="add_site",
        group="sites",
        service="searchconsole",
        endpoint="webmasters.sites.add",
        kind="write",
        scopes=(SCOPE_WM,),
        title="Add property",
        description="Add a property (unverified until verify_site).",
        params={"site": SITE_REQ, "account": ACCOUNT},
        required=("site",),
        route="named",
        handler="searchdesk_server.tools.sites.add_site",
    ),
    ToolSpec(
        name="delete_site",
        group="sites",
        service="searchconsole",
        endpoint="webmasters.sites.delete",
        kind="guarded",
        scopes=(SCOPE_WM,),
        title="Delete property",
        description="Remove a property from this account's list." + GUARD_NOTE,
        params={"site": SITE_REQ},
        required=("site",),
        handler="searchdesk_server.tools.sites.delete_site",
        question="searchdesk_server.approval.builders.delete_site",
    ),
    # --- sitemaps ---------------------------------------------------------------------------
    ToolSpec(
        name="list_sitemaps",
        group="sitemaps",
        service="searchconsole",
        endpoint="webmasters.sitemaps.list",
        kind="read",
        scopes=(SCOPE_WM_RO,),
        title="List sitemaps",
        description="Sitemaps: errors, warnings, URL counts.",
        params={"site": SITE, "sitemap_index": SITE},
        essential=True,
        handler="searchdesk_server.tools.sitemaps.list_sitemaps",
    ),
    ToolSpec(
        name="get_sitemap",
        group="sitemaps",
        service="searchconsole",
        endpoint="webmasters.sitemaps.get",
        kind="read",
        scopes=(SCOPE_WM_RO,),
        title="Get sitemap",
        description="One sitemap's status and counts.",
        params={"site": SITE, "feedpath": FEEDPATH},
        required=("feedpath",),
        handler="searchdesk_server.tools.sitemaps.get_sitemap",
    ),
    ToolSpec(
        name="submit_sitemap",
        group="sitemaps",
        service="searchconsole",
        endpoint="webmasters.sitemaps.submit",
        kind="write",
        scopes=(SCOPE_WM,),
        title="Submit sitemap",
        description="Submit or resubmit a sitemap.",
        params={"site": SITE, "feedpath": FEEDPATH},
        required=("feedpath",),
        handler="searchdesk_server.tools.sitemaps.submit_sitemap",
    ),
    ToolSpec(
        name="submit_sitemaps",
        group="sitemaps",
        service="searchconsole",
        endpoint="webmasters.sitemaps.submit",
        kind="write",
        scopes=(SCOPE_WM,),
        title="Submit sitemaps",
        description="Submit 1-50 sitemaps; a result per sitemap.",
        params={
            "site": SITE,
            "feedpaths": {
                "type": "array",
                "items": SITE,
                "minItems": 1,
                "maxItems": 50,
            },
        },
        required=("feedpaths",),
        handler="searchdesk_server.tools.sitemaps.submit_sitemaps",
    ),
    ToolSpec(
        name="delete_sitemap",
        group="sitemaps",
        service="searchconsole",
        endpoint="webmasters.sitemaps.delete",
        kind="guarded",
        scopes=(SCOPE_WM,),
        title="Delete sitemap",
        description="Remove a sitemap and its submission history (submit_sitemap re-adds it)." + GUARD_NOTE,
        params={"site": SITE_REQ, "feedpath": FEEDPATH},
        required=("site", "feedpath"),
        handler="searchdesk_server.tools.sitemaps.delete_sitemap",
        question="searchdesk_server.approval.builders.delete_sitemap",
    ),
    # --- analytics --------------------------------------------------------------------------
    ToolSpec(
        name="query_search_analytics",
        group="analytics",
        service="searchconsole",
        endpoint="webmasters.searchanalytics.query",
        kind="read",
        scopes=(SCOPE_WM_RO,),
        title="Search performance",
        description="Clicks, impressions, CTR, position. period, or start_date+end_date (YYYY-MM-DD, Pacific); "
        "default last28days, 100 rows. all_rows: up to 200,000 rows to a CSV.",
        params={
            "site": SITE,
            "period": {"enum": list(PERIODS)},
            "start_date": SITE,
            "end_date": SITE,
            "dimensions": {"type": "array", "items": {"enum": list(DIMENSIONS)}},
            "type": {"enum": list(SEARCH_TYPES)},
            "data_state": {"enum": list(DATA_STATES)},
            "aggregation_type": {"enum": list(AGGREGATIONS)},
            "filters": {
                "type": "array",
                "maxItems": 20,
                "items": {
                    "type": "object",
                    "properties": {
                        "dimension": {"enum": ["query", "page", "country", "device", "searchAppearance"]},
                        "operator": {"enum": list(OPERATORS)},
                        "expression": SITE,
                    },
                    "required": ["dimension", "expression"],
                },
            },
            "filter_match": {"enum": ["all", "any"]},
            "row_limit": {"type": "integer", "minimum": 1, "maximum": MAX_ROWS},
            "start_row": {"type": "integer", "minimum": 0},
            "all_rows": {"type": "boolean"},
        },
        essential=True,
        handler="searchdesk_server.tools.analytics.tool.query_search_analytics",
        menu_terse=(
            "dimensions",
            "type",
            "data_state",
            "aggregation_type",
            "filters",
            "filters.dimension",
            "filters.operator",
            "row_limit",
            "start_row",
        ),
    ),
    # --- inspection -------------------------------------------------------------------------
    ToolSpec(
        name="inspect_url",
        group="inspection",
        service="searchconsole",
        endpoint="searchconsole.urlInspection.index.inspect",
        kind="read",
        scopes=(SCOPE_WM_RO,),
        title="Inspect URL",
        description="A URL's index status: coverage, crawl, canonical, rich results.",
        params={"site": SITE, "url": URL, "language_code": LANG},
        required=("url",),
        essential=True,
        handler="searchdesk_server.tools.inspection.inspect_url",
        quota=QuotaKind.INSPECTION,
    ),
    ToolSpec(
        name="inspect_urls",
        group="inspection",
        service="searchconsole",
        endpoint="searchconsole.urlInspection.index.inspect",
        kind="read",
        scopes=(SCOPE_WM_RO,),
        title="Inspect URLs",
        description="Index status verdicts for 1-20 URLs (2,000 inspections/day per property).",
        params={
            "site": SITE,
            "urls": {
                "type": "array",
                "items": SITE,
                "minItems": 1,
                "maxItems": 20,
            },
            "language_code": LANG,
        },
        required=("urls",),
        handler="searchdesk_server.tools.inspection.inspect_urls",
        quota=QuotaKind.INSPECTION,
    ),
    # --- indexing ---------------------------------------------------------------------------
    ToolSpec(
        name="request_indexing",
        group="indexing",
        service="indexing",
        endpoint="indexing.urlNotifications.publish",
        kind="write",
        scopes=(SCOPE_INDEXING,),
        title="Request indexing",
        description="Notify Google's Indexing API of an updated URL (URL_UPDATED: crawl it again) or a deleted one "
        "(URL_DELETED: remove the page from Google's results; only for a page that is gone). Google acts on it "
        "only for job-posting and livestream pages; 200 a day; needs Owner.",
        params={"url": URL, "type": {"enum": ["URL_UPDATED", "URL_DELETED"]}},
        required=("url",),
        route="url",
        handler="searchdesk_server.tools.indexing.request_indexing",
        quota=QuotaKind.INDEXING,
    ),
    ToolSpec(
        name="get_indexing_status",
        group="indexing",
        service="indexing",
        endpoint="indexing.urlNotifications.getMetadata",
        kind="read",
        scopes=(SCOPE_INDEXING,),
        title="Indexing status",
        description="Last Indexing API notifications for a URL.",
        params={"url": URL},
        required=("url",),
        route="url",
        handler="searchdesk_server.tools.indexing.get_indexing_status",
    ),
    # --- verification -----------------------------------------------------------------------
    ToolSpec(
        name="list_verified_sites",
        group="verification",
        service="siteVerification",
        endpoint="siteVerification.webResource.list",
        kind="read",
        scopes=(SCOPE_SV,),
        title="List verified sites",
        description="Sites and domains this account has verified, with owners.",
        route="every",
        handler="searchdesk_server.tools.verification.list_verified_sites",
    ),
    ToolSpec(
        name="get_verified_site",
        group="verification",
        service="siteVerification",
        endpoint="siteVerification.webResource.get",
        kind="read",
        scopes=(SCOPE_SV,),
        title="Get verified site",
        description="One verified site's owners.",
        params={"site": SITE_REQ},
        required=("site",),
        route="verified",
        handler="searchdesk_server.tools.verification.get_verified_site",
    ),
    ToolSpec(
        name="get_verification_token",
        group="verification",
        service="siteVerification",
        endpoint="siteVerification.webResource.getToken",
        kind="read",
        scopes=(SCOPE_SV_VERIFY,),
        title="Get verification token",
        description="The token to place for verify_site. Domain properties: DNS only (default); URL prefix: "
        "META (default) or FILE.",
        params={"site": SITE_REQ, "method": {"enum": list(VERIFY_METHODS)}, "account": ACCOUNT},
        required=("site",),
        route="named",
        handler="searchdesk_server.tools.verification.get_verification_token",
    ),
    ToolSpec(
        name="verify_site",
        group="verification",
        service="siteVerification",
        endpoint="siteVerification.webResource.insert",
        kind="write",
        scopes=(SCOPE_SV_VERIFY,),
        title="Verify site",
        description="Check the placed token and become a verified owner.",
        params={"site": SITE_REQ, "method": {"enum": list(VERIFY_METHODS)}, "account": ACCOUNT},
        required=("site",),
        route="named",
        handler="searchdesk_server.tools.verification.verify_site",
    ),
    ToolSpec(
        name="unverify_site",
        group="verification",
        service="siteVerification",
        endpoint="siteVerification.webResource.delete",
        kind="guarded",
        scopes=(SCOPE_SV,),
        title="Unverify site",
        description="Give up verified ownership: the site's properties lose access." + GUARD_NOTE,
        params={"site": SITE_REQ},
        required=("site",),
        route="verified",
        handler="searchdesk_server.tools.verification.unverify_site",
        question="searchdesk_server.approval.builders.unverify_site",
    ),
    ToolSpec(
        name="update_site_owners",
        group="verification",
        service="siteVerification",
        endpoint="siteVerification.webResource.update",
        kind="guarded",
        scopes=(SCOPE_SV,),
        title="Set site owners",
        description="Replace the verified owners: owners is the complete list afterwards." + GUARD_NOTE,
        params={
            "site": SITE_REQ,
            "owners": {
                "type": "array",
                "items": {"type": "string", "minLength": 3, "maxLength": MAX_OWNER},
                "minItems": 1,
                "maxItems": 100,
            },
        },
        required=("site", "owners"),
        route="verified",
        handler="searchdesk_server.tools.verification.update_site_owners",
        question="searchdesk_server.approval.builders.update_site_owners",
    ),
    ToolSpec(
        name="setup_site",
        group="verification",
        service="searchconsole",
        endpoint="webmasters.sites.list + siteVerification.webResource.getToken",
        kind="read",
        scopes=(SCOPE_WM_RO,),
        title="Set up property",
        description="Where a property stands (ready / needs property / needs verification) and the exact next steps.",
        params={"site": SITE_REQ, "account": ACCOUNT},
        required=("site",),
        optional_scopes=(SCOPE_SV_VERIFY,),
        route="named",
        handler="searchdesk_server.tools.setup.setup_site",
    ),
    # --- reports (tools/reports/: arithmetic done here over every row Google returns) ---------
    ToolSpec(
        name="compare_periods",
        group="reports",
        service="searchconsole",
        endpoint="webmasters.searchanalytics.query",
        kind="read",
        scopes=(SCOPE_WM_RO,),
        title="Compare periods",
        description="Per-key metrics in two periods with changes (abs, %) and totals checked against the property, "
        "biggest change in sort first. Final data; default last 28 days; vs: previous, year or a start date.",
        params={
            **REPORT_DATES,
            "vs": REPORT_VS,
            "by": {"enum": ["page", "query", "country", "device"]},
            "sort": {"enum": ["clicks", "impressions", "ctr", "position"]},
        },
        handler="searchdesk_server.tools.reports.compare_periods.compare_periods",
    ),
    ToolSpec(
        name="report_traffic_drops",
        group="reports",
        service="searchconsole",
        endpoint="webmasters.searchanalytics.query",
        kind="read",
        scopes=(SCOPE_WM_RO,),
        title="Traffic drops",
        description="Pages or queries that lost the most clicks between two periods, each with a rule-based likely "
        "cause. Dates as compare_periods.",
        params={**REPORT_DATES, "vs": REPORT_VS, "by": {"enum": ["page", "query"]}},
        handler="searchdesk_server.tools.reports.traffic_drops.report_traffic_drops",
    ),
    ToolSpec(
        name="report_quick_wins",
        group="reports",
        service="searchconsole",
        endpoint="webmasters.searchanalytics.query",
        kind="read",
        scopes=(SCOPE_WM_RO,),
        title="Quick wins",
        description="Queries or pages at positions 4-20 whose CTR is below an average CTR curve, ranked by "
        "estimated extra clicks. Final data; default last 28 days.",
        params={**REPORT_DATES, "by": {"enum": ["query", "page"]}},
        handler="searchdesk_server.tools.reports.quick_wins.report_quick_wins",
    ),
    ToolSpec(
        name="report_cannibalisation",
        group="reports",
        service="searchconsole",
        endpoint="webmasters.searchanalytics.query",
        kind="read",
        scopes=(SCOPE_WM_RO,),
        title="Cannibalisation",
        description="Queries where several of the site's pages split the impressions, with each page's share. "
        "Final data; default last 28 days.",
        params=dict(REPORT_DATES),
        handler="searchdesk_server.tools.reports.cannibalisation.report_cannibalisation",
    ),
    # Issue 38: five more reports (weekly summary, content decay, CTR gaps, new queries, brand split).
    ToolSpec(
        name="report_weekly_summary",
        group="reports",
        service="searchconsole",
        endpoint="webmasters.searchanalytics.query",
        kind="read",
        scopes=(SCOPE_WM_RO,),
        title="Weekly summary",
        description="Last full Mon-Sun week vs the week before and a year earlier: totals, top gaining and losing "
        "pages and queries, new queries.",
        params={"site": SITE},
        handler="searchdesk_server.tools.reports.weekly.report_weekly_summary",
    ),
    ToolSpec(
        name="report_content_decay",
        group="reports",
        service="searchconsole",
        endpoint="webmasters.searchanalytics.query",
        kind="read",
        scopes=(SCOPE_WM_RO,),
        title="Content decay",
        description="Pages whose monthly clicks fell steadily from a peak, back as far as the saved history goes.",
        params={"site": SITE, "months": {"type": "integer", "minimum": 4, "maximum": 36}},
        handler="searchdesk_server.tools.reports.decay.report_content_decay",
    ),
    ToolSpec(
        name="report_ctr_gaps",
        group="reports",
        service="searchconsole",
        endpoint="webmasters.searchanalytics.query",
        kind="read",
        scopes=(SCOPE_WM_RO,),
        title="CTR gaps",
        description="Pages or queries with CTR under half the site's own median at their position, with clicks "
        "at the median. Default last 28 days.",
        params={**REPORT_DATES, "by": {"enum": ["page", "query"]}},
        handler="searchdesk_server.tools.reports.ctr_gaps.report_ctr_gaps",
    ),
    ToolSpec(
        name="report_new_queries",
        group="reports",
        service="searchconsole",
        endpoint="webmasters.searchanalytics.query",
        kind="read",
        scopes=(SCOPE_WM_RO,),
        title="New queries",
        description="Queries new since the period before, and the fastest rising, each with its page. Default "
        "last 28 days.",
        params=dict(REPORT_DATES),
        handler="searchdesk_server.tools.reports.new_queries.report_new_queries",
    ),
    ToolSpec(
        name="report_brand_split",
        group="reports",
        service="searchconsole",
        endpoint="webmasters.searchanalytics.query",
        kind="read",
        scopes=(SCOPE_WM_RO,),
        title="Brand split",
        description="Branded vs other clicks and impressions by week. terms: brand words (default: the saved "
        "list, else the domain). Default 13 weeks.",
        params={
            **REPORT_DATES,
            "terms": {"type": "array", "items": {"type": "string", "maxLength": 100}, "minItems": 1, "maxItems": 20},
        },
        handler="searchdesk_server.tools.reports.brand_split.report_brand_split",
    ),
    # --- changes (journal/: SearchDesk's own record on this computer; no Google call) -------------
    ToolSpec(
        name="list_changes",
        group="changes",
        service="none",
        endpoint="none (SearchDesk's record of changes on this computer)",
        kind="read",
        scopes=(),
        title="List changes",
        description="What SearchDesk changed at Google from this computer, and guarded calls declined or refused, "
        "newest first; only accounts and properties Claude may use now. Dates YYYY-MM-DD (UTC).",
        params=dict(REPORT_DATES),
        route="none",
        handler="searchdesk_server.tools.changes.list_changes",
    ),
    # --- coverage (coverage/: SearchDesk's own watch, kept by the app; read only) ------------------
    ToolSpec(
        name="index_coverage",
        group="coverage",
        service="searchconsole",
        endpoint="webmasters.sites.get (access now); SearchDesk's own URL inspections on this computer",
        kind="read",
        scopes=(SCOPE_WM_RO,),
        title="Index coverage",
        description="Which of a property's pages are in Google, from SearchDesk's own background inspections "
        "(not Google's report): counts by verdict and coverage state; state: its pages; since (YYYY-MM-DD): "
        "what changed.",
        params={"site": SITE_REQ, "state": SITE, "since": SITE, "start_row": {"type": "integer", "minimum": 0}},
        required=("site",),
        handler="searchdesk_server.tools.coverage.index_coverage",
        output={"by_coverage": {"type": "object"}, "pages": {"type": "array"}},
    ),
)


#: Tools for troubleshooting, registered only with MCP_DIAGNOSTICS=true.
DIAGNOSTIC_TOOLS: Final[tuple[ToolSpec, ...]] = (
    ToolSpec(
        name="describe_connection",
        group="diagnostics",
        service="none",
        endpoint="none (SearchDesk's own state)",
        kind="read",
        scopes=(),
        title="Describe connection",
        description="How this server is set up and how a destructive call would ask a person right now.",
        diagnostic=True,
        route="none",
        handler="searchdesk_server.tools.diagnostics.describe_connection",
    ),
)


@dataclass(frozen=True)
class Catalogue:
    """The tools a server may offer. A server is built from `CATALOGUE`; a test may build one from a
    copy with a tool added (`adding`) and the whole chain serves it with no other change."""

    tools: tuple[ToolSpec, ...]
    diagnostic_tools: tuple[ToolSpec, ...] = ()
    by_name: Mapping[str, ToolSpec] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "by_name", {t.name: t for t in (*self.tools, *self.diagnostic_tools)})

    def all_tools(self, diagnostics: bool) -> tuple[ToolSpec, ...]:
        return (*self.tools, *self.diagnostic_tools) if diagnostics else self.tools

    def group_members(self, group: str) -> tuple[str, ...]:
        return tuple(t.name for t in self.tools if group in t.groups)

    def adding(self, *specs: ToolSpec) -> Catalogue:
        return replace(self, tools=(*self.tools, *specs))


CATALOGUE: Final = Catalogue(TOOLS, DIAGNOSTIC_TOOLS)
BY_NAME: Final[Mapping[str, ToolSpec]] = CATALOGUE.by_name


def group_members(group: str) -> tuple[str, ...]:
    return CATALOGUE.group_members(group)


def all_tools(diagnostics: bool) -> tuple[ToolSpec, ...]:
    return CATALOGUE.all_tools(diagnostics)


@functools.cache
def resolve(qualified_name: str) -> Any:
    """The function a spec names (`handler`, `question`), importing its module now: the first call of a
    tool pays for its imports, tools/list never does."""
    module, _, name = qualified_name.rpartition(".")
    return getattr(importlib.import_module(module), name)


def minimal_scopes(scopes: Iterable[str]) -> tuple[str, ...]:
    """The fewest scopes granting all of `scopes` (a writer scope covers its read-only twin)."""
    wanted = set(scopes)
    for broad, narrow in SCOPE_IMPLIES.items():
        if broad in wanted:
            wanted -= narrow
    return tuple(sorted(wanted))
