"""Shared test set-up. Fixtures live beside what they serve; this file only wires them in."""

from __future__ import annotations

import os
import tempfile

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# Quota counters and other per-user files go to a throwaway folder, never the real home.
_scratch = tempfile.mkdtemp(prefix="searchdesk-tests-")
os.environ["XDG_DATA_HOME"] = os.path.join(_scratch, "data")
os.environ["XDG_STATE_HOME"] = os.path.join(_scratch, "state")
pytest_plugins = ["tests.fakegoogle.plugin"]
