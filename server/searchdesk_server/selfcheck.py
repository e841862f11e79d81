"""The self-check: run a server command as a child over stdio, exactly as Claude would, and say
in plain words whether it works and, if not, precisely why.

`searchdesk-server --check` and the desktop app's "Check it works" both use `run_check`.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from typing import Any

import anyio

START_TIMEOUT = 30.0
CALL_TIMEOUT = 60.0


@dataclass
class CheckReport:
    ok: bool = False
    verdict: str = ""
    lines: list[str] = field(default_factory=list)
    properties: int = 0
    tools: int = 0

    def render(self) -> str:
        mark = "PASS" if self.ok else "FAIL"
        return "\n".join([*self.lines, "", f"{mark}: {self.verdict}"])


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


def _problem(result: Any) -> str:
    """Name the cause a person can act on, from the kind the server put in its error result."""
    kind = (result.structured_content or {}).get("kind")
    return VERDICTS.get(str(kind), "The server answered with an error (above).")


def first_url(prop: str) -> str:
    return f"https://{prop[len('sc-domain:') :]}/" if prop.startswith("sc-domain:") else prop


async def run_check(command: list[str], env: dict[str, str]) -> CheckReport:
    """Start `command` as an MCP server over stdio and exercise it as Claude would."""
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    report = CheckReport()
    params = StdioServerParameters(command=command[0], args=command[1:], env=env)
    with tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace") as errlog:
        try:
            with anyio.fail_after(START_TIMEOUT + 3 * CALL_TIMEOUT):
                await _exercise(Client(stdio_client(params, errlog=errlog), mode="legacy"), report)
        except Exception as exc:  # the child died, timed out or spoke garbage
            errlog.seek(0)
            stderr = errlog.read()[-2000:].strip()
            report.ok = False
            report.verdict = "The server failed to start or stopped answering."
            report.lines.append(f"Could not talk to the server ({type(exc).__name__}).")
            if stderr:
                report.lines.append("Its error output:")
                report.lines.extend(_indent(stderr, 20))
    return report


async def _exercise(client: Any, report: CheckReport) -> None:
    async with client:
        tools = await client.list_tools()
        names = [t.name for t in tools.tools]
        report.tools = len(names)
        report.lines.append(f"Started; it offers {len(names)} tools.")
        if "list_sites" not in names:
            report.verdict = "list_sites is switched off (GSC_ALLOW_TOOLS / GSC_DENY_TOOLS); the check needs it."
            return
        sites = await client.call_tool("list_sites", {})
        report.lines += ["", "list_sites:"] + _indent(_text(sites))
        if sites.is_error:
            report.verdict = _problem(sites)
            return
        listed = (sites.structured_content or {}).get("sites", [])
        props = [str(s["site"]) for s in listed if isinstance(s, dict) and isinstance(s.get("site"), str)]
        report.properties = len(props)
        failed = _accounts(report, (sites.structured_content or {}).get("accounts"))
        if not props and failed:
            report.verdict = _unreadable(props, failed)
            return
        if not props:
            report.verdict = "Signed in, but this account has no Search Console properties; add one in Search Console."
            return
        first = props[0]
        if "query_search_analytics" in names:
            args = {"site": first, "period": "last28days", "dimensions": ["query"], "row_limit": 10}
            perf = await client.call_tool("query_search_analytics", args)
            report.lines += ["", f"query_search_analytics (last 28 days, top queries, {first}):"] + _indent(_text(perf))
            if perf.is_error:
                report.verdict = _problem(perf)
                return
        if "inspect_url" in names:
            insp = await client.call_tool("inspect_url", {"site": first, "url": first_url(first)})
            report.lines += ["", f"inspect_url ({first_url(first)}):"] + _indent(_text(insp))
            if insp.is_error:
                report.verdict = _problem(insp)
                return
        noun = "property" if len(props) == 1 else "properties"
        if failed:
            report.verdict = _unreadable(props, failed)
            return
        report.ok = True
        report.verdict = f"Claude can see {len(props)} {noun} through SearchDesk."


def _unreadable(props: list[str], failed: list[str]) -> str:
    noun = "property" if len(props) == 1 else "properties"
    return (
        f"Claude can see {len(props)} {noun}, but the Google account {' and '.join(failed)} could not be read "
        "(see above): sign in with it again in SearchDesk, or remove it there."
    )


def _accounts(report: CheckReport, accounts: object) -> list[str]:
    """One line per Google account the server checked, named; the names of those that failed."""
    if not isinstance(accounts, list):
        return []
    kinds = {"oauth": "Google sign-in", "service_account": "service account", "demo": "demo"}
    failed = []
    report.lines.append("")
    for entry in accounts:
        if not isinstance(entry, dict) or not entry.get("account"):
            continue
        name = str(entry["account"])
        kind = kinds.get(str(entry.get("kind")), str(entry.get("kind")))
        error = entry.get("error")
        if error:
            failed.append(name)
            report.lines.append(f"Google account {name} ({kind}): could not be read: {error}")
        else:
            count = entry.get("properties", 0)
            report.lines.append(f"Google account {name} ({kind}): {count} {'property' if count == 1 else 'properties'}")
    return failed
