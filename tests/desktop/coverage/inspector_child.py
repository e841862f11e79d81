"""An inspector in a process of its own, for the kill-and-resume test (test_inspector.py).

    python -m tests.desktop.coverage.inspector_child <store file> <quota file> <key file> <site> <per minute> <minute>

The fake Google is reached through the environment (HTTPS_PROXY, SSL_CERT_FILE); tokens come from the
app's own ServiceAccountTokens for the key file; the pass runs to its end (or its kill).
"""

from __future__ import annotations

import sys
from pathlib import Path

import anyio


def main(argv: list[str]) -> int:
    from searchdesk_desktop.accounts.signin import load_service_account_file
    from searchdesk_desktop.accounts.tokens import ServiceAccountTokens
    from searchdesk_desktop.keeping.archive_copier import Pace
    from searchdesk_desktop.keeping.coverage_inspector import Inspector, Target
    from searchdesk_desktop.keeping.coverage_sync import google_inspect
    from searchdesk_server.coverage.store import CoverageStore
    from searchdesk_server.quota import QuotaBook

    store_file, quota_file, key_file, site, per_minute, minute = argv
    tokens = ServiceAccountTokens(load_service_account_file(Path(key_file)))
    store = CoverageStore.open(Path(store_file))

    async def run() -> None:
        inspect, close = google_inspect(lambda a, s, f: tokens.access_token(s, force_refresh=f).token)
        inspector = Inspector(
            lambda account: store,
            QuotaBook(Path(quota_file)),
            inspect,
            lambda: [Target("me", site)],
            pace=Pace(float(per_minute), float(minute)),
        )
        try:
            await inspector.run_once()
        finally:
            await close()

    anyio.run(run)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
