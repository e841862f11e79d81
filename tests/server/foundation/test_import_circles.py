"""No import circles in server/ or desktop/.

A circle makes the order modules load in matter and hides which part a change belongs to. Imports
inside functions count (they are circles that merely run late), and so do `if TYPE_CHECKING:` imports:
they never run, but a reader still has to know both sides to understand either, and a type named
across a circle is one whose home is in the wrong place (issue 39). Checked at every level: among the
modules of each package and among the packages themselves (a package's modules taken together), so
`approval` → `tools` → `approval` is a circle even when no single module imports its importer back.
"""

from __future__ import annotations

import grimp
import pytest

PACKAGES = ("searchdesk_server", "searchdesk_desktop")


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph(*PACKAGES, exclude_type_checking_imports=False, cache_dir=None)


def circles(graph: grimp.ImportGraph, top: str) -> list[str]:
    """Each circle found, as the import that would break it and the way back to its importer."""
    found = []
    for package in sorted({top, *graph.find_descendants(top)}):
        if not graph.find_children(package):
            continue
        for importer, imported in sorted(graph.nominate_cycle_breakers(package)):
            back = graph.find_shortest_chain(imported, importer, as_packages=True) or ()
            found.append(f"{importer} -> {imported}, and back: {' -> '.join(back)}")
    return found


@pytest.mark.parametrize("top", PACKAGES)
def test_no_import_circles(graph: grimp.ImportGraph, top: str) -> None:
    assert circles(graph, top) == [], "an import circle: move the code both sides need to a module below both"


def test_the_server_never_imports_the_desktop_app(graph: grimp.ImportGraph) -> None:
    assert graph.find_shortest_chain("searchdesk_server", "searchdesk_desktop", as_packages=True) is None


def test_a_function_level_circle_is_found(graph: grimp.ImportGraph) -> None:
    """The check itself can fail: the circle the approval chain once had (it ran tools through the
    server, which runs the chain), added back as the function-level import it was."""
    graph.add_import(
        importer="searchdesk_server.approval.chain",
        imported="searchdesk_server.server",
        line_number=1,
        line_contents="from ..server import run_tool",
    )
    try:
        assert any(
            "searchdesk_server.server" in c and "searchdesk_server.approval.chain" in c
            for c in circles(graph, PACKAGES[0])
        )
    finally:
        graph.remove_import(importer="searchdesk_server.approval.chain", imported="searchdesk_server.server")


def test_a_type_only_circle_is_found(graph: grimp.ImportGraph) -> None:
    """Type-only imports count: the circle `Call.approved` once made (runtime naming the approval
    question's type under `if TYPE_CHECKING:` while the approval chain imports runtime), added back."""
    graph.add_import(
        importer="searchdesk_server.runtime",
        imported="searchdesk_server.approval.question",
        line_number=1,
        line_contents="from .approval.question import Question",
    )
    try:
        assert any(
            "searchdesk_server.runtime" in c and "searchdesk_server.approval" in c for c in circles(graph, PACKAGES[0])
        )
    finally:
        graph.remove_import(importer="searchdesk_server.runtime", imported="searchdesk_server.approval.question")
