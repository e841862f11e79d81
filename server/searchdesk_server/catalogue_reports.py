"""The catalogue's entries for the reports (arithmetic done here over every row Google returns) and for
SearchDesk's own records: the changes it made and the coverage watch the app keeps
(`catalogue.TOOLS` puts every entry together).

On the start-up path: stdlib only; a handler is named, not imported (`catalogue.resolve`).
"""

from __future__ import annotations

from typing import Final

from .scopes import SCOPE_WM_RO
from .tool_spec import (
    REPORT_DATES,
    REPORT_VS,
    SITE,
    SITE_REQ,
    ToolSpec,
)

REPORT_TOOLS: Final[tuple[ToolSpec, ...]] = (
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
