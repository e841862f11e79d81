"""How long a tool call may take: the one wait every batch is measured against.

Claude Desktop gives up on a tool call after 60 seconds on macOS (other clients wait longer), and a
cancelled call's answer is lost to Claude — everything the batch did with it. So a batch answers
before the shortest wait a client gives, less a margin for the answer's own trip: `BATCH_SECONDS`.
Every batch tool derives its deadline from it, never from a number of its own.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Final

__all__ = ["BATCH_SECONDS", "CLIENT_WAIT_SECONDS", "MARGIN_SECONDS", "Deadline"]

#: The lowest wait an MCP client gives one tool call (Claude Desktop on macOS cancels at 60 s).
CLIENT_WAIT_SECONDS: Final = 60.0
#: Held back for writing the answer and its trip to the client.
MARGIN_SECONDS: Final = 10.0
#: How long a batch (inspect_urls, submit_sitemaps) may run: it answers by then.
BATCH_SECONDS: Final = CLIENT_WAIT_SECONDS - MARGIN_SECONDS


@dataclass(frozen=True)
class Deadline:
    """A moment on `time.monotonic()`'s clock by which a batch answers."""

    at: float
    seconds: float

    @classmethod
    def after(cls, seconds: float) -> Deadline:
        return cls(time.monotonic() + seconds, seconds)

    def left(self) -> float:
        """Seconds until the deadline (never negative)."""
        return max(0.0, self.at - time.monotonic())

    def can_start(self, request_seconds: float) -> bool:
        """Whether a request given up to ``request_seconds`` (the client's per-request timeout) is sure
        to end by the deadline: a request that might still be running then is never started."""
        return time.monotonic() + request_seconds <= self.at
