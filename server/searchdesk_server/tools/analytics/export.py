"""all_rows: every row of a Search Analytics query (up to the reports' cap) to a CSV file.

A busy site's rows would never fit a 100 kB result, and a person wants them in a spreadsheet
anyway: the file goes to the user data folder, and the result is a short summary, the path and an
MCP resource link.
"""

from __future__ import annotations

import csv
import os
import re
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ...result import Output, ToolFailure
from ...runtime import Call, plural
from .metrics import add_sums, ctr, incomplete_from, position, totals, totals_sentence
from .paging import PAGE_ROWS, ROW_CAP, Reader
from .query import Query
from .rows import entries

EXPORT_PREFIX = "searchdesk-"
KEEP_DAYS = 14  # exports older than this are deleted the next time one is written
PARTIAL_HOURS = 24  # a leftover partial file (a crash mid-write) is deleted after this
_SLUG = re.compile(r"[^A-Za-z0-9.-]+")
_FORMULA = ("=", "+", "-", "@", "\t", "\r")


def exports_folder() -> Path:
    """`exports/` in the user data folder (platformdirs, imported only when an export is written)."""
    import platformdirs

    folder = Path(platformdirs.user_data_dir("searchdesk", appauthor=False)) / "exports"
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError as exc:
        raise ToolFailure(
            f"Could not create the export folder {folder} ({exc.strerror or type(exc).__name__}); "
            "check that your user data folder is writable, or page with start_row instead."
        ) from None
    return folder


def clean_up(folder: Path, now: float) -> int:
    """Delete SearchDesk's own exports past their retention period; other files are never touched."""
    removed = 0
    try:
        paths = list(folder.iterdir())
    except OSError:
        return 0
    for path in paths:
        name = path.name
        if name.startswith(EXPORT_PREFIX) and name.endswith(".csv"):
            limit = KEEP_DAYS * 86_400
        elif name.startswith("." + EXPORT_PREFIX) and name.endswith(".partial"):
            limit = PARTIAL_HOURS * 3_600
        else:
            continue
        try:
            if path.is_file() and not path.is_symlink() and now - path.stat().st_mtime > limit:
                path.unlink()
                removed += 1
        except OSError:
            continue  # in use or already gone: try again next time
    return removed


def export_name(q: Query, now: float) -> str:
    """Readable and never reused: the property, the dates, the moment (UTC) and a random suffix."""
    import secrets

    site = q.site.removeprefix("sc-domain:").removeprefix("https://").removeprefix("http://")
    slug = _SLUG.sub("-", site).strip("-.")[:60] or "property"
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(now))
    return f"{EXPORT_PREFIX}{slug}-{q.start.isoformat()}-to-{q.end.isoformat()}-{stamp}-{secrets.token_hex(3)}.csv"


def safe_cell(value: str) -> str:
    """A spreadsheet runs a cell starting with = + - @ as a formula; an apostrophe keeps it text."""
    return "'" + value if value.startswith(_FORMULA) else value


def publish(partial: Path, folder: Path, q: Query) -> Path:
    """Give the finished file its final name without ever replacing an existing file."""
    for _ in range(5):
        final = folder / export_name(q, time.time())
        try:
            os.link(partial, final)  # fails if the name exists, unlike a rename on POSIX
        except FileExistsError:
            continue
        except OSError:  # a file system without hard links
            if final.exists():
                continue
            os.rename(partial, final)
            return final
        partial.unlink()
        return final
    raise ToolFailure("Could not find an unused file name in the export folder; try again.")


def _write_failure(folder: Path, exc: OSError) -> ToolFailure:
    return ToolFailure(
        f"Could not write the export file in {folder} ({exc.strerror or type(exc).__name__}); check the disk "
        "has room and the folder is writable, or page with start_row instead."
    )


