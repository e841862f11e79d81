"""The reports on the menu: read-only, in the reports group users can switch off, and short."""

from __future__ import annotations

import json

from searchdesk_server import catalogue, scopes
from searchdesk_server.config import load
from searchdesk_server.server import tool_definitions

REPORTS = (
    "compare_periods",
    "report_traffic_drops",
    "report_quick_wins",
    "report_cannibalisation",
    "report_weekly_summary",
    "report_content_decay",
    "report_ctr_gaps",
    "report_new_queries",
    "report_brand_split",
)


def test_reports_are_reads_in_their_own_group() -> None:
    assert catalogue.group_members("reports") == REPORTS
    for name in REPORTS:
        spec = catalogue.BY_NAME[name]
        assert spec.kind == "read" and spec.scopes == (scopes.SCOPE_WM_RO,)
        assert spec.annotations == {
            "readOnlyHint": True,
            "destructiveHint": False,
            "idempotentHint": True,
            "openWorldHint": False,
        }


def test_the_reports_group_can_be_switched_off_and_stays_in_read_only_mode() -> None:
    assert not set(REPORTS) & set(load({"GSC_DENY_TOOLS": "reports"}).tools)
    assert set(REPORTS) <= set(load({"GSC_READ_ONLY": "true"}).tools)
    assert load({"GSC_ALLOW_TOOLS": "reports"}).tools == REPORTS


def test_each_report_costs_little_on_the_menu() -> None:
    """Every entry is read on every turn; the whole menu's average stays ≤ 500 (test_menu checks the wire)."""
    sizes = {
        t.name: len(json.dumps(t.model_dump(by_alias=True, exclude_none=True, mode="json"), separators=(",", ":")))
        for t in tool_definitions(tuple(s.name for s in catalogue.TOOLS))
    }
    assert all(sizes[name] <= 700 for name in REPORTS), {n: sizes[n] for n in REPORTS}
    assert sum(sizes[n] for n in REPORTS) / len(REPORTS) <= 560
    assert sum(sizes.values()) / len(sizes) <= 480  # room left under 500 for the list's own wrapper
