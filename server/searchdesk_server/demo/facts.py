"""Search analytics facts: one compact tuple per (day, query, page, country, device) and search type.

Facts are generated lazily, once per (family, search type, today), from day offsets alone: the row for
"3 days ago" is the same whatever today is, so a pinned date gives byte-identical answers and a later
date shifts every date by the difference. Tuples of small ints (ids into sorted word lists) keep 90,000
facts cheap to hold and fast to aggregate: sorting by ids sorts by the words themselves.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date
from functools import lru_cache
from typing import Any

from .clock import NOW_HOUR, months_back
from .prng import Stream, cumulative, unit
from .vocab import (
    COUNTRIES,
    DEVICES,
    QUERYLESS_TYPES,
    WEAK_SNIPPET_CLICKS,
    WEAK_SNIPPET_PAGE,
    Family,
    QuerySpec,
    families,
)

# Fact layout. Hourly facts append the hour (day ordinal * 24 + hour) at HOUR.
DAY, QUERY, PAGE, COUNTRY, DEVICE, APPEARANCE, CLICKS, IMPRESSIONS, POSITION_SUM, HOUR = range(10)
Fact = tuple[Any, ...]

ANONYMIZED = 0  # query id of queries Google withholds for privacy (shown only in totals)
NO_APPEARANCE = 0
HOURLY_DAYS = 10  # Search Console keeps hourly data for the last 10 days
RETENTION_MONTHS = 16

_WEEKLY = (1.0, 0.97, 0.95, 0.93, 0.88, 0.78, 0.82)
_DIURNAL = (
    0.30, 0.20, 0.15, 0.12, 0.12, 0.20, 0.40, 0.70, 0.90, 1.00, 1.05, 1.10,
    1.15, 1.10, 1.05, 1.00, 1.00, 1.05, 1.10, 1.20, 1.25, 1.10, 0.80, 0.50,
)  # fmt: skip
# Per search type: impressions per drawn row, position shift, click-through factor.
_TYPE_SHAPE = {
    "web": (240.0, 0.0, 1.0),
    "image": (160.0, 9.0, 0.35),
    "video": (90.0, 3.0, 0.6),
    "news": (120.0, 2.0, 0.8),
    "discover": (900.0, 0.0, 0.25),
    "googleNews": (300.0, 0.0, 0.15),
}
_COUNTRY_SCALE = {"usa": 1.15, "gbr": 1.0, "ind": 0.7, "zzz": 0.4}
_DEVICE_SHIFT = {"MOBILE": -0.3, "DESKTOP": 0.4, "TABLET": 0.2}


@dataclass(frozen=True)
class Lexicon:
    """The words behind a family's ids, each list sorted so id order is text order."""

    queries: tuple[str, ...]
    pages: tuple[str, ...]
    countries: tuple[str, ...]
    devices: tuple[str, ...]
    appearances: tuple[str, ...]
    page_appearance: tuple[int, ...]


@dataclass(frozen=True)
class FactSet:
    """Facts sorted by day, with where each day starts, for O(1) date-range slicing."""

    lexicon: Lexicon
    facts: tuple[Fact, ...]
    first_day: int
    starts: tuple[int, ...]  # starts[i] = index of the first fact of day first_day + i; one extra at the end

    def between(self, first: int, last: int) -> Sequence[Fact]:
        """Facts of days first..last (ordinals, inclusive)."""
        if not self.starts or last < first:
            return ()
        low = min(max(first - self.first_day, 0), len(self.starts) - 1)
        high = min(max(last - self.first_day + 1, 0), len(self.starts) - 1)
        return self.facts[self.starts[low] : self.starts[high]] if high > low else ()


def first_data_day(today: date) -> date:
    return months_back(today, RETENTION_MONTHS)


def ctr_for(position: float) -> float:
    """A click-through curve by position, close to published industry curves."""
    return min(0.6, 0.28 / math.pow(position, 1.2))


def trend(offset: int) -> float:
    """Traffic of the day `offset` days ago relative to a typical recent day."""
    growth = 1.0 - 0.28 * min(offset, 490) / 490
    season = 1.0 + 0.12 * math.sin(2 * math.pi * offset / 365.0)
    factor = growth * season * _WEEKLY[offset % 7]
    if 60 <= offset < 67:
        factor *= 1.35  # a spring campaign
    if 200 <= offset < 204:
        factor *= 0.55  # an outage the model can find
    if offset == 0:
        factor *= NOW_HOUR / 24.0  # today is partial
    return factor


@lru_cache(maxsize=8)
def lexicon_for(family_name: str) -> Lexicon:
    family = _family(family_name)
    queries = sorted({spec.text for spec in family.queries} | {""})
    page_urls = {spec.url for spec in family.pages} | {url for q in family.queries for url, _ in q.pages}
    pages = sorted(page_urls)
    appearance_of = {spec.url: spec.appearance for spec in family.pages}
    appearances = sorted({a for a in appearance_of.values()} | {""})
    return Lexicon(
        queries=tuple(queries),
        pages=tuple(pages),
        countries=tuple(sorted(code for code, _ in COUNTRIES)),
        devices=tuple(sorted(name for name, _ in DEVICES)),
        appearances=tuple(appearances),
        page_appearance=tuple(appearances.index(appearance_of.get(url, "")) for url in pages),
    )


