"""A clock the test moves by hand (`clock.now += 5`): no sleeping, no real time."""

from __future__ import annotations


class Clock:
    """Called as `time.monotonic` or `time.time` is; reads `now`, which only the test changes."""

    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now
