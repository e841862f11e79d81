"""The windows are built from sections (issue 39), as the main window's steps are: each part of a window
is a widget or a builder of its own, named for what it holds, and no constructor is over
`MAX_CONSTRUCTOR_LINES` lines. A constructor that builds a whole window by hand (Settings' was 162
lines) is where a newcomer cannot tell one section from the next.

Counted as ``ast`` counts a function: the ``def`` line through its last line (end_lineno - lineno + 1).
The windows, the approval dialog and the app that puts them together are held to it.
"""

from __future__ import annotations

import ast
import textwrap

from tests import REPO

MAX_CONSTRUCTOR_LINES = 60
DESKTOP = REPO / "desktop" / "searchdesk_desktop"
#: The windows and dialogs, and the app that builds them (its constructor only is a window's business).
HELD = [*sorted((DESKTOP / "windows").glob("*.py")), *sorted((DESKTOP / "approval").glob("*.py")), DESKTOP / "app.py"]


def long_constructors(source: str, limit: int = MAX_CONSTRUCTOR_LINES) -> list[tuple[str, int]]:
    """Each class whose ``__init__`` is over `limit` lines, with its length."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.ClassDef):
            continue
        for item in node.body:
            if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) and item.name == "__init__":
                assert item.end_lineno is not None
                lines = item.end_lineno - item.lineno + 1
                if lines > limit:
                    found.append((node.name, lines))
    return found


def test_no_window_constructor_is_over_60_lines() -> None:
    assert len(HELD) > 20  # the folders are where this test thinks they are
    over = {
        f"{path.relative_to(DESKTOP)}: {name}.__init__": lines
        for path in HELD
        for name, lines in long_constructors(path.read_text(encoding="utf-8"))
    }
    assert over == {}, "build the window from sections (a widget or a builder per part)"


def test_the_count_finds_a_long_constructor_and_counts_as_ast_does() -> None:
    body = "".join(f"        self.x{i} = {i}\n" for i in range(59))
    fits = f"class Fits:\n    def __init__(self) -> None:\n{body}"
    over = f"class Over:\n    def __init__(self) -> None:\n{body}        self.more = 1\n"
    class_free = f"def __init__() -> None:\n{body}{body}"  # not a constructor: a module-level function
    assert long_constructors(fits) == []  # 60 lines: the def and 59
    assert long_constructors(over) == [("Over", 61)]
    assert long_constructors(class_free) == []
    nested = "class Outer:\n" + textwrap.indent(over, "    ")  # a class inside a class is found too
    assert long_constructors(nested) == [("Over", 61)]
