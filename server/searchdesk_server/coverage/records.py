"""What the coverage watch keeps about a page and a property, as values: a page's latest inspection
result (`PageResult`), why it is watched (`Why`), a change between two inspections (`Change`), a
property's figures (`Counts`) and its watch (`WatchState`), and the errors the store raises.

`coverage.store` keeps them in the account's SQLite file; the app's watcher, `index_coverage`,
`inspect_url`'s note and the demo's watch read and write them. Stdlib only, besides the shape
checks every answer of Google's goes through.
"""

from __future__ import annotations

import datetime as dt
import enum
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from ..google import shapes as sh

__all__ = [
    "INDEX_FIELDS",
    "RESULT_COLUMNS",
    "Change",
    "Counts",
    "CoverageDamaged",
    "CoverageError",
    "Page",
    "PageResult",
    "Recovery",
    "WatchState",
    "Why",
]

#: URL Inspection's index status fields as SearchDesk names them, with Google's names (`inspect_url`
#: shows them; the watch keeps all but `crawled_as`).
INDEX_FIELDS: Final = (
    ("verdict", "verdict", sh.text),
    ("coverage", "coverageState", sh.text),
    ("indexing_state", "indexingState", sh.text),
    ("robots_txt", "robotsTxtState", sh.text),
    ("page_fetch", "pageFetchState", sh.text),
    ("last_crawl", "lastCrawlTime", sh.text),
    ("crawled_as", "crawledAs", sh.text),
    ("google_canonical", "googleCanonical", sh.text),
    ("user_canonical", "userCanonical", sh.text),
)
RESULT_COLUMNS: Final = (
    "verdict",
    "coverage",
    "indexing_state",
    "robots_txt",
    "page_fetch",
    "last_crawl",
    "google_canonical",
    "user_canonical",
)


class CoverageError(Exception):
    """The store cannot do what was asked; the message is for a person."""


class CoverageDamaged(CoverageError):
    """The file is not a readable store (`recover` sets it aside and keeps what is readable)."""


class Why(enum.IntFlag):
    """Why a page is watched: listed in one of the property's sitemaps, or seen with impressions."""

    SITEMAP = 1
    IMPRESSIONS = 2

    def words(self) -> list[str]:
        return [w.name.lower() for w in Why if w in self and w.name]


@dataclass(frozen=True)
class PageResult:
    """One URL Inspection result as the watch keeps it: Google's own words for each field ("" when
    Google said nothing), as `tools.inspection.summarise` reads them from Google's answer."""

    verdict: str = ""
    coverage: str = ""
    indexing_state: str = ""
    robots_txt: str = ""
    page_fetch: str = ""
    last_crawl: str = ""
    google_canonical: str = ""
    user_canonical: str = ""

    @classmethod
    def from_index(cls, index: Mapping[str, object]) -> PageResult:
        """From `tools.inspection.summarise(...)["index"]` (SearchDesk's names of `INDEX_FIELDS`)."""
        return cls(**{k: str(index.get(k) or "") for k in RESULT_COLUMNS})

    @classmethod
    def from_google(cls, index_status: object) -> PageResult:
        """From Google's `indexStatusResult` as it came (cleaned as every answer of Google's is)."""
        return cls.from_index(sh.pick(sh.record(index_status), INDEX_FIELDS))


@dataclass(frozen=True)
class Page:
    """A watched page with its latest result (None: not inspected yet)."""

    url: str
    why: Why
    inspected_at: dt.datetime | None
    result: PageResult | None


@dataclass(frozen=True)
class Change:
    """A page's verdict or coverage state changed between two inspections."""

    url: str
    changed_at: dt.datetime
    from_verdict: str
    to_verdict: str
    from_coverage: str
    to_coverage: str


@dataclass(frozen=True)
class Counts:
    """A property's figures: pages known and inspected, by verdict and by coverage state."""

    known: int
    inspected: int
    by_verdict: dict[str, int]
    by_coverage: dict[str, int]
    oldest: dt.datetime | None
    newest: dt.datetime | None


@dataclass(frozen=True)
class WatchState:
    """The watch of one property as the person set it and the watcher left it."""

    switched_on: bool
    paused: bool = False
    pass_started: dt.datetime | None = None
    next_pass: dt.datetime | None = None

    @property
    def running(self) -> bool:
        return self.switched_on and not self.paused


@dataclass(frozen=True)
class Recovery:
    """What `recover` did: where the damaged file went and how many pages and changes it kept."""

    set_aside: Path
    pages: int
    changes: int
    unreadable: bool = False
