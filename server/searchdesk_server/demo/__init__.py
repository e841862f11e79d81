"""The embedded demo: an in-memory Google Search Console that plugs in below the HTTP client.

`demo_transport()` returns an httpx transport answering searchconsole.googleapis.com, the Site
Verification API on www.googleapis.com and indexing.googleapis.com from deterministic data whose dates
are relative to today (the server's `Config.today` pins it). Importing this package builds nothing; the data
is generated on first use. DEMO_ACCOUNT is the Google account the demo acts as.
"""

from __future__ import annotations

from .google import DemoGoogle, demo_transport
from .state import DEMO_USER as DEMO_ACCOUNT

__all__ = ["DEMO_ACCOUNT", "DemoGoogle", "demo_transport"]
