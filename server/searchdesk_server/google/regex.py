"""Google's filter expressions (`includingRegex`, `excludingRegex`), read and matched as Google does: RE2.

Google evaluates them with RE2 (the Search Analytics API reference: "RE2 syntax"), in time linear in the
text, and refuses what needs backtracking: lookahead and lookbehind, backreferences, atomic groups and
possessive repeats. Python's `re` accepts all of these, and on an ordinary-looking expression such as
`^([a-z0-9]+-?)*$` over a long address it backtracks for minutes. So every place SearchDesk evaluates a
filter itself uses RE2's own engine and syntax through this module: the days that come from SearchDesk's
copy (archive/store.py), the demo's Google (demo/search_analytics.py, which the tests' fake Google is
too), and the analytics tools, which check each expression before anything is asked
(tools/analytics/query.py). Archived and live days accept, refuse and match the same expressions, and an
expression is refused in the same words whichever days it would read.

Expressions are compiled with RE2's defaults (UTF-8, case-sensitive; `(?i)` inside the expression turns
case off, as at Google), never logging to stderr (the server's stderr is Claude Desktop's log), and
without captures: only whether a value matches is ever asked.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, Final

import re2

# The binding's own objects, not `re2.compile`'s wrapper: the wrapper builds a match object and maps byte
# offsets back to characters on every call, and the copy asks once for every query and address it holds.
# A one-pattern `Set` answers only whether the pattern matches (RE2's DFA, no match bounds): measured over
# 200,000 addresses it takes 2.5-4 µs a value, `RE2.Match` 3-4 µs, the wrapper's `search` 4-10 µs.
_RE2: Final[Any] = re2._re2.RE2
_SET: Final[Any] = re2._re2.Set
_UNANCHORED: Final[Any] = re2._re2.RE2.Anchor.UNANCHORED


def _options() -> Any:
    options = re2.Options()
    options.log_errors = False
    options.never_capture = True
    return options


_OPTIONS: Final[Any] = _options()

_LEAVE_OUT: Final = "To leave rows out, use excludingRegex or notContains."

#: Why RE2 refuses an expression, by the start of RE2's own message: what it is called for a person, and
#: what to write instead. Anything else RE2 refuses is said with RE2's message.
_WHY: Final = (
    ("invalid perl operator: (?=", "looks ahead with (?=…)", "Match the text itself instead."),
    ("invalid perl operator: (?!", "looks ahead with (?!…)", _LEAVE_OUT),
    ("invalid perl operator: (?<=", "looks behind with (?<=…)", "Match the text before it as part of the pattern."),
    ("invalid perl operator: (?<!", "looks behind with (?<!…)", _LEAVE_OUT),
    ("invalid perl operator: (?P", "refers back to an earlier group with (?P=…)", "Write the repeated text out."),
    ("invalid perl operator: (?>", "uses an atomic group (?>…)", "Write it as a plain group (…)."),
    ("invalid escape sequence: \\k", "refers back to an earlier group with \\k", "Write the repeated text out."),
    ("invalid escape sequence: \\Z", "uses \\Z", "Use \\z for the end of the text."),
    ("bad repetition operator: ++", "uses a possessive repeat ++", "Use a plain + instead."),
    ("bad repetition operator: *+", "uses a possessive repeat *+", "Use a plain * instead."),
    ("bad repetition operator: ?+", "uses a possessive repeat ?+", "Use a plain ? instead."),
)
_BACKREFERENCE: Final = "invalid escape sequence: \\"


class RegexRefused(ValueError):
    """An expression Google would refuse (RE2 cannot read it). `str()` says why and what to write
    instead, in words for Claude and for a site owner; `engine` is RE2's own message."""

    def __init__(self, expression: str, engine: str) -> None:
        self.expression = expression
        self.engine = engine
        super().__init__(_why(engine))


def _why(engine: str) -> str:
    lead = "Google reads filter patterns as RE2 regular expressions, and RE2 cannot use this one: it"
    for start, what, instead in _WHY:
        if engine.startswith(start):
            return f"{lead} {what}. {instead}"
    tail = engine.removeprefix(_BACKREFERENCE)
    if engine.startswith(_BACKREFERENCE) and tail[:1].isdigit():
        return f"{lead} refers back to an earlier group with \\{tail[:1]}. Write the repeated text out."
    return f"{lead} is not a pattern RE2 can read ({engine}). Google's Search Console help lists what it can."


@functools.lru_cache(maxsize=256)
def _matcher(expression: str) -> Callable[[bytes], list[int]]:
    """Whether UTF-8 text matches the expression: the indices of a one-pattern Set that match (cached: an
    archive query asks once for each value it holds). Raises RegexRefused for what Google would refuse."""
    pattern = expression.encode("utf-8", "surrogatepass")
    regexp = _RE2(pattern, _OPTIONS)  # for RE2's own reason when it refuses
    if not regexp.ok():
        raise RegexRefused(expression, bytes(regexp.error()).decode("utf-8", "replace"))
    one = _SET(_UNANCHORED, _OPTIONS)
    if one.Add(pattern) != 0 or not one.Compile():
        raise RegexRefused(expression, "pattern too large - compile failed")
    match: Callable[[bytes], list[int]] = one.Match
    return match


def check(expression: str) -> None:
    """Raise RegexRefused when Google would refuse the expression."""
    _matcher(expression)


def searches(expression: str, value: str | bytes) -> bool:
    """Whether the expression matches anywhere in `value` (text, or its UTF-8 bytes as SQLite can hand
    them over), as Google's includingRegex asks. An expression RE2 refuses matches nothing: the tools
    refuse it before anything is read."""
    try:
        match = _matcher(expression)
    except RegexRefused:
        return False
    return bool(match(value if isinstance(value, bytes) else value.encode("utf-8", "surrogatepass")))


def escape(text: str) -> str:
    """`text` as an RE2 expression that matches exactly it (RE2's own quoting)."""
    return str(re2.escape(text))
