"""Every time and budget both programs keep, once: how long a client waits for a tool call, how long a
batch or a report may run, how long a question stays open and a token lives, how long the app waits for
a sign-in or the check for a server.

Claude Desktop gives up on a tool call after 60 seconds on macOS (other clients wait longer), and a
cancelled call's answer is lost to Claude — everything the batch did with it. So a batch answers
before the shortest wait a client gives, less a margin for the answer's own trip: `BATCH_SECONDS`.
Every batch tool derives its deadline from it, never from a number of its own; the other figures here
are derived from one another where one idea links them, and stand alone, with their reason, where not.

Code imports these (the agent protocol re-exports the question's times under its own names); a page
that states one is checked against it, and a hand-written copy in code or a page fails
tests/server/foundation/test_drift.py. Sentences state minutes with `text.minutes()`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Final

__all__ = [
    "APPROVAL_WAIT_DEFAULT",
    "APPROVAL_WAIT_MOST",
    "BATCH_SECONDS",
    "CHECK_CALL_SECONDS",
    "CHECK_START_SECONDS",
    "CLIENT_WAIT_SECONDS",
    "CONFIRM_TOKEN_SECONDS",
    "IDLE_WAKE_SECONDS",
    "MARGIN_SECONDS",
    "QUESTION_OPEN_SECONDS",
    "QUESTION_STATE_SECONDS",
    "REPORT_READ_SECONDS",
    "SIGN_IN_SECONDS",
    "TOKEN_HANDED_OUT_SECONDS",
    "TOKEN_USED_SECONDS",
    "Deadline",
]

# --- one tool call -----------------------------------------------------------------------------------

#: The lowest wait an MCP client gives one tool call (Claude Desktop on macOS cancels at 60 s).
CLIENT_WAIT_SECONDS: Final = 60.0
#: Held back for writing the answer and its trip to the client.
MARGIN_SECONDS: Final = 10.0
#: How long a batch (inspect_urls, submit_sitemaps) may run: it answers by then.
BATCH_SECONDS: Final = CLIENT_WAIT_SECONDS - MARGIN_SECONDS
#: How long a report reads Google (content decay, month by month) before it answers from the months
#: read in full: a batch's time less one more margin for the report's own arithmetic.
REPORT_READ_SECONDS: Final = int(BATCH_SECONDS - MARGIN_SECONDS)

# --- asking a person ---------------------------------------------------------------------------------

#: How long a server waits for the app's answer by default (SEARCHDESK_APPROVAL_WAIT) before it tells
#: Claude the question is still open: room is left in the client's wait for Google's own answer.
APPROVAL_WAIT_DEFAULT: Final = 40
#: The longest that wait may be set to, and the agent socket's bound on it: under the client's wait, with
#: a few seconds for Google's answer and the result's trip.
APPROVAL_WAIT_MOST: Final = 55
#: How long the app keeps a question open when nobody answers (the dialog, the notification), and then
#: keeps the answer for a later identical call to collect.
QUESTION_OPEN_SECONDS: Final = 300.0
#: How long a two-call confirm_token lives (only where nobody can be asked: docs/security.md).
CONFIRM_TOKEN_SECONDS: Final = 300.0
#: How long a server keeps the words it showed and a sealed `requestState` opens: longer than the app
#: keeps a question and then its answer, with one more such time for the call that collects it.
QUESTION_STATE_SECONDS: Final = 3 * QUESTION_OPEN_SECONDS

# --- access tokens -----------------------------------------------------------------------------------
# Two named facts for one idea, a token must outlive its use: the server stops using a cached token once
# it might lapse during one call; the app hands out only tokens that a server can then keep using for a
# few minutes, so a server does not come back for a new one before nearly every call.

#: A server uses a cached access token only while more than this is left: one call's whole wait.
TOKEN_USED_SECONDS: Final = CLIENT_WAIT_SECONDS
#: The app refreshes a token before handing it out when less than this is left (Google's live an hour).
TOKEN_HANDED_OUT_SECONDS: Final = 300.0

# --- the app's own waits -----------------------------------------------------------------------------

#: How long the app waits for the person to finish signing in with Google in the browser.
SIGN_IN_SECONDS: Final = 300.0
#: How long the check (`--check`, the app's Check it works) gives a server to start and answer
#: `initialize`; a frozen app's first start unpacks and imports for a few seconds.
CHECK_START_SECONDS: Final = 30.0
#: How long the check waits for one tool call: as long as a client would.
CHECK_CALL_SECONDS: Final = CLIENT_WAIT_SECONDS

#: The longest a background loop (the archive's copying, the coverage watch) blocks between rounds: how
#: late a computer woken from sleep looks again, and so the most often an idle one wakes, once a minute.
IDLE_WAKE_SECONDS: Final = 60.0


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
