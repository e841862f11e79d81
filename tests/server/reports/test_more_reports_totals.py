"""Every total the new reports state is the sum of the rows it is computed from, on random data
(hypothesis): the weekly sections, content decay's fall, the CTR gaps' extra clicks, new queries'
impressions, and the brand split's buckets."""

from __future__ import annotations

import datetime as dt
import math

from hypothesis import given, settings
from hypothesis import strategies as st

from searchdesk_server.brand import brand_pattern, escaped
from searchdesk_server.tools.reports import ctr_gaps, decay, new_queries, weekly
from searchdesk_server.tools.reports.brand_split import split_row, split_rows
from searchdesk_server.tools.reports.calendar import buckets
from searchdesk_server.tools.reports.periods import Period

counts = st.integers(min_value=0, max_value=5_000)
keys = st.text(alphabet="abcde/", min_size=1, max_size=4)


@st.composite
def sums(draw: st.DrawFn, width: int) -> list[float]:
    out: list[float] = []
    for _ in range(width // 4):
        i = draw(counts)
        c = draw(st.integers(min_value=0, max_value=i))
        pos = draw(st.floats(min_value=1, max_value=40, allow_nan=False))
        out += [float(c), float(i), pos * i, float(i)]
    return out


@settings(max_examples=30, deadline=None)
@given(st.dictionaries(keys, sums(8), max_size=30), st.dictionaries(keys, sums(8), max_size=30))
def test_weekly_sections_add_up(pages: dict[str, list[float]], queries: dict[str, list[float]]) -> None:
    keys_of = weekly.sections(pages, queries)
    for section, listed in keys_of.items():
        src = pages if section.startswith("page") else queries
        t = weekly.section_totals(section, listed, src)
        if section == "query new":
            assert t["impressions"] == sum(src[k][1] for k in listed)
        else:
            assert t["clicks_change"] == sum(src[k][0] - src[k][4] for k in listed)
    # gained and lost together are every change there was
    change = sum(s[0] - s[4] for s in queries.values())
    both = keys_of["query gained"] + keys_of["query lost"]
    assert sum(queries[k][0] - queries[k][4] for k in both) == change


@settings(max_examples=30, deadline=None)
@given(st.dictionaries(keys, sums(4), max_size=40))
def test_ctr_gap_total_is_the_sum_of_its_rows(by_page: dict[str, list[float]]) -> None:
    curve = ctr_gaps.curve(by_page)
    gaps = {k: g for k, s in by_page.items() if (g := ctr_gaps.gap(s, curve)) is not None}
    build = ctr_gaps._builder("page", by_page, curve)
    rows = [build(k) for k in gaps]
    total = round(math.fsum(round(g, 1) for g in gaps.values()), 1)
    assert math.isclose(sum(r["extra_clicks"] for r in rows), total, abs_tol=1e-6)
    for r in rows:
        assert r["clicks"] < r["impressions"] * r["bucket_median_ctr"] * ctr_gaps.GAP_RATIO + 1e-6


@settings(max_examples=30, deadline=None)
@given(st.dictionaries(keys, st.lists(counts, min_size=4, max_size=12), max_size=20))
def test_decay_fall_is_peak_minus_latest(series: dict[str, list[int]]) -> None:
    for clicks in series.values():
        hit = decay.decayed([float(c) for c in clicks])
        if hit is None:
            continue
        peak, below = hit
        assert clicks[peak] == max(clicks) and below == len(clicks) - 1 - peak >= decay.MIN_MONTHS_BELOW
        assert all(c <= clicks[peak] * decay.BELOW_PEAK for c in clicks[peak + 1 :])
        assert clicks[-1] <= clicks[peak] * (1 - decay.MIN_FALL)


@settings(max_examples=30, deadline=None)
@given(st.dictionaries(keys, sums(8), max_size=40))
def test_new_and_rising_are_exactly_the_rule(queries: dict[str, list[float]]) -> None:
    listed = new_queries.order(queries)
    assert len({q for _, q in listed}) == len(listed)
    for kind, q in listed:
        now, before = queries[q][1], queries[q][5]
        if kind == "new":
            assert before <= new_queries.ALMOST_NONE and now >= new_queries.MIN_NEW
        else:
            assert before > new_queries.ALMOST_NONE and now >= max(new_queries.MIN_RISING, before * new_queries.RISE)
    unlisted = set(queries) - {q for _, q in listed}
    assert all(new_queries.classify(queries[q]) is None for q in unlisted)


@settings(max_examples=30, deadline=None)
@given(st.integers(min_value=1, max_value=400), st.booleans(), st.data())
def test_brand_split_buckets_add_up_to_the_whole(days: int, weekly_: bool, data: st.DataObject) -> None:
    period = Period(dt.date(2026, 1, 1), dt.date(2026, 1, 1) + dt.timedelta(days=days - 1))
    by_day = {}
    for i in range(days):
        d = (period.start + dt.timedelta(days=i)).isoformat()
        branded, other = data.draw(sums(4)), data.draw(sums(4))
        private = data.draw(counts)
        by_day[d] = [*branded, *other, branded[0] + other[0] + private, branded[1] + other[1] + private, 0.0, 0.0]
    spans = buckets(period, weekly_)
    assert spans[0].start == period.start and spans[-1].end == period.end
    assert sum(s.days for s in spans) == period.days
    rows = split_rows(spans, by_day)
    whole = [math.fsum(s[k] for s in by_day.values()) for k in range(12)]
    total = split_row(None, whole)
    for part in ("branded_clicks", "non_branded_impressions", "private_clicks", "property_impressions"):
        assert sum(r[part] for r in rows) == total[part], part


ASCII = st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=30)


@given(st.lists(st.text(min_size=1, max_size=12), min_size=1, max_size=5), st.text(max_size=30), ASCII, ASCII)
def test_an_escaped_term_matches_exactly_where_it_occurs(terms: list[str], query: str, term: str, q: str) -> None:
    import re

    for t in terms:
        assert bool(re.search(escaped(t), query)) == (t in query)
    if term:  # one pattern, any letter case (ASCII: Unicode case folding is Google's to define)
        pattern = re.compile(brand_pattern([term.lower(), "x|y", "[z]"]))
        wanted = [term.lower(), "x|y", "[z]"]
        assert bool(pattern.search(q.lower())) == any(t in q.lower() for t in wanted)
