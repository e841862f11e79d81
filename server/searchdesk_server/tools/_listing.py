"""A table of entries in both channels, cut to the result budget with a note of what was left out."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .. import budget
from ..google.shapes import md_row, md_table
from ..result import UNTRUSTED_LINES, Output

# to_result() adds the untrusted line and two marker keys around what is budgeted here.
_RESERVED = max(len(line.encode()) for line in UNTRUSTED_LINES.values()) + 200  # + marker keys and next_start_row


def listing(
    *,
    entries: Sequence[Mapping[str, Any]],
    headers: Sequence[str],
    row: Callable[[Mapping[str, Any]], Sequence[str]],
    intro: str,
    key: str,
    narrow: str | Callable[[int], str],
    noun: str = "entries",
    extra: Mapping[str, Any] | None = None,
    footer: str = "",
) -> Output:
    """`intro`, then a Markdown table of `entries`; the structured half carries exactly the same entries."""
    extra = dict(extra or {})
    if not entries:
        text = f"{intro}\n\n(none)" + (f"\n\n{footer}" if footer else "")
        return Output(text, {key: [], **extra, "count": 0})
    count = len(entries)
    fitted = budget.fit_listing(
        entries,
        lambda e: md_row(row(e)),
        header_text=md_table(headers, []),
        wrap=lambda kept: {key: list(kept), **extra, "count": count, "shown": len(kept)},
        limit=budget.MAX_BYTES - _RESERVED,
        narrow=narrow,
        noun=noun,
        preface=intro,
        footer_text=footer,
        note_key="note",
    )
    return Output(fitted.text, fitted.structured)
