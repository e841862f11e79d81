"""No two modules of the server and the desktop app whose names differ only by underscores or case.

`selfcheck.py` (the server's check of a server command over stdio) and `self_check.py` (what the app
makes of it) read as one name, so a reader opened the wrong one; the server's is `stdio_check.py` now,
the app's `check/run.py`.
Names that are the same on purpose (`store.py` of the journal, the archive and the watch; `paths.py`
of the journal and the socket) sit in packages that say whose they are, and are not near-namesakes.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from .test_sizes import PACKAGES, modules


def names() -> list[str]:
    """Every module's and package's own name in both packages (dunder modules left out)."""
    found = [p.stem for p in modules() if not p.stem.startswith("__")]
    found += [p.parent.name for p in modules() if p.name == "__init__.py" and p.parent not in PACKAGES]
    return found


def near_namesakes(found: Iterable[str]) -> list[set[str]]:
    """Groups of different names that read as one once underscores and case are set aside."""
    by_reading: defaultdict[str, set[str]] = defaultdict(set)
    for name in found:
        by_reading[name.replace("_", "").casefold()].add(name)
    return [group for _, group in sorted(by_reading.items()) if len(group) > 1]


def test_no_two_modules_are_near_namesakes() -> None:
    assert near_namesakes(names()) == [], "rename one of each group for what it holds"


def test_a_near_namesake_is_found() -> None:
    assert near_namesakes(["selfcheck", "self_check", "store", "store", "notify"]) == [{"selfcheck", "self_check"}]
    assert "stdio_check" in names() and "run" in names()  # the server's check, and the app's (check/run.py)
