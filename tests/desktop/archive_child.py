"""A copier in a process of its own, for the kill-and-restart test (test_archive_sync.py).

    python -m tests.desktop.archive_child <archive folder> <key file> <site> <today> <per minute> <minute>

The fake Google is reached through the environment (HTTPS_PROXY, SSL_CERT_FILE), tokens come from the
app's own ServiceAccountTokens for the key file, and the copy runs once to its end (or its kill).
"""

from __future__ import annotations

import datetime
import sys
from pathlib import Path

import anyio


def main(argv: list[str]) -> int:
    from searchdesk_desktop.accounts.signin import load_service_account_file
    from searchdesk_desktop.accounts.tokens import ServiceAccountTokens
    from searchdesk_desktop.keeping.archive_copier import Copier, Pace, Scope
    from searchdesk_desktop.keeping.archive_keeper import Archives
    from searchdesk_desktop.keeping.archive_sync import google_caller

    folder, key_file, site, today_text, per_minute, minute = argv
    tokens = ServiceAccountTokens(load_service_account_file(Path(key_file)))
    today = datetime.date.fromisoformat(today_text)
    archives = Archives(Path(folder))

    async def run() -> None:
        call, close = google_caller(lambda a, s, f: tokens.access_token(s, force_refresh=f).token)
        scope = Scope(accounts=(tokens.account,), allowed_sites=(site,))
        copier = Copier(
            archives,
            call,
            lambda: scope,
            pace=Pace(float(per_minute), float(minute)),
            search_types=("web",),
            today=lambda: today,
        )
        try:
            await copier.run_once()
        finally:
            await close()

    anyio.run(run)
    archives.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
