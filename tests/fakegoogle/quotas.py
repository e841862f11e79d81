"""Google's published Search Analytics quotas, enforced by the fake (``FakeGoogle.enforce_quotas``).

Google documents (developers.google.com/webmaster-tools/limits) for searchAnalytics.query: 1,200
queries a minute per site, 1,200 a minute per user, and a short-term *load* quota that has no published
figure but is said to favour "small requests spread over time". The fake counts only the requests it
answered (a refused one costs nothing), in sliding windows: per site and per user over a minute, and
for the load quota at most ``load_burst`` requests in any ``load_window`` seconds per user. Over any of
them the answer is Google's 429 ``RESOURCE_EXHAUSTED`` with a Retry-After.

Tests accelerate time with ``minute`` (a "minute" of 0.6 s is 100 times faster); the load window
scales with it. What was refused is in ``refused``: the test's judge that a copy kept within them.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

PER_SITE_PER_MINUTE = 1_200
PER_USER_PER_MINUTE = 1_200


@dataclass(frozen=True)
class Refusal:
    at: float
    quota: str  # "site", "user" or "load"
    site: str
    user: str


@dataclass
class Quotas:
    """Sliding-window counters; ``check`` is called once per searchAnalytics/query request."""

    per_site_per_minute: int = PER_SITE_PER_MINUTE
    per_user_per_minute: int = PER_USER_PER_MINUTE
    #: The short-term load quota: at most this many requests in any ``load_window`` of a user's (twice the
    #: per-minute rate, in a burst: it is the burst that it refuses).
    load_burst: int = 200
    #: Seconds of a real minute the load window spans (5 s: a burst, not a rate).
    load_share: float = 5.0 / 60.0
    #: How long a "minute" is, in seconds (tests make it shorter to go faster).
    minute: float = 60.0
    #: The Retry-After the 429 carries, in whole seconds (HTTP allows no fractions).
    retry_after: int = 1
    clock: Callable[[], float] = time.monotonic
    refused: list[Refusal] = field(default_factory=list)
    answered: int = 0
    _sites: dict[str, deque[float]] = field(default_factory=dict)
    _users: dict[str, deque[float]] = field(default_factory=dict)
    _load: dict[str, deque[float]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def load_window(self) -> float:
        return self.minute * self.load_share

    def check(self, site: str, user: str) -> str | None:
        """Count one request; the name of the quota it would exceed (then it is not counted), or None."""
        now = self.clock()
        with self._lock:
            windows = (
                ("site", self._sites.setdefault(site, deque()), self.minute, self.per_site_per_minute),
                ("user", self._users.setdefault(user, deque()), self.minute, self.per_user_per_minute),
                ("load", self._load.setdefault(user, deque()), self.load_window, self.load_burst),
            )
            for name, window, span, limit in windows:
                while window and window[0] <= now - span:
                    window.popleft()
                if len(window) >= limit:
                    self.refused.append(Refusal(now, name, site, user))
                    return name
            for _, window, _, _ in windows:
                window.append(now)
            self.answered += 1
            return None

    def reset(self) -> None:
        with self._lock:
            self.refused.clear()
            self.answered = 0
            self._sites.clear()
            self._users.clear()
            self._load.clear()
