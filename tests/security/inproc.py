"""One in-process server per configuration, kept open across hypothesis examples, and the checks
every result must pass whatever Google or the caller sent."""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any, Final

import jsonschema
import mcp_types as types
from anyio.from_thread import BlockingPortal, start_blocking_portal
from mcp import Client

from searchdesk_server.approval.question import VALUES_HEADING
from searchdesk_server.config import load
from searchdesk_server.google import shapes as sh
from searchdesk_server.google.http import RetryPolicy
from searchdesk_server.quota import QuotaBook
from searchdesk_server.result import UNTRUSTED_LINE, UNTRUSTED_LINES
from searchdesk_server.runtime import Runtime
from searchdesk_server.server import build_server
from tests.fakegoogle import FakeGoogle

from .conftest import NO_AGENT, Witness

LIMIT = 100_000
FAST = RetryPolicy(attempts=3, base_delay=0.001, max_wait=0.01, request_timeout=20.0)
#: Listing tools: the structured key whose entries are exactly the table's rows.
LISTINGS = {
    "list_sites": "sites",
    "list_sitemaps": "sitemaps",
    "list_verified_sites": "sites",
    "query_search_analytics": "rows",
    "compare_periods": "rows",
    "report_traffic_drops": "rows",
    "report_quick_wins": "rows",
    "report_cannibalisation": "rows",
    "inspect_urls": "results",
    "list_changes": "changes",
}
# What may never be in the text channel: C0/C1 controls (tab and newline aside), bidi controls,
# zero-width characters and lone surrogates.
TEXT_FORBIDDEN = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff\ud800-\udfff]"
)
# In structured content Google's strings keep bidi characters (data a person may need exactly),
# but never controls or lone surrogates.
DATA_FORBIDDEN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")
GENERIC_FAILURE = ("Error executing tool", "Traceback", "Internal error")
#: Where a caller's or Google's words may follow the server's own in a result's text.
QUOTED_FROM = (VALUES_HEADING, "Google said", "(not Google's error format", "answered in Google's place")


def own_words(text: str) -> str:
    """The part of a text before anything quoted from the caller or from Google."""
    for marker in QUOTED_FROM:
        text = text.split(marker, 1)[0]
    return text


class InProcess:
    """The server and an MCP client on a portal's event loop; `call` blocks until the result."""

    def __init__(
        self, portal: BlockingPortal, client: Client, runtime: Runtime, fake: FakeGoogle, folder: Path
    ) -> None:
        self.portal = portal
        self.client = client
        self.runtime = runtime
        self.fake = fake
        self.folder = folder
        self.examples = 0

    def call(self, name: str, args: Mapping[str, Any]) -> types.CallToolResult:
        result = self.portal.call(functools.partial(self.client.call_tool, name, dict(args)))
        assert isinstance(result, types.CallToolResult)
        return result

    def fresh_quota(self) -> None:
        """A new quota book per example: hundreds of examples must not use up a day's quota."""
        self.examples += 1
        self.runtime.quota = QuotaBook(self.folder / f"quota-{self.examples}.json")


def server_env(
    fake: FakeGoogle, planted_env: Mapping[str, str], extra: Mapping[str, str] | None = None
) -> dict[str, str]:
    return {"SEARCHDESK_AGENT_SOCKET": f"{NO_AGENT}/agent.sock", **planted_env, **(extra or {})}


@contextmanager
def in_process(fake: FakeGoogle, env: Mapping[str, str], folder: Path, **client_kw: Any) -> Iterator[InProcess]:
    folder.mkdir(parents=True, exist_ok=True)
    with ExitStack() as stack:
        portal = stack.enter_context(start_blocking_portal())
        config = load(dict(env))
        runtime = Runtime(config, transport=fake.transport())
        server = build_server(config, runtime=runtime)
        client = stack.enter_context(portal.wrap_async_context_manager(Client(server, mode="legacy", **client_kw)))
        google = portal.call(runtime.client)
        google.policy = FAST
        try:
            yield InProcess(portal, client, runtime, fake, folder)
        finally:
            portal.call(runtime.aclose)


def text_of(result: Any) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")


def table_rows(text: str) -> list[list[str]]:
    """The cells of each row of the first Markdown table in `text`."""
    lines = text.splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith("|---")]
    if not starts:
        return []
    rows = []
    for line in lines[starts[0] + 1 :]:
        if not line.startswith("| "):
            break
        rows.append([cell.strip() for cell in re.split(r"(?<!\\)\|", line)[1:-1]])
    return rows


