"""The self-check: run a server command as a child over stdio, exactly as Claude would, and say
in plain words whether it works and, if not, precisely why.

`searchdesk-server --check` and the desktop app's "Check it works" both use `run_check`.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import anyio

from .deadlines import CHECK_CALL_SECONDS, CHECK_START_SECONDS
from .text.cleaning import flatten
from .text.phrases import plural

START_TIMEOUT = CHECK_START_SECONDS
CALL_TIMEOUT = CHECK_CALL_SECONDS
CELL_CHARS = 80
TABLE_ROWS = 10


@dataclass(frozen=True)
class CheckTable:
    """One answer the check got, as rows a window can lay out as plain text.

    Built from the tools' structured results; every cell from Google is flattened (one line, no
    control or bidi characters) and cut, so it reads as what it is wherever it is shown.
    """

    title: str
    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    more: int = 0  # rows left out


@dataclass(frozen=True)
class CheckedAccount:
    """One Google account the check asked about: how many properties it sees, or why it could not be read."""

    name: str
    kind: str  # "oauth", "service_account", "demo"
    properties: int = 0
    error: str = ""


@dataclass
class CheckReport:
    ok: bool = False
    verdict: str = ""
    lines: list[str] = field(default_factory=list)
    properties: int = 0
    tools: int = 0
    #: Why it failed, for a program to word it its own way: a key of VERDICTS, or "start",
    #: "switched_off", "no_properties", "error". Empty when it passed.
    kind: str = ""
    tables: list[CheckTable] = field(default_factory=list)
    #: What the server said when it failed in a way VERDICTS does not name (its error text or its
    #: error output); for a named kind the verdict says all a person needs.
    error: str = ""
    #: Each Google account the server asked (the app's accounts Claude may use), named.
    accounts: list[CheckedAccount] = field(default_factory=list)
    #: The property the check read performance and a page of (the default when the accounts see it).
    checked: str = ""
    #: Every property the accounts listed (the server's spelling, within the allowed properties): the
    #: app's Settings offers them to pick from.
    sites: list[str] = field(default_factory=list)
    #: A passing check with something to fix: the default property is one no account can see.
    warning: str = ""

    def render(self) -> str:
        mark = "PASS" if self.ok else "FAIL"
        warning = [f"WARNING: {self.warning}"] if self.warning else []
        return "\n".join([*self.lines, "", *warning, f"{mark}: {self.verdict}"])


def _text(result: Any) -> str:
    return "\n".join(getattr(c, "text", "") for c in result.content if getattr(c, "type", "") == "text")


def _indent(text: str, limit: int = 14) -> list[str]:
    rows = text.splitlines()
    shown = ["    " + r for r in rows[:limit]]
    if len(rows) > limit:
        shown.append(f"    … ({len(rows) - limit} more lines)")
    return shown


#: The verdict for each kind of failure the server reports (its error results carry `kind`).
VERDICTS = {
    "not_configured": "Not configured: sign in with the SearchDesk app, or set the credential variables (see docs).",
    "auth": "Google did not accept the sign-in (expired or revoked): sign in again in SearchDesk.",
    "api_not_enabled": "The Search Console API is not enabled for this Google Cloud project; enable it (link above).",
    "missing_scope": "The sign-in lacks a permission SearchDesk needs: sign in again and allow every requested access.",
    "permission": "This account has no access to that property in Search Console (see above).",
    "quota": "Google's quota is used up for now; try again later.",
    "network": "Google could not be reached: check the network connection or the proxy settings.",
}


#: Each kind of Google account, in a person's words.
KINDS = {"oauth": "Google sign-in", "service_account": "service account", "demo": "demo"}


def _fail(report: CheckReport, result: Any) -> None:
    """Name the cause a person can act on, from the kind the server put in its error result."""
    kind = str((result.structured_content or {}).get("kind"))
    report.kind = kind if kind in VERDICTS else "error"
    report.verdict = VERDICTS.get(kind, "The server answered with an error (above).")
    report.error = "" if kind in VERDICTS else _text(result)


def _cell(value: object) -> str:
    if isinstance(value, bool) or value is None:
        return "" if value is None else ("yes" if value else "no")
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:,.2f}"
    return flatten(str(value), CELL_CHARS)


def _table(title: str, columns: Iterable[str], rows: list[list[object]]) -> CheckTable:
    shown = tuple(tuple(_cell(v) for v in row) for row in rows[:TABLE_ROWS])
    return CheckTable(title, tuple(columns), shown, max(0, len(rows) - TABLE_ROWS))


def _dicts(value: object) -> list[dict[str, Any]]:
    return [x for x in value if isinstance(x, dict)] if isinstance(value, list) else []


def sites_table(data: dict[str, Any]) -> CheckTable:
    """The properties, each with its permission in Search Console's words; with several accounts, the
    account a call about it goes to."""
    from .tools.sites import PERMISSIONS

    listed = _dicts(data.get("sites"))
    several = any(s.get("account") for s in listed)
    rows = [
        [s.get("site"), PERMISSIONS.get(str(s.get("permission")), s.get("permission"))]
        + ([s.get("account")] if several else [])
        for s in listed
    ]
    if several:
        return _table("Properties your Google accounts can see", ("Property", "Permission", "Account used"), rows)
    return _table("Properties this account can see", ("Property", "Permission"), rows)


def performance_table(data: dict[str, Any], site: str) -> CheckTable:
    rows = [
        [r.get("query"), r.get("clicks"), r.get("impressions"), r.get("ctr", 0) * 100, r.get("position")]
        for r in _dicts(data.get("rows"))
        if isinstance(r.get("ctr", 0), (int, float))
    ]
    title = f"Top searches, last 28 days ({_cell(site)})"
    return _table(title, ("Search", "Clicks", "Impressions", "CTR %", "Position"), rows)


INSPECTION_FIELDS = (
    ("verdict", "Verdict"),
    ("coverage", "Coverage"),
    ("indexing_state", "Indexing"),
    ("robots_txt", "robots.txt"),
    ("page_fetch", "Page fetch"),
    ("last_crawl", "Last crawl"),
)


#: Google's codes in URL Inspection's answer, in the words Search Console and Google's reference use
#: (a code not listed here is shown as Google sent it).
INSPECTION_WORDS: dict[str, dict[str, str]] = {
    "verdict": {"PASS": "Valid", "PARTIAL": "Partly valid", "FAIL": "Error", "NEUTRAL": "Excluded"},
    "indexing_state": {
        "INDEXING_ALLOWED": "Allowed",
        "BLOCKED_BY_META_TAG": "Not allowed: 'noindex' in the page's robots meta tag",
        "BLOCKED_BY_HTTP_HEADER": "Not allowed: 'noindex' in the page's X-Robots-Tag header",
        "BLOCKED_BY_ROBOTS_TXT": "Blocked by robots.txt",
    },
    "robots_txt": {"ALLOWED": "Allowed", "DISALLOWED": "Blocked"},
    "page_fetch": {
        "SUCCESSFUL": "Successful",
        "SOFT_404": "Soft 404 (the page looks missing or empty)",
        "BLOCKED_ROBOTS_TXT": "Blocked by robots.txt",
        "NOT_FOUND": "Not found",
        "ACCESS_DENIED": "Blocked: the page needs a sign-in",
        "SERVER_ERROR": "Server error",
        "REDIRECT_ERROR": "Redirect error",
        "ACCESS_FORBIDDEN": "Blocked: access forbidden",
        "BLOCKED_4XX": "Blocked by another error",
        "INTERNAL_CRAWL_ERROR": "Google's own error",
        "INVALID_URL": "Not a valid address",
    },
}


def _inspection_cell(key: str, value: object) -> object:
    if key == "last_crawl" and isinstance(value, str) and value.endswith("Z") and value[10:11] == "T":
        return f"{value[:10]} {value[11:16]} UTC"  # 2026-11-08T17:25:20Z
    words = INSPECTION_WORDS.get(key, {})
    return words.get(value, value) if isinstance(value, str) else value


def inspection_table(data: dict[str, Any], url: str) -> CheckTable:
    index = data.get("index") if isinstance(data.get("index"), dict) else {}
    assert isinstance(index, dict)
    rows: list[list[object]] = [
        [label, _inspection_cell(key, index[key])] for key, label in INSPECTION_FIELDS if key in index
    ]
    return _table(f"How Google sees {_cell(url)}", ("", ""), rows)


def _default_site(env: dict[str, str], *, demo: bool) -> str:
    """The child's default property as its settings make it (normalised; "" when none or unreadable)."""
    from .config import load
    from .variables import ConfigError

    try:
        return load(env, demo_flag=demo).default_site or ""
    except ConfigError:
        return ""


