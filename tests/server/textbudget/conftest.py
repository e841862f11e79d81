"""Fixtures for the text/budget/quota tests: a quota file in a temporary folder and a settable clock."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest


class Clock:
    """A clock the test moves by hand: no sleeping, no real time."""

    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def clock() -> Clock:
    # 12:00 in Los Angeles (PST, UTC-8) on 2026-11-29.
    return Clock(datetime(2026, 11, 29, 20, 0, tzinfo=UTC))


@pytest.fixture
def quota_path(tmp_path: Path) -> Iterator[Path]:
    yield tmp_path / "data" / "quota.json"
