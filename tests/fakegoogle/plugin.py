"""pytest fixtures for the fake Google. Registered in tests/conftest.py with:

pytest_plugins = ["tests.fakegoogle.plugin"]
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakegoogle import FakeGoogle


@pytest.fixture
def fake_google(tmp_path: Path) -> Iterator[FakeGoogle]:
    """A fresh fake Google per test: loopback TLS server, CONNECT proxy, in-process transport."""
    fake = FakeGoogle(tmp_path / "fake-google")
    try:
        yield fake
    finally:
        fake.close()


@pytest.fixture
def fake_google_env(fake_google: FakeGoogle, monkeypatch: pytest.MonkeyPatch) -> FakeGoogle:
    """The fake, with this process's environment pointing new httpx clients at it (proxy + CA)."""
    fake_google.apply_env(monkeypatch)
    return fake_google
