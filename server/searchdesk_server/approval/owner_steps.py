"""An owner change too large for one question: the largest step one call can make toward it, in words
the program that asked can follow — or Search Console's own page when no list the owners argument
takes can make it. Both the token text and the app's question use it.
"""

from __future__ import annotations

from collections.abc import Callable

from ..runtime import Call
from .question import Question


def most_changes(question: Question, fits: Callable[[Question], bool]) -> int:
    """The largest number of change lines (from the start) with which the question still fits."""
    low, high = 0, question.counted_lines
    while low < high:
        mid = (low + high + 1) // 2
        if fits(question.first_changes(mid)):
            low = mid
        else:
            high = mid - 1
    return low


def owner_step(question: Question, most: int, ceiling: int) -> tuple[int, int] | None:
    """The largest change one call can make toward an owner change too large for one question, as
    (owners removed, owners added): at most `most` change lines (the most that fit), removals first
    (they shorten the list), and leaving a list the owners argument takes (1 to `ceiling` addresses).
    None when there is no such list: Google lists more owners than one list can hold even after every
    removal that fits, or not one change fits."""
    now, removed, added = _owner_counts(question)
    take_out = min(most, removed)
    if now - take_out > ceiling:
        return None
    put_in = min(most - take_out, added, ceiling - (now - take_out))
    if now - take_out + put_in == 0:  # a list is never empty: one removal fewer, one addition instead
        take_out, put_in = take_out - 1, 1
    return (take_out, put_in) if take_out + put_in else None


def _owner_counts(question: Question) -> tuple[int, int, int]:
    """How many owners Google lists now, and how many the question removes and adds (its change lines)."""
    removed = sum(1 for label, _ in question.values if label.startswith("Removed"))
    added = sum(1 for label, _ in question.values if label.startswith("Added"))
    return len(question.owners) - added + removed, removed, added


def owner_steps(call: Call, question: Question, most: int) -> str:
    """What to do about an owner change too large for one question, for the program that asked: the
    largest change one call can make and the list that makes it, or, when no list the argument takes
    can, Search Console's own page (support.google.com/webmasters/answer/7687615: "Settings > Users and
    permissions") — never a number nobody can follow."""
    tool = call.spec.name
    ceiling = int(call.spec.params["owners"]["maxItems"])
    step = owner_step(question, most, ceiling)
    if step is None:
        why = (
            "not even one owner's change fits in one question"
            if most == 0
            else "Google lists more owners here than one owners list can hold, even after the largest change one "
            "question can show"
        )
        return (
            f"no list the owners argument takes can make this change in smaller steps: {why}. Change the owners in "
            "Search Console instead: Settings › Users and permissions."
        )
    take_out, put_in = step
    now, removed, added = _owner_counts(question)
    how = []
    if take_out:
        part = f"all {removed:,}" if take_out == removed else f"the first {take_out:,} of the {removed:,}"
        how.append(f"without {part} owners you are removing")
    if put_in:
        part = f"all {added:,}" if put_in == added else f"the first {put_in:,} of the {added:,}"
        how.append(f"with {part} owners you are adding")
    return (
        f"the largest change one call can make here is {take_out + put_in:,} owners. Call {tool} with owners set "
        f"to the {now:,} owners Google lists now (get_verified_site shows them) {' and '.join(how)}, in "
        f"alphabetical order: a list of {now - take_out + put_in:,} (owners takes at most {ceiling:,}). Then call "
        f"{tool} again with the whole new list, as many times as it takes."
    )
