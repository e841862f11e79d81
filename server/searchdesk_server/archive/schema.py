"""The archive file's tables, and which of the six kept per day answers which dimensions.

Why this shape — see store.py's docstring: rows of integers (`strings` interns every word once), a
WITHOUT ROWID `rows` table keyed (part, day, k1, k2) so a range of days is one contiguous scan;
`months` and `rolled` hold whole months summed once Google no longer has them (months.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

from .errors import CannotAnswer

#: Google's row limit per day and search type for one request's table.
ROW_LIMIT: Final = 50_000
SCHEMA_VERSION: Final = 1

#: The six tables kept per (site, day, search type) and the dimensions each was requested with.
TABLES: Final[Mapping[str, tuple[str, ...]]] = {
    "totals": (),
    "page": ("page",),
    "query": ("query",),
    "country": ("country",),
    "device": ("device",),
    "query_page": ("query", "page"),
}
#: The dimensions each table answers, as a set: an answer uses the table whose set matches exactly.
_BY_DIMENSIONS: Final[Mapping[frozenset[str], str]] = {frozenset(d): name for name, d in TABLES.items()}
SEARCH_TYPES: Final = ("web", "image", "video", "news", "discover", "googleNews")

SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS parts(
    id INTEGER PRIMARY KEY, site TEXT NOT NULL, search_type TEXT NOT NULL, tbl TEXT NOT NULL,
    UNIQUE(site, search_type, tbl));
CREATE TABLE IF NOT EXISTS strings(id INTEGER PRIMARY KEY, value TEXT NOT NULL UNIQUE);
CREATE TABLE IF NOT EXISTS days(
    part INTEGER NOT NULL, day INTEGER NOT NULL, copied_at REAL NOT NULL, nrows INTEGER NOT NULL,
    truncated INTEGER NOT NULL, PRIMARY KEY(part, day)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS rows(
    part INTEGER NOT NULL, day INTEGER NOT NULL, k1 INTEGER NOT NULL, k2 INTEGER NOT NULL,
    clicks INTEGER NOT NULL, impressions INTEGER NOT NULL, position REAL NOT NULL,
    PRIMARY KEY(part, day, k1, k2)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS months(
    part INTEGER NOT NULL, month INTEGER NOT NULL, rank INTEGER NOT NULL, k1 INTEGER NOT NULL,
    clicks INTEGER NOT NULL, impressions INTEGER NOT NULL, position REAL NOT NULL,
    PRIMARY KEY(part, month, rank)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS rolled(
    part INTEGER NOT NULL, month INTEGER NOT NULL, PRIMARY KEY(part, month)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS losses(
    noted_at REAL NOT NULL, set_aside TEXT NOT NULL, site TEXT NOT NULL, search_type TEXT NOT NULL,
    day INTEGER NOT NULL);
"""


def table_for(dimensions: Sequence[str]) -> str:
    """The table that answers these dimensions (`date` is each day's own rows, so any table has it).

    Raises CannotAnswer for combinations no table keeps (Google answers them; the archive did not
    ask Google for them, so summing another table would be wrong)."""
    wanted = frozenset(d for d in dimensions if d != "date")
    name = _BY_DIMENSIONS.get(wanted)
    if name is None:
        raise CannotAnswer(
            "SearchDesk's copy keeps each day's totals and its rows by page, by query, by country, by device "
            "and by query and page; it has nothing for " + " and ".join(sorted(wanted)) + "."
        )
    return name