def _family(name: str) -> Family:
    for family in families():
        if family.name == name:
            return family
    raise KeyError(name)


class _Draws:
    """What one search type of one family can draw, as ids and running totals."""

    def __init__(self, family: Family, lexicon: Lexicon, search_type: str) -> None:
        query_id = {text: i for i, text in enumerate(lexicon.queries)}
        page_id = {url: i for i, url in enumerate(lexicon.pages)}
        self.specs: list[tuple[int, QuerySpec, list[int], list[float], list[int]]] = []
        weights: list[float] = []
        if search_type in QUERYLESS_TYPES:
            for page in family.pages:
                if page.feed_weight > 0:
                    spec = QuerySpec("", page.feed_weight, 0.0, False, ((page.url, 1.0),), frozenset())
                    self.specs.append((ANONYMIZED, spec, [page_id[page.url]], [1.0], []))
                    weights.append(page.feed_weight)
        else:
            country_id = {code: i for i, code in enumerate(lexicon.countries)}
            for spec in family.queries:
                if search_type not in spec.types:
                    continue
                pages = [page_id[url] for url, _ in spec.pages]
                shares = cumulative([share for _, share in spec.pages])
                countries = [country_id[code] for code in spec.countries]
                self.specs.append((query_id[spec.text], spec, pages, shares, countries))
                weights.append(spec.weight)
        self.query_totals = cumulative(weights) if weights else []
        self.countries = [lexicon.countries.index(code) for code, _ in COUNTRIES]
        self.country_totals = cumulative([weight for _, weight in COUNTRIES])
        self.country_scale = [_COUNTRY_SCALE.get(code, 0.9) for code in lexicon.countries]
        self.devices = [lexicon.devices.index(name) for name, _ in DEVICES]
        self.device_totals = cumulative([weight for _, weight in DEVICES])
        self.device_shift = [_DEVICE_SHIFT[name] for name in lexicon.devices]
        self.page_shift = [0.0, 4.0, 7.0]


def _day_facts(draws: _Draws, lexicon: Lexicon, family: Family, search_type: str, offset: int, day: int) -> list[Fact]:
    """One day's rows: draws of (query, page, country, device) merged, with metrics from position."""
    count = round(family.draws_for(search_type) * trend(offset))
    if count <= 0 or not draws.query_totals:
        return []
    per_draw, type_shift, type_ctr = _TYPE_SHAPE[search_type]
    stream = Stream("facts", family.name, search_type, offset)
    merged: dict[tuple[int, int, int, int], list[float]] = {}
    for _ in range(count):
        query, spec, pages, shares, countries = draws.specs[stream.weighted(draws.query_totals)]
        slot = stream.weighted(shares) if len(pages) > 1 else 0
        page = pages[slot]
        if countries:
            country = countries[stream.below(len(countries))]
        else:
            country = draws.countries[stream.weighted(draws.country_totals)]
        device = draws.devices[stream.weighted(draws.device_totals)]
        scale = 1.0
        if not spec.brand and query != ANONYMIZED and stream.random() < 0.08:
            query, scale = ANONYMIZED, 0.3
        impressions = max(1, int(per_draw * scale * draws.country_scale[country] * (0.5 + stream.random())))
        position = max(
            1.0,
            spec.position
            + type_shift
            + draws.page_shift[min(slot, 2)]
            + draws.device_shift[device]
            + (stream.random() - 0.5) * 2.0,
        )
        ctr = ctr_for(position) * (1.3 if spec.brand else 1.0) * type_ctr * (0.7 + 0.6 * stream.random())
        clicks = min(impressions, int(impressions * ctr + stream.random()))
        cell = merged.get((query, page, country, device))
        if cell is None:
            merged[(query, page, country, device)] = [clicks, impressions, position * impressions]
        else:
            cell[0] += clicks
            cell[1] += impressions
            cell[2] += position * impressions
    appearance = lexicon.page_appearance
    weak = lexicon.pages.index(WEAK_SNIPPET_PAGE) if WEAK_SNIPPET_PAGE in lexicon.pages else -1
    return [
        (
            day,
            q,
            p,
            c,
            d,
            appearance[p],
            int(cell[0] * (WEAK_SNIPPET_CLICKS if p == weak else 1)),
            int(cell[1]),
            round(cell[2], 3),
        )
        for (q, p, c, d), cell in sorted(merged.items())
    ]


def _index(facts: list[Fact], first_day: int, last_day: int) -> tuple[int, ...]:
    starts: list[int] = []
    position = 0
    for day in range(first_day, last_day + 2):
        while position < len(facts) and facts[position][DAY] < day:
            position += 1
        starts.append(position)
    return tuple(starts)


