"""The self-check's success and failure messages, through the real command."""

from __future__ import annotations

import subprocess
import sys

from searchdesk_server.stdio_check import inspection_table, sites_table
from tests.server.stdio import REPO, server_env


def check(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "searchdesk_server", "--check", *args],
        env=server_env(env),
        cwd=REPO,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_demo_check_passes_and_shows_what_claude_sees() -> None:
    proc = check({}, "--demo")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    assert "list_sites:" in out and "query_search_analytics" in out and "inspect_url" in out
    assert "sc-domain:example.com" in out
    assert out.strip().splitlines()[-1].startswith("PASS: SearchDesk works: it can read ")


def test_the_check_checks_the_default_property_and_warns_when_no_account_sees_it() -> None:
    mine = check({"GSC_SITE_URL": "https://blog.example.com/"}, "--demo")
    assert mine.stdout.strip().splitlines()[-1].endswith("(it checked https://blog.example.com/).")
    assert "WARNING" not in mine.stdout
    theirs = check({"GSC_SITE_URL": "https://not-mine.example.org/"}, "--demo")
    lines = theirs.stdout.strip().splitlines()
    assert lines[-2].startswith("WARNING: The default property in SearchDesk's settings, https://not-mine.example.org/")
    assert "(it checked the domain example.com)" in lines[-1]  # said, not silently another one


def test_not_configured_is_said_plainly() -> None:
    proc = check({})
    assert proc.returncode == 1
    assert "FAIL: Not configured" in proc.stdout


def test_bad_setting_fails_before_starting() -> None:
    proc = check({"GSC_READ_ONLY": "perhaps"})
    assert proc.returncode == 1
    assert "GSC_READ_ONLY" in proc.stderr


def test_list_sites_switched_off_is_explained() -> None:
    proc = check({"GSC_DENY_TOOLS": "list_sites"}, "--demo")
    assert proc.returncode == 1
    assert "list_sites is switched off" in proc.stdout


def test_the_checks_tables_speak_search_consoles_words() -> None:
    """Permissions and URL Inspection's codes as Search Console says them; an unknown code as sent."""
    one = sites_table({"sites": [{"site": "sc-domain:a.example", "permission": "siteFullUser"}]})
    assert one.title == "Properties this account can see" and one.columns == ("Property", "Permission")
    assert one.rows == (("sc-domain:a.example", "full user"),)
    several = sites_table(
        {
            "sites": [
                {"site": "sc-domain:a.example", "permission": "siteOwner", "account": "you@example.com"},
                {"site": "https://b.example/", "permission": "siteNewLevel", "account": "agency@example.net"},
            ]
        }
    )
    assert several.columns == ("Property", "Permission", "Account used")
    assert several.rows == (
        ("sc-domain:a.example", "owner", "you@example.com"),
        ("https://b.example/", "siteNewLevel", "agency@example.net"),
    )
    index = {
        "verdict": "NEUTRAL",
        "coverage": "Page with redirect",
        "indexing_state": "BLOCKED_BY_META_TAG",
        "robots_txt": "DISALLOWED",
        "page_fetch": "SOFT_404",
        "last_crawl": "2026-11-08T17:25:20Z",
    }
    rows = dict(inspection_table({"index": index}, "https://a.example/").rows)
    assert rows == {
        "Verdict": "Excluded",
        "Coverage": "Page with redirect",
        "Indexing": "Not allowed: 'noindex' in the page's robots meta tag",
        "robots.txt": "Blocked",
        "Page fetch": "Soft 404 (the page looks missing or empty)",
        "Last crawl": "2026-11-08 17:25 UTC",
    }
