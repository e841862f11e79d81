""" "Check it works": what a check is about, what it runs, and what its result teaches the app. No Qt here.

The check runs the very server Claude Desktop will start (our entry's, or the extension's own copy) in
the environment Claude Desktop would give it, so its result holds only while the accounts and the entry
stay as they were (`CheckSubject.key`). The Core runs it on a worker thread and keeps the last result.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from searchdesk_server.config import parse_sites
from searchdesk_server.properties import covers
from searchdesk_server.variables import ConfigError

from ..accounts.model import AccountRow, AccountState
from ..claude import config_file as cc
from ..claude.state import ClaudeStatus

log = logging.getLogger(__name__)

#: What "Check it works" says when it fails, in the app's words (the server's are for its command line).
CHECK_WORDS = {
    "not_configured": "Claude would get no data: SearchDesk has no Google account to use yet. Finish step 1, "
    "then check again.",
    "auth": "Google no longer accepts your sign-in. Sign in again (step 1), then check again.",
    "api_not_enabled": "The Search Console API is turned off in your Google Cloud project. Turn it on (the "
    "message below names the page), then check again.",
    "missing_scope": "Your Google sign-in did not allow everything SearchDesk needs. Sign in again (step 1) "
    "and allow each access Google asks for.",
    "permission": "This Google account has no access to that property in Search Console.",
    "quota": "Google's daily limit for this is used up. Try again tomorrow.",
    "network": "SearchDesk could not reach Google. Check your internet connection (or proxy), then check again.",
    "start": "SearchDesk did not start. What it said is under Details for support.",
    "switched_off": "Listing your properties is switched off in Settings, and the check needs it. Offer the "
    "Properties tools (or every tool), then check again.",
    "no_properties": "Your Google account has no Search Console properties yet. Add your site in Search Console first.",
    "error": "SearchDesk got an error instead of your data. What it said is under Details for support.",
}

#: The variables of this computer's environment that Claude Desktop passes to the servers it starts.
KEPT_VARIABLES = ("HOME", "PATH", "USER", "LOGNAME", "LANG", "SYSTEMROOT", "APPDATA", "LOCALAPPDATA", "TMPDIR", "TEMP")


def check_verdict(report: Any) -> str:
    """The check's verdict in the app's words (the server's own are written for its command line)."""
    return str(report.verdict) if report.ok else CHECK_WORDS.get(report.kind, report.verdict)


@dataclass(frozen=True)
class CheckSubject:
    """What a check's result is about: the Google account and the entry Claude Desktop will use.

    A result stands only while both are unchanged; ``key`` compares them.
    """

    account: str  # "you@example.com", "the demo", "no Google account"
    entry: str  # "Claude Desktop's SearchDesk entry", …
    key: tuple[str, ...]


@dataclass(frozen=True)
class SeenSites:
    """The properties the last check's Google accounts listed: what Settings offers to pick from, and
    its evidence that a default property is one no account Claude may use can see.

    Kept apart from the check's result, which stops holding when the settings change (Settings itself
    changes them): the accounts' properties do not change with the settings.
    """

    sites: tuple[str, ...]
    #: The accounts the check read (casefolded addresses); empty when it named none (the demo, one account).
    accounts: frozenset[str]
    #: The allowed properties in force at the check (the server lists only those); () for every property.
    allowed: tuple[str, ...]

    def unseen(self, prop: str, accounts: Iterable[str]) -> bool:
        """Is ``prop`` a property none of ``accounts`` (those Claude may use now) could see at the check?
        False whenever the check cannot tell: an account it did not read, or a property it was not
        allowed to list."""
        if self.accounts and not {a.casefold() for a in accounts} <= self.accounts:
            return False
        listable = not self.allowed or any(covers(a, prop) for a in self.allowed)
        return listable and prop not in self.sites


def check_subject(
    state: AccountState, rows: Sequence[AccountRow], status: ClaudeStatus, planned_env: Mapping[str, str]
) -> CheckSubject:
    """The accounts and the entry a check run now would be about: the server checks every account
    Claude may use, so adding, removing or withholding one changes the subject too. ``planned_env``:
    the environment SearchDesk would write into a new entry."""
    if state is AccountState.DEMO:
        who = "the demo (no Google account)"
    else:
        names = [
            row.email if row.state is AccountState.SIGNED_IN else f"the service account {row.email}"
            for row in rows
            if row.for_claude and row.ok
        ]
        if len(names) > 1:
            who = f"{', '.join(names[:-1])} and {names[-1]}"
        else:
            who = names[0] if names else "no Google account"
    accounts = tuple(f"{r.kind} {r.email} {r.state.value} {r.for_claude} {r.default}" for r in rows)
    entry = status.check.entry
    if entry is not None:
        what = "Claude Desktop's SearchDesk entry" + (" (the demo)" if cc.is_demo_entry(entry) else "")
        key = json.dumps(entry, sort_keys=True)
    elif status.extension is not None:
        what = "the SearchDesk extension in Claude Desktop"
        key = f"extension {status.extension} {status.extension_version}"
    else:
        what = "what SearchDesk will add to Claude Desktop"
        key = json.dumps(planned_env, sort_keys=True)
    return CheckSubject(who, what, (state.value, *accounts, key))


def check_blocked(status: ClaudeStatus) -> str:
    """Why a check now would not test what Claude Desktop will use ('' when it would)."""
    state = status.check.state
    if state is cc.EntryState.OK:
        fine = status.extension is None  # else Claude has SearchDesk twice: step 2 says so
    elif state is cc.EntryState.ABSENT:
        fine = status.extension is None or status.extension_is_ours
    else:
        fine = False
    return "" if fine else "Put step 2 right first: the check must test what Claude Desktop will use."


def check_command(status: ClaudeStatus, server: cc.ServerCommand) -> list[str]:
    """The program Claude Desktop will start: our entry's (this app's server), or the extension's own copy.

    The extension route (macOS, Windows) is not exercised here: there is no Claude Desktop on Linux.
    """
    if status.check.entry is None and status.extension is not None and status.extension_is_ours:
        name = "searchdesk-server.exe" if sys.platform == "win32" else "searchdesk-server"
        program = status.extension / "server" / name
        if cc.runnable(str(program)):
            return [str(program)]
    return server.argv()


def check_env(claude_path: Path, planned_env: Mapping[str, str]) -> dict[str, str]:
    """The environment Claude Desktop would give the server: a bare one plus our entry's env (or, with no
    entry, ``planned_env``: what SearchDesk would write)."""
    env = {k: os.environ[k] for k in KEPT_VARIABLES if k in os.environ}
    env.update(cc.entry_env(claude_path) or planned_env)
    return env


def run_check(command: Callable[[], list[str]], env: Callable[[], dict[str, str]]) -> Any:
    """Run the server's self-check (on a worker thread): a CheckReport, or a str saying why it could not run.
    ``command`` and ``env`` are read here, so that reading them failing is one more reason it could not."""
    try:
        from searchdesk_server.stdio_check import run_check as server_check
    except ImportError:
        return "The self-check is not available in this build."
    try:
        return asyncio.run(server_check(command(), env()))
    except Exception:
        log.exception("the check could not run")
        return "The check could not run. Try again; if it keeps failing, SearchDesk's log says why."


def seen_sites(report: Any, env: Callable[[], Mapping[str, str]]) -> SeenSites | None:
    """The properties a check listed (an empty list only when the accounts have none); None when it listed
    nothing it could vouch for (what was learnt before still holds). ``env``: the check's environment
    (read only when there are properties to keep)."""
    sites = getattr(report, "sites", None)
    if not sites and getattr(report, "kind", "") != "no_properties":
        return None
    try:
        _default, allowed = parse_sites(env())
    except ConfigError:
        allowed = ()
    read = frozenset(a.name.casefold() for a in getattr(report, "accounts", []) if not a.error)
    return SeenSites(tuple(sites or ()), read, allowed)


def property_counts(report: Any) -> dict[str, int]:
    """How many properties each account the check could read saw (by casefolded address)."""
    return {a.name.casefold(): a.properties for a in getattr(report, "accounts", []) if not a.error}
