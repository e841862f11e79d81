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


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Make ``--dist loadgroup`` keep each ``xdist_group`` on one worker, as the marks say.

    pytest-xdist (3.8) names a test's group by appending ``@group`` to ``item._nodeid``; pytest 9.2
    keeps the id in ``item._id``, so the rename is lost and every grouped test is dealt out alone: a
    module's one-off set-up (the benchmark's smoke run, the self-check of the walks, an X display and
    its app) then runs on both workers. Here, after xdist's own hook, the group is added where it is
    missing; once xdist's rename works again this does nothing.
    """
    if not getattr(config.option, "loadgroup", False):  # set on xdist's workers under --dist loadgroup
        return
    from _pytest.nodeid import coerce_node_id

    for item in items:
        names = {
            str(m.args[0] if m.args else m.kwargs.get("name", "default")) for m in item.iter_markers("xdist_group")
        }
        suffix = "@" + "_".join(sorted(names))
        if names and not item.nodeid.endswith(suffix):
            item._id = coerce_node_id(item.nodeid + suffix)


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
