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


#: Why a test can run only on Linux, by the fixture that makes it so. A test asking for one of these is marked
#: ``linux_only`` with that reason when collected; a test that needs Linux otherwise says so itself with
#: ``@pytest.mark.linux_only("why")``. On macOS and Windows (the CI jobs of .github/workflows/ci.yml) each is
#: skipped with its reason in the summary, never silently; those systems' own keyrings, notifications and
#: pipes have their tests (test_system_keyring.py, packaging/smoke_notifier.py, test_listener_pipe.py).
GNOME_KEYRING = "gnome-keyring's Secret Service on a private D-Bus (macOS and Windows: test_system_keyring.py)"
X_DISPLAY = "a real X display (Xvfb, openbox, xdotool)"
LINUX_ONLY_FIXTURES = {
    "keyring_session": GNOME_KEYRING,
    "real_keyring": GNOME_KEYRING,
    "fresh_keyring": GNOME_KEYRING,
    "private_bus": "a private D-Bus session bus (dbus-daemon): the freedesktop notification service",
    "private_system_bus": "a private D-Bus standing in for the system bus (logind's screen lock)",
    "display_desk": X_DISPLAY,
}


def pytest_itemcollected(item: pytest.Item) -> None:
    """Mark every test that asks for a Linux-only fixture (see LINUX_ONLY_FIXTURES)."""
    for name in getattr(item, "fixturenames", ()):
        if name in LINUX_ONLY_FIXTURES:
            item.add_marker(pytest.mark.linux_only(LINUX_ONLY_FIXTURES[name]))


@pytest.hookimpl(tryfirst=True)  # before fixtures are set up: a Linux-only fixture must not start
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Skip a ``linux_only`` test elsewhere, saying why; a mark without a reason is an error, not a skip."""
    for mark in item.iter_markers("linux_only"):
        reason = mark.args[0] if mark.args else mark.kwargs.get("reason", "")
        if not reason:
            pytest.fail(f"{item.nodeid}: linux_only needs a reason (a skip must say why)", pytrace=False)
        if not sys.platform.startswith("linux"):
            pytest.skip(f"Linux only: {reason}")


def pytest_collection_finish(session: pytest.Session) -> None:
    """Freeze what collection made, so each test's full collection below scans only what tests made.

    Collecting imports both packages, Qt and every test module: some 200,000 objects that live until the
    process ends. A full collection walked them all after every test (0.1-0.5 s each, about 2,400 times a
    run); frozen (`gc.freeze`, as the UI walk does), they are never scanned and never freed, which they
    would not be anyway, and a collection after a test costs what that test left behind.
    """
    gc.collect()
    gc.freeze()


@pytest.fixture(autouse=True)
def _qt_garbage_on_the_main_thread() -> Iterator[None]:
    """Collect cyclic garbage on the main thread only, once Qt is loaded (the app's MainThreadGC rule).

    A collection can start in any thread that allocates (a listener thread, a token pool, a test's
    writer thread) and would then delete Qt objects a previous test left behind (qasync's notifiers,
    say) from the wrong thread: the main thread crashes later, in its event loop. So while Qt is loaded,
    automatic collection is off and each test ends with a collection here; a worker thread's pause
    (`searchdesk_server.gcpause`) never turns it back on.
    """
    if "PySide6.QtCore" in sys.modules:
        _collection_run_here()
    yield
    if "PySide6.QtCore" in sys.modules:
        _collection_run_here()
        gc.collect()


def _collection_run_here() -> None:
    """As the app's MainThreadGC: automatic collection off, and no thread's pause may turn it back on."""
    from searchdesk_server import gcpause

    gcpause.run_by_caller()
    gc.disable()