@lru_cache(maxsize=24)
def family_facts(family_name: str, search_type: str, today_ordinal: int) -> FactSet:
    """Every page-level fact of a family and search type for the 16 months up to today."""
    family = _family(family_name)
    lexicon = lexicon_for(family_name)
    draws = _Draws(family, lexicon, search_type)
    first = first_data_day(date.fromordinal(today_ordinal)).toordinal()
    facts: list[Fact] = []
    for day in range(first, today_ordinal + 1):
        facts.extend(_day_facts(draws, lexicon, family, search_type, today_ordinal - day, day))
    return FactSet(lexicon, tuple(facts), first, _index(facts, first, today_ordinal))


def covering_family(covers: Callable[[str], bool]) -> str | None:
    """The family with pages a property covers (families never share a host)."""
    for family in families():
        if any(covers(url) for url in lexicon_for(family.name).pages):
            return family.name
    return None


@lru_cache(maxsize=32)
def property_facts(
    family_name: str, pages_key: tuple[int, ...], search_type: str, level: str, today_ordinal: int
) -> FactSet:
    """The facts a property sees: its pages only; `level` "property" collapses pages per search.

    By property, a search that showed two of the site's pages counts once, at the better position, so
    totals differ from the sum of page rows, as they do in Search Console.
    """
    base = family_facts(family_name, search_type, today_ordinal)
    wanted = set(pages_key)
    facts = [fact for fact in base.facts if fact[PAGE] in wanted]
    if level == "property":
        facts = _collapse_pages(facts)
    return FactSet(base.lexicon, tuple(facts), base.first_day, _index(facts, base.first_day, today_ordinal))


def _collapse_pages(facts: list[Fact]) -> list[Fact]:
    grouped: dict[tuple[int, int, int, int], list[Fact]] = {}
    for fact in facts:
        grouped.setdefault((fact[DAY], fact[QUERY], fact[COUNTRY], fact[DEVICE]), []).append(fact)
    out: list[Fact] = []
    for (day, query, country, device), group in sorted(grouped.items()):
        if len(group) == 1:
            fact = group[0]
            out.append((day, query, -1, country, device, fact[APPEARANCE], *fact[CLICKS:]))
            continue
        best = min(group, key=lambda f: (f[POSITION_SUM] / f[IMPRESSIONS], f[PAGE]))
        most = max(f[IMPRESSIONS] for f in group)
        impressions = most + (sum(f[IMPRESSIONS] for f in group) - most) // 3
        clicks = min(impressions, sum(f[CLICKS] for f in group))
        position = best[POSITION_SUM] / best[IMPRESSIONS]
        out.append(
            (day, query, -1, country, device, best[APPEARANCE], clicks, impressions, round(position * impressions, 3))
        )
    return out


@lru_cache(maxsize=16)
def hourly_facts(
    family_name: str, pages_key: tuple[int, ...], search_type: str, level: str, today_ordinal: int
) -> FactSet:
    """The last ten days' facts spread over hours (today only up to the demo's now)."""
    daily = property_facts(family_name, pages_key, search_type, level, today_ordinal)
    first = today_ordinal - (HOURLY_DAYS - 1)
    facts: list[Fact] = []
    for fact in daily.between(first, today_ordinal):
        facts.extend(_split_hours(fact, today_ordinal))
    facts.sort(key=lambda f: (f[DAY], f[HOUR]))
    return FactSet(daily.lexicon, tuple(facts), first, _index(facts, first, today_ordinal))


def _split_hours(fact: Fact, today_ordinal: int) -> list[Fact]:
    day = fact[DAY]
    hours = range(NOW_HOUR) if day == today_ordinal else range(24)
    key = (fact[QUERY], fact[PAGE], fact[COUNTRY], fact[DEVICE])
    weights = [_DIURNAL[h] * (0.5 + unit("hour", day, key, h)) for h in hours]
    impressions = _apportion(fact[IMPRESSIONS], weights)
    clicks = _apportion(fact[CLICKS], weights)
    for index in range(len(clicks)):
        spill = clicks[index] - impressions[index]
        if spill > 0:
            clicks[index] -= spill
            for other in range(len(clicks)):
                room = impressions[other] - clicks[other]
                take = min(room, spill)
                clicks[other] += take
                spill -= take
    position = fact[POSITION_SUM] / fact[IMPRESSIONS]
    out: list[Fact] = []
    for slot, hour in enumerate(hours):
        if impressions[slot] <= 0:
            continue
        shifted = max(1.0, position * (0.9 + 0.2 * unit("hourpos", day, key, hour)))
        out.append(
            (*fact[:CLICKS], clicks[slot], impressions[slot], round(shifted * impressions[slot], 3), day * 24 + hour)
        )
    return out


def _apportion(total: int, weights: Sequence[float]) -> list[int]:
    """Split an integer across weights, largest remainders first, deterministically."""
    whole = sum(weights)
    shares = [total * w / whole for w in weights]
    parts = [int(share) for share in shares]
    rest = total - sum(parts)
    order = sorted(range(len(weights)), key=lambda i: (parts[i] - shares[i], i))
    for index in order[:rest]:
        parts[index] += 1
    return parts