#: The MCP client name the self-check gives the server it starts.
CHECK_CLIENT = "searchdesk-check"


def shown(prop: str) -> str:
    """A property as a site owner names it: a Domain property as "the domain example.com"."""
    if prop.startswith("sc-domain:"):
        return f"the domain {flatten(prop[len('sc-domain:') :], CELL_CHARS)}"
    return flatten(prop, CELL_CHARS)


def first_url(prop: str) -> str:
    return f"https://{prop[len('sc-domain:') :]}/" if prop.startswith("sc-domain:") else prop


async def run_check(command: list[str], env: dict[str, str]) -> CheckReport:
    """Start `command` as an MCP server over stdio and exercise it as Claude would (the default property of
    its settings, GSC_SITE_URL, is the one checked when its accounts see it)."""
    import mcp_types as types
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    from . import __version__

    report = CheckReport()
    # Named as itself: the app counts only a server Claude Desktop started as "Claude Desktop started it".
    me = types.Implementation(name=CHECK_CLIENT, version=__version__)
    params = StdioServerParameters(command=command[0], args=command[1:], env=env)
    with tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace") as errlog:
        try:
            with anyio.fail_after(START_TIMEOUT + 3 * CALL_TIMEOUT):
                client = Client(stdio_client(params, errlog=errlog), mode="legacy", client_info=me)
                await _exercise(client, report, _default_site(env, demo="--demo" in command))
        except Exception as exc:  # the child died, timed out or spoke garbage
            errlog.seek(0)
            stderr = errlog.read()[-2000:].strip()
            report.ok = False
            report.kind = "start"
            report.verdict = "The server failed to start or stopped answering."
            report.error = stderr
            report.lines.append(f"Could not talk to the server ({type(exc).__name__}).")
            if stderr:
                report.lines.append("Its error output:")
                report.lines.extend(_indent(stderr, 20))
    return report


