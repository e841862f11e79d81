"""A process that appends to the journal the way a server does, for the tests that need several
processes, or one killed mid-write: `python -m tests.server.journal.writer <pairs> [hang] [start-file]`.

It writes `pairs` change rows, each followed by its outcome, to the journal of this environment's
XDG_DATA_HOME (`journal_path`, as a server finds it), printing `row <seq>` after each commit. `hang`
writes one more change and then waits without its outcome (a server stopped while Google was asked);
a start file, when named, is waited for first, so two writers start together.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from searchdesk_server.journal.paths import journal_path
from searchdesk_server.journal.store import Entry, Journal, Kind, Result, Target


def change(n: int) -> Entry:
    """A change row as the server writes one (this process's id in its target, to tell writers apart)."""
    return Entry(
        Kind.CHANGE,
        tool="submit_sitemap",
        account="writer@example.com",
        site="https://www.example.com/",
        targets=(Target("Sitemap", f"https://www.example.com/{os.getpid()}/{n}.xml"),),
        asked_by="a test writer",
    )


def main(argv: list[str]) -> int:
    pairs, hang = int(argv[0]), "hang" in argv[1:]
    start = next((Path(a) for a in argv[1:] if a != "hang"), None)
    while start is not None and not start.exists():
        time.sleep(0.005)
    journal = Journal(journal_path())
    for n in range(pairs):
        row = journal.append(change(n))
        print(f"row {row.seq}", flush=True)
        outcome = journal.append(Entry(Kind.OUTCOME, tool=row.tool, site=row.site, result=Result.DONE, about=row.seq))
        print(f"row {outcome.seq}", flush=True)
    if hang:
        row = journal.append(change(pairs))
        print(f"hung {row.seq}", flush=True)
        time.sleep(120)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
