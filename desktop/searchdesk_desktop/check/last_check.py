"""The last check's result as the app keeps it: only while it is still about what Claude Desktop will
use, and what it taught (the properties each account saw).

Apart from the Core, which runs the check and tells the windows: this holds the two rules about a
result once it is in, that it is dropped as soon as the accounts or the entry it was about change, and
that what a check learnt outlives a later one that listed nothing it could vouch for. No Qt here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from .run import CheckSubject, SeenSites, property_counts, seen_sites

#: The result while a check runs (a check under way is about whatever it was started for).
BUSY = "busy"


class LastCheck:
    """The last result (a CheckReport, BUSY, or a str saying why it could not run), kept with the
    subject it was about. ``subject`` and ``env`` are the Core's (what a check now would be about, the
    environment it runs in); ``counted`` is told how many properties each account saw."""

    def __init__(
        self,
        subject: Callable[[], CheckSubject],
        env: Callable[[], Mapping[str, str]],
        counted: Callable[[dict[str, int]], None],
    ) -> None:
        self._subject = subject
        self._env = env
        self._counted = counted
        self._result: Any = None
        self._about: tuple[str, ...] = ()
        #: The properties the accounts listed at the last check that listed them (None: no check yet).
        self.seen_sites: SeenSites | None = None

    @property
    def result(self) -> Any:
        """The result, while it is still about what a check now would be about (else None)."""
        if self._result is not None and self._result != BUSY and self._subject().key != self._about:
            self._result = None  # the account or the entry changed since: the result no longer holds
        return self._result

    def keep(self, result: Any) -> None:
        """A result about what a check now would be about (BUSY when one starts)."""
        self._result = result
        self._about = self._subject().key
        self.learn(result)

    def finished(self, result: Any) -> None:
        """A check ended: its result is about what it was started for (a change since clears it)."""
        self._result = result
        self.learn(result)

    def learn(self, report: Any) -> None:
        """Each account's row says how many properties it saw at the last check that could read it; and
        Settings learns which (``seen_sites``)."""
        seen = seen_sites(report, self._env)
        if seen is not None:  # else it listed nothing it could vouch for: what was learnt before still holds
            self.seen_sites = seen
        counted = property_counts(report)
        if counted:
            self._counted(counted)
