"""Shared test set-up. Fixtures live beside what they serve; this file only wires them in."""

from __future__ import annotations

import gc
import os
import sys
import tempfile
from collections.abc import Iterator

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# Quota counters and other per-user files go to a throwaway folder, never the real home.
_scratch = tempfile.mkdtemp(prefix="searchdesk-tests-")
os.environ["XDG_DATA_HOME"] = os.path.join(_scratch, "data")
os.environ["XDG_STATE_HOME"] = os.path.join(_scratch, "state")
pytest_plugins = ["tests.fakegoogle.plugin"]


@pytest.fixture(autouse=True)
def _qt_garbage_on_the_main_thread() -> Iterator[None]:
    """Collect cyclic garbage on the main thread only, once Qt is loaded (the app's MainThreadGC rule).

    A collection can start in any thread that allocates (a listener thread, a token pool, a test's
    writer thread) and would then delete Qt objects a previous test left behind (qasync's notifiers,
    say) from the wrong thread: the main thread crashes later, in its event loop. So while Qt is loaded,
    automatic collection is off and each test ends with a collection here.
    """
    if "PySide6.QtCore" in sys.modules:
        gc.disable()
    yield
    if "PySide6.QtCore" in sys.modules:
        gc.disable()
        gc.collect()
