"""URL Inspection's quotas, enforced by the fake (``FakeGoogle.enforce_inspection_quotas``).

Google documents (developers.google.com/webmaster-tools/limits) for urlInspection.index.inspect:
per property 2,000 a day and 600 a minute; per project 10,000,000 a day and 15,000 a minute. The fake
counts the requests it answered, per property (``siteUrl`` in the body) in a sliding "minute" and per
"day" (``day`` seconds, shorter in tests), and for the whole project per day when ``project_per_day``
is set. Over one: a 429 ``RESOURCE_EXHAUSTED`` naming which limit, worded as Google's quota errors are
(the limit's name is the fake's: Google does not publish the exact text for this API).
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

PER_PROPERTY_PER_MINUTE = 600
PER_PROPERTY_PER_DAY = 2_000


@dataclass
class InspectionQuotas:
    per_minute: int = PER_PROPERTY_PER_MINUTE
    per_day: int = PER_PROPERTY_PER_DAY
    project_per_day: int | None = None
    minute: float = 60.0
    day: float = 86_400.0
    retry_after: int = 1
    clock: Callable[[], float] = time.monotonic
    refused: list[tuple[float, str, str]] = field(default_factory=list)  # (when, which, site)
    answered: dict[str, int] = field(default_factory=dict)
    _minute: dict[str, deque[float]] = field(default_factory=dict)
    _day: dict[str, deque[float]] = field(default_factory=dict)
    _project: deque[float] = field(default_factory=deque)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def check(self, site: str) -> str | None:
        """Count one inspection of ``site``; which limit it would pass (then not counted), or None."""
        now = self.clock()
        with self._lock:
            windows = [
                ("minute", self._minute.setdefault(site, deque()), self.minute, self.per_minute),
                ("day", self._day.setdefault(site, deque()), self.day, self.per_day),
            ]
            if self.project_per_day is not None:
                windows.append(("project", self._project, self.day, self.project_per_day))
            for name, window, span, limit in windows:
                while window and window[0] <= now - span:
                    window.popleft()
                if len(window) >= limit:
                    self.refused.append((now, name, site))
                    return name
            for _, window, _, _ in windows:
                window.append(now)
            self.answered[site] = self.answered.get(site, 0) + 1
            return None


def message(which: str) -> str:
    limit = {
        "minute": "URL Inspection requests per minute per site",
        "day": "URL Inspection requests per day per site",
        "project": "URL Inspection requests per day",
    }[which]
    return f"Quota exceeded for quota metric 'URL Inspection requests' and limit '{limit}'."