class CsvFile:
    """The export being written: a hidden partial file, renamed only once every row is in.

    Its methods block on the disk, so the caller runs them in a worker thread.
    """

    def __init__(self, path: Path, header: list[str]) -> None:
        self.path = path
        self.rows = 0
        self.sums: list[float] = [0, 0, 0.0, 0.0]  # clicks, impressions, position × impressions, their weight
        # "x": never an existing file; utf-8-sig: spreadsheets read it as UTF-8. Closed by close()/discard().
        self._fh = open(path, "x", encoding="utf-8-sig", newline="")  # noqa: SIM115
        self._writer = csv.writer(self._fh)
        self._writer.writerow(header)

    def write(self, rows: Sequence[Any], dims: int) -> None:
        for entry in entries(rows, dims):
            key, clicks, impressions, weighted, weight = entry
            words = [key] if dims == 1 else list(key)
            self.rows += 1
            add_sums(self.sums, entry)
            rate, place = ctr(clicks, impressions), position(weighted, weight)
            self._writer.writerow(
                [
                    *(safe_cell(w) for w in words),
                    clicks,
                    impressions,
                    "" if rate is None else repr(rate),
                    "" if place is None else repr(place),
                ]
            )

    def close(self) -> None:
        self._fh.close()

    def discard(self) -> None:
        self._fh.close()
        self.path.unlink(missing_ok=True)


async def export_rows(call: Call, q: Query) -> Output:
    """Page through every row (up to the cap) into a CSV file; the result is a summary and a link."""
    import anyio
    import mcp_types as types

    folder = await anyio.to_thread.run_sync(exports_folder)
    await anyio.to_thread.run_sync(clean_up, folder, time.time())
    body = {k: v for k, v in q.body.items() if k not in ("rowLimit", "startRow")}
    body["dataState"] = call.args.get("data_state", "final")
    reader = Reader(call, q.site)
    columns = [*q.dimensions, "clicks", "impressions", "ctr", "position"]
    partial = folder / f".{export_name(q, time.time())}.partial"
    try:
        out = await anyio.to_thread.run_sync(CsvFile, partial, columns)
    except OSError as exc:
        raise _write_failure(folder, exc) from None
    try:

        async def write(rows: Sequence[Any]) -> None:
            await anyio.to_thread.run_sync(out.write, rows, len(q.dimensions))

        found = await reader.pages(body, write)
        await anyio.to_thread.run_sync(out.close)
        final = await anyio.to_thread.run_sync(publish, partial, folder, q)
    except OSError as exc:
        out.discard()
        raise _write_failure(folder, exc) from None
    except BaseException:
        out.discard()  # cancelled or failed: no partial file is left behind
        raise
    size = final.stat().st_size
    total = totals(out.sums)
    span = f"{q.start.isoformat()} to {q.end.isoformat()}"
    by = f" by {', '.join(q.dimensions)}" if q.dimensions else ""
    lines = [
        f"Wrote {plural(out.rows, 'row')} of search performance for {q.site}, {span} (Pacific time){by}, "
        f"data_state {body['dataState']}, to a CSV file ({size:,} bytes) a spreadsheet can open:",
        str(final),
        totals_sentence(total),
        f"Read in {plural(reader.requests, 'request')} of up to {PAGE_ROWS:,} rows.",
    ]
    if found.more_at_google:
        lines.append(f"Stopped at the {ROW_CAP:,}-row cap: Google has more rows. Narrow the dates or add filters.")
    elif found.cap_reached:
        lines.append(f"Exactly {ROW_CAP:,} rows: nothing beyond the cap.")
    if found.first_incomplete:
        lines.append(f"{incomplete_from(found.first_incomplete).capitalize()}.")  # an ISO date: nothing to lower
    lines.append(
        f"The file is deleted after {KEEP_DAYS} days. Text cells that start with = + - or @ begin with an "
        "apostrophe so a spreadsheet shows them rather than running them."
    )
    link = types.ResourceLink(
        type="resource_link",
        uri=final.as_uri(),
        name=final.name,
        title="Search performance (CSV)",
        mime_type="text/csv",
        size=size,
    )
    data = {
        "site": q.site,
        "start_date": q.start.isoformat(),
        "end_date": q.end.isoformat(),
        "dimensions": q.dimensions,
        "data_state": body["dataState"],
        "file": str(final),
        "uri": final.as_uri(),
        "bytes": size,
        "rows": out.rows,
        "rows_read": found.rows,
        "columns": columns,
        "totals": total,
        "first_incomplete": found.first_incomplete,
        "requests": reader.requests,
        "row_cap": ROW_CAP,
        "cap_reached": found.cap_reached,
        "more_rows_at_google": found.more_at_google,
        "kept_days": KEEP_DAYS,
    }
    return Output("\n".join(lines), data, links=[link])
