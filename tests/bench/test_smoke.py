"""The benchmark harness must not rot: one smoke round of our own measurements (no peers, nothing written).

Not a timed test: it checks that every measurement produced a figure, never how fast anything was.
"""

from __future__ import annotations

import copy
import functools
import json
import math
import operator
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "performance.md"
OURS = {"SearchDesk, all tools", "SearchDesk, essential preset", "SearchDesk --demo"}
FLOOR = "MCP SDK floor (one-tool MCPServer)"
BEFORE = "SearchDesk, all tools, before"  # the smoke run's `--before HEAD`

# One worker runs the whole module, so `make test -n 2` starts the smoke run once, not once per worker.
pytestmark = pytest.mark.xdist_group("bench_smoke")


def _finite(value: Any) -> bool:
    return isinstance(value, int | float) and math.isfinite(value)


@pytest.fixture(scope="module")
def smoke() -> dict[str, Any]:
    before = DOC.read_bytes() if DOC.exists() else None
    proc = subprocess.run(
        [sys.executable, "tests/bench/run.py", "--smoke", "--before", "HEAD"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert proc.returncode == 0, f"the smoke run failed:\n{proc.stderr[-4000:]}"
    after = DOC.read_bytes() if DOC.exists() else None
    assert after == before, "a smoke run must never rewrite docs/performance.md"
    return json.loads(proc.stdout)


@pytest.mark.slow
def test_every_cold_start_of_ours_and_the_floor_ran_and_no_peer_was_installed(smoke: dict[str, Any]) -> None:
    assert smoke["smoke"] is True and smoke["runs"] == 1
    assert smoke["failures"] == []
    cold = smoke["cold_start"]
    assert set(cold) == {FLOOR, *OURS, BEFORE}  # no peers and no frozen bundle in a smoke run
    for name, c in cold.items():
        assert not c["error"], (name, c["error"])
        assert c["n"] == 1 and _finite(c["median_s"]) and c["median_s"] > 0, name
        assert c["protocol"] == "2025-11-25", name
        assert _finite(c["rss_after_list_mib"]), name
        assert c["cpu_s"]["n"] == 1 and _finite(c["cpu_s"]["median"]), name


@pytest.mark.slow
def test_the_start_ups_before_and_after_were_paired(smoke: dict[str, Any]) -> None:
    """`--before REF` starts the earlier commit's server and app beside this tree's, round by round."""
    from tests.bench.before import markdown

    before = smoke["before"]
    assert before["ref"] == "HEAD" and before["errors"] == []
    assert set(before["pairs"]) == {
        "the server (spawn → tools/list)",
        "the app (its start-up imports)",
        "the app's CPU for those imports",
    }
    for what, pair in before["pairs"].items():
        assert pair["now"]["n"] == pair["before"]["n"] == pair["ratio"]["n"] == 1, what
        assert _finite(pair["ratio"]["median"]) and pair["ratio"]["median"] > 0, what
    assert markdown(before)[0].startswith("## Start-up before and after (`--before HEAD`")


@pytest.mark.slow
def test_menu_sizes_add_up(smoke: dict[str, Any]) -> None:
    full = smoke["menu"]["SearchDesk, all tools"]
    essential = smoke["menu"]["SearchDesk, essential preset"]
    assert 0 < essential["tools"] < full["tools"]
    for menu in (full, essential):
        assert sum(menu["parts"].values()) == menu["total"]
        assert all(part >= 0 for part in menu["parts"].values())
        assert menu["tokens_estimate"] == round(menu["total"] / 4)
        assert len(menu["per_tool"]) == menu["tools"]


@pytest.mark.slow
def test_result_processing_batch_and_approval_produced_figures(smoke: dict[str, Any]) -> None:
    a = smoke["analytics"]
    assert a["runs"] == 1
    for key in ("wall_s", "cpu_s", "rss_after_list_mib", "rss_after_call_mib"):
        assert _finite(a[key]["median"]), key
    assert a["rss_after_call_mib"]["median"] >= a["rss_after_list_mib"]["median"]
    assert 0 < a["text_bytes"] <= 100_000 and 0 < a["structured_bytes"] <= 100_000
    assert a["google_bytes"] > 1_000_000
    assert _finite(a["in_process"]["tool_s"]["median"])
    assert a["profile"] and a["profile"]["by_category"]

    b = smoke["batch"]
    assert b["statuses"] == {"inspected": 20}
    assert b["max_in_flight"] >= 1 and _finite(b["wall_s"]["median"])
    transient, persistent = b["at_429"].values()
    assert transient["answered_429"] == 1 and transient["statuses"] == {"inspected": 20}
    assert persistent["answered_429"] >= 1 and persistent["statuses"].get("not attempted", 0) > 0

    ap = smoke["approval"]
    assert ap["runs"] == 1
    for label in ("first", "second"):
        assert _finite(ap[label]["added_s"]["median"]), label
        assert "approval/request" in ap[label]["agent_methods"], label


def _figures() -> list[tuple[tuple[str, ...], float, str]]:
    """(where a target's figure sits in the run, its limit, how the target's name starts)."""
    from tests.bench import report
    from tests.bench.coverage import IDLE_WAKES_PER_MINUTE, SITEMAP_CPU_S, SITEMAP_EXTRA_MIB

    return [
        *((("cold_start", name, "ratio_to_floor"), report.COLD_START_RATIO, f"Cold start, {name}:") for name in OURS),
        (("menu", "SearchDesk, all tools", "per_tool_avg"), report.MENU_PER_TOOL, "Menu: ≤"),
        (("menu", "SearchDesk, essential preset", "total"), report.MENU_ESSENTIAL, "Menu: essential"),
        (("analytics", "cpu_s", "median"), report.CPU_BUDGET_S, "25,000-row answer: ≤ 0.25 s of our CPU"),
        (("analytics", "cpu_s", "median"), report.LIVE_CPU_S, "25,000-row answer: ≤ 0.12 s of our CPU"),
        (("analytics", "in_process", "tool_s", "median"), report.CPU_BUDGET_S, "25,000-row answer: ≤ 0.25 s for"),
        (("batch", "wall_s", "median"), report.BATCH_WALL_S, "inspect_urls × 20"),
        (("batch", "peak_per_minute"), report.INSPECTION_PER_MINUTE, "inspect_urls: ≤"),
        (("approval", "first", "added_s", "median"), report.APPROVAL_S, "Approval round trip"),
        (("coverage_reader", "sitemap", "cpu_s", "median"), SITEMAP_CPU_S, "Coverage: a "),
        (("coverage_reader", "sitemap", "peak_mib"), SITEMAP_EXTRA_MIB, "Coverage: that sitemap"),
        (("coverage_reader", "idle", "wakes_per_minute"), IDLE_WAKES_PER_MINUTE, "Coverage: the idle watcher"),
    ]


@pytest.mark.slow
def test_every_target_has_a_verdict_that_follows_its_figure(smoke: dict[str, Any]) -> None:
    """Each verdict is worked out from the run's own figure: set that figure under, then over, its
    limit in a copy of this run, and the verdict must turn from met to missed."""
    from tests.bench import report

    figures = _figures()
    assert len(smoke["targets"]) == len(figures)  # no peer and no frozen bundle in a smoke run
    for target in smoke["targets"]:
        assert target["met"] in (True, False) and target["measured"] != "not measured", target
    for path, limit, name in figures:
        for value, met in ((limit * 0.5, True), (limit * 1.5, False)):
            run = copy.deepcopy(smoke)
            *outer, last = path
            functools.reduce(operator.getitem, outer, run)[last] = value
            (target,) = [t for t in report.targets(run) if t["target"].startswith(name)]
            assert target["met"] is met, (name, value, target)


@pytest.mark.slow
def test_the_archive_and_app_folder_verdicts_follow_their_figures(smoke: dict[str, Any]) -> None:
    """A smoke run has neither the archive's fixture nor a bundle; given both, issue 28's four targets
    appear and each turns from met to missed as its figure crosses its limit."""
    from tests.bench import report

    def figure(median: float) -> dict[str, float]:
        return {"median": median, "min": median, "max": median, "n": 5}

    limits = {
        "Archive: year over year": ("yoy_by_page_s", report.ARCHIVE_YOY_S),
        "Archive: copying one day": ("copy_day_cpu_s", report.ARCHIVE_COPY_DAY_S),
        "Archive: 16 months": ("size_bytes", report.ARCHIVE_FILE_BYTES),
        "The app folder": ("du_bytes", report.APP_FOLDER_MIB * 2**20),
    }
    for factor, met in ((0.5, True), (1.5, False)):
        run = copy.deepcopy(smoke)
        values = {key: limit * factor for key, limit in limits.values()}
        run["archive"] = {
            "rows": 20_000_000,
            "yoy_by_page_s": figure(values["yoy_by_page_s"]),
            "copy_day_cpu_s": figure(values["copy_day_cpu_s"]),
            "size_bytes": values["size_bytes"],
        }
        run["bundle"] = {"present": True, "entries": {report.APP_FOLDER: {"du_bytes": values["du_bytes"]}}}
        found = {name: [t for t in report.targets(run) if t["target"].startswith(name)] for name in limits}
        for name, targets in found.items():
            assert len(targets) == 1 and targets[0]["met"] is met, (name, factor, targets)


@pytest.mark.slow
def test_the_report_renders(smoke: dict[str, Any]) -> None:
    from tests.bench import report

    text = report.render(smoke)
    for section in (
        "## 1. Cold start",
        "## 2. Menu size",
        "## 3. Peak RSS",
        "## 4. Result processing",
        "## 5. Batch",
        "## 6. Approval",
        "## 7. Frozen",
    ):
        assert section in text, section
    assert not re.search(r"\bnan\b", text, re.IGNORECASE), "a figure was not measured"


def test_smoke_refuses_to_write_the_report(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "tests/bench/run.py", "--smoke", "--write", str(tmp_path / "x.md")],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 2 and "never writes" in proc.stderr
    assert not (tmp_path / "x.md").exists()