def _cells_of(value: object) -> set[str]:
    if isinstance(value, str | int | float) and not isinstance(value, bool):
        return {sh.cell(value), sh.cell(value, 300)}
    if isinstance(value, list):
        return {sh.cell(value), sh.cell(value, 400)}
    return set()


#: What every result's structured half promises, whatever the tool (result.py, _listing.py): the
#: catalogue's own output schemas are open on purpose (an odd Google answer must never make a result
#: invalid), so this is the contract checked here. A listing's key holds objects, one per table row.
RESULT_ENVELOPE: Final[dict[str, Any]] = {
    "type": "object",
    "required": ["untrusted", "source"],
    "properties": {
        "untrusted": {"type": "boolean"},
        "source": {"enum": [*UNTRUSTED_LINES, "searchdesk"]},
        "error": {"type": "string", "pattern": "\\S"},
        "count": {"type": "integer", "minimum": 0},
        "shown": {"type": "integer", "minimum": 0},
        "next_start_row": {"type": "integer", "minimum": 1},
        "note": {"type": "string"},
    },
}


def envelope(tool: str, result: types.CallToolResult) -> dict[str, Any]:
    """The envelope, and for a listing that answered: its entries, a list of objects."""
    if result.is_error or tool not in LISTINGS:
        return RESULT_ENVELOPE
    key = LISTINGS[tool]
    entries: dict[str, Any] = {"type": "array", "items": {"type": "object"}}
    if "file" in (result.structured_content or {}):
        # all_rows answers with a file instead, and its `rows` is how many rows the file holds
        # (tests/server/reports/test_export.py).
        entries = {"type": "integer", "minimum": 0}
    return {
        **RESULT_ENVELOPE,
        "properties": {**RESULT_ENVELOPE["properties"], key: entries},
        "anyOf": [{"required": [key]}, {"required": ["file"]}],
    }


def check_result(tool: str, result: types.CallToolResult, witness: Witness | None = None) -> dict[str, Any]:
    """Every result, whatever went in: a clear answer, within budget, strict JSON, clean text."""
    text = text_of(result)
    assert text.strip(), "a result without text"
    assert not any(marker in own_words(text) for marker in GENERIC_FAILURE), text[:500]
    bad = TEXT_FORBIDDEN.search(text)
    assert bad is None, f"forbidden character in text, on the line {_line_at(text, bad.start())!r}"
    assert len(text.encode("utf-8")) <= LIMIT, "text channel over 100,000 bytes"
    structured = result.structured_content
    assert isinstance(structured, dict), "no structured content"
    jsonschema.validate(structured, envelope(tool, result))
    blob = json.dumps(structured, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    assert len(blob.encode("utf-8")) <= LIMIT, "structured channel over 100,000 bytes"
    assert not DATA_FORBIDDEN.search(blob), f"forbidden character in data: {DATA_FORBIDDEN.search(blob)!r}"
    if structured["untrusted"]:
        # Google's data, or the record of changes (what Claude asked and Google answered): each its line.
        assert structured["source"] == ("journal" if tool == "list_changes" else "google")
        assert text.startswith(UNTRUSTED_LINES[structured["source"]] + "\n")
    else:
        assert structured["source"] == "searchdesk" and UNTRUSTED_LINE not in text
    if result.is_error:
        assert isinstance(structured.get("error"), str) and structured["error"].strip()
    elif tool in LISTINGS:
        check_listing(tool, text, structured)
    if witness is not None:
        witness.saw_result(result, tool)
    return structured


def _line_at(text: str, index: int) -> str:
    start = text.rfind("\n", 0, index) + 1
    end = text.find("\n", index)
    return text[start : end if end != -1 else len(text)][:200]


def check_listing(tool: str, text: str, structured: Mapping[str, Any]) -> None:
    if tool == "query_search_analytics" and "file" in structured:
        return  # all_rows: a summary and a CSV file, not a table
    entries = structured[LISTINGS[tool]]
    rows = table_rows(text)
    if not entries:
        assert not rows, "table rows without structured entries"
        return
    assert len(rows) == len(entries), f"{len(rows)} table rows, {len(entries)} structured entries"
    for cells, entry in zip(rows, entries, strict=True):
        assert isinstance(entry, dict)
        shown = set().union({""}, *(_cells_of(v) for v in entry.values()))  # "": the entry lacks that field
        assert cells[0] in shown, f"row {cells[0][:80]!r} shows none of its entry's values"
