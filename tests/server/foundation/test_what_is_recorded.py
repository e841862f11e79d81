"""Which requests the journal records: decided from the request, failing closed. Every request but GET is a
change except the reads Google's APIs make by POST; that list is the tools' own paths (a test fails on
drift), and every request a tool sends by another method than GET is either recorded or one of them."""

from __future__ import annotations

import ast
from pathlib import Path

from searchdesk_server.google.http import Api
from searchdesk_server.journal.record import READS_BY_POST, changes, request_targets
from searchdesk_server.tools.analytics.query import QUERY
from searchdesk_server.tools.inspection import INSPECT
from searchdesk_server.tools.verification import TOKEN

TOOLS = Path(__file__).parents[3] / "server" / "searchdesk_server" / "tools"


def test_the_reads_by_post_are_the_tools_own_paths() -> None:
    assert {
        (Api.SEARCHCONSOLE.value, QUERY),
        (Api.SEARCHCONSOLE.value, INSPECT),
        (Api.SITEVERIFICATION.value, TOKEN),
    } == READS_BY_POST


def test_everything_but_get_and_those_reads_is_a_change() -> None:
    for method in ("PUT", "DELETE", "PATCH", "post"):
        assert changes(Api.SEARCHCONSOLE.value, method, "webmasters/v3/sites/{siteUrl}")
    assert changes(Api.INDEXING.value, "POST", "v3/urlNotifications:publish")
    assert not changes(Api.SEARCHCONSOLE.value, "GET", "webmasters/v3/sites/{siteUrl}")
    assert not changes(Api.SEARCHCONSOLE.value, "POST", QUERY)
    # The same path on another API is not the read: the pair decides.
    assert changes(Api.INDEXING.value, "POST", QUERY)


def _google_calls() -> list[tuple[str, str]]:
    """(file, method) of every `call.google.call(…)` in the tools whose method is a literal."""
    found = []
    for path in TOOLS.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
                continue
            if isinstance(node.func.value, ast.Attribute) and node.func.value.attr == "google":
                method = node.args[1] if len(node.args) > 1 else None
                assert isinstance(method, ast.Constant), f"{path.name}: a request's method must be a literal"
                found.append((path.name, str(method.value)))
    return found


def test_every_request_of_the_tools_names_its_method() -> None:
    calls = _google_calls()
    assert {m for _, m in calls} <= {"GET", "POST", "PUT", "DELETE"}
    assert sum(m != "GET" for _, m in calls) >= 9  # the writes and the three reads by POST


def test_a_requests_targets_are_named_as_the_question_names_them() -> None:
    targets = request_targets(
        {"siteUrl": "https://example.com/", "feedpath": "https://example.com/sitemap.xml"}, None, None
    )
    assert [(t.label, t.value) for t in targets] == [
        ("Property", "https://example.com/"),
        ("Sitemap", "https://example.com/sitemap.xml"),
    ]
    notice = request_targets(None, None, {"url": "https://example.com/a", "type": "URL_DELETED"})
    assert [(t.label, t.value) for t in notice] == [
        ("Page", "https://example.com/a"),
        ("Google is told the page was", "removed"),
    ]
    verify = request_targets(
        None, {"verificationMethod": "META"}, {"site": {"type": "SITE", "identifier": "https://example.com/"}}
    )
    assert [(t.label, t.value) for t in verify] == [("Site", "https://example.com/"), ("Verification method", "META")]