async def _exercise(client: Any, report: CheckReport, default: str = "") -> None:
    async with client:
        tools = await client.list_tools()
        names = [t.name for t in tools.tools]
        report.tools = len(names)
        report.lines.append(f"Started; it offers {len(names)} tools.")
        if "list_sites" not in names:
            report.kind = "switched_off"
            report.verdict = "list_sites is switched off (GSC_ALLOW_TOOLS / GSC_DENY_TOOLS); the check needs it."
            return
        sites = await client.call_tool("list_sites", {})
        report.lines += ["", "list_sites:"] + _indent(_text(sites))
        if sites.is_error:
            _fail(report, sites)
            return
        data = sites.structured_content or {}
        listed = _dicts(data.get("sites"))
        props = [str(s["site"]) for s in listed if isinstance(s.get("site"), str)]
        report.properties = len(props)
        report.sites = props
        report.tables.append(sites_table(data))
        failed = _accounts(report, (sites.structured_content or {}).get("accounts"))
        if not props and failed:
            report.verdict = _unreadable(props, failed)
            return
        if not props:
            report.kind = "no_properties"
            report.verdict = "Signed in, but this account has no Search Console properties; add one in Search Console."
            return
        first = default if default in props else props[0]
        report.checked = first
        if default and default not in props:
            report.warning = (
                f"The default property in SearchDesk's settings, {shown(default)}, is not one your Google accounts "
                f"can see, so the check used {shown(first)}. Choose one of yours in "
                "Settings, or add that property in Search Console."
            )
        if "query_search_analytics" in names:
            args = {"site": first, "period": "last28days", "dimensions": ["query"], "row_limit": 10}
            perf = await client.call_tool("query_search_analytics", args)
            report.lines += ["", f"query_search_analytics (last 28 days, top queries, {first}):"] + _indent(_text(perf))
            if perf.is_error:
                _fail(report, perf)
                return
            report.tables.append(performance_table(perf.structured_content or {}, first))
        if "inspect_url" in names:
            insp = await client.call_tool("inspect_url", {"site": first, "url": first_url(first)})
            report.lines += ["", f"inspect_url ({first_url(first)}):"] + _indent(_text(insp))
            if insp.is_error:
                _fail(report, insp)
                return
            report.tables.append(inspection_table(insp.structured_content or {}, first_url(first)))
        noun = "property" if len(props) == 1 else "properties"
        if failed:
            report.verdict = _unreadable(props, failed)
            return
        report.ok = True
        report.verdict = f"SearchDesk works: it can read {len(props)} {noun} for Claude (it checked {shown(first)})."


def _unreadable(props: list[str], failed: list[str]) -> str:
    noun = "property" if len(props) == 1 else "properties"
    return (
        f"SearchDesk can read {len(props)} {noun}, but the Google account {' and '.join(failed)} could not be read "
        "(see above): sign in with it again in SearchDesk, or remove it there."
    )


def _accounts(report: CheckReport, accounts: object) -> list[str]:
    """One line per Google account the server checked, named (with several, a table too); the names of
    those that failed."""
    if not isinstance(accounts, list):
        return []
    report.lines.append("")
    for entry in accounts:
        if not isinstance(entry, dict) or not entry.get("account"):
            continue
        count = entry.get("properties", 0)
        checked = CheckedAccount(
            str(entry["account"]),
            str(entry.get("kind")),
            count if isinstance(count, int) else 0,
            str(entry.get("error") or ""),
        )
        report.accounts.append(checked)
        kind = KINDS.get(checked.kind, checked.kind)
        if checked.error:
            report.lines.append(f"Google account {checked.name} ({kind}): could not be read: {checked.error}")
        else:
            report.lines.append(f"Google account {checked.name} ({kind}): {_count(checked.properties)}")
    if len(report.accounts) > 1:
        report.tables.append(accounts_table(report.accounts))
    return [a.name for a in report.accounts if a.error]


def accounts_table(accounts: list[CheckedAccount]) -> CheckTable:
    """Each account checked, named, with what it sees (several accounts: the window shows it)."""
    rows: list[list[object]] = [
        [a.name, KINDS.get(a.kind, a.kind), "could not be read" if a.error else _count(a.properties)] for a in accounts
    ]
    return _table("Google accounts checked", ("Google account", "Kind", "Properties"), rows)


def _count(properties: int) -> str:
    return plural(properties, "property", "properties")
