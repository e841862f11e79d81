"""Collection is held off while any thread builds an answer, and only the last to leave turns it back on."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator

import pytest

from searchdesk_server import gcpause
from searchdesk_server.gcpause import collection_paused


@pytest.fixture
def collecting(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Collection on, run by Python (a desktop test in this process may have taken it over)."""
    monkeypatch.setattr(gcpause, "_run_by_caller", False)
    was = gc.isenabled()
    gc.enable()
    yield
    if not was:
        gc.disable()


def test_a_worker_leaving_its_pause_does_not_end_the_event_loops(collecting: None) -> None:
    inside, leave = threading.Event(), threading.Event()

    def worker() -> None:
        with collection_paused():
            inside.set()
            leave.wait(5)

    with collection_paused():
        thread = threading.Thread(target=worker)
        thread.start()
        assert inside.wait(5)
        leave.set()
        thread.join(5)
        assert not gc.isenabled()  # the worker left first: still held off for this stretch
    assert gc.isenabled()


def test_where_collection_was_off_it_stays_off() -> None:
    was = gc.isenabled()
    gc.disable()
    try:
        with collection_paused():
            pass
        assert not gc.isenabled()
    finally:
        if was:
            gc.enable()


def test_a_worker_reading_the_copy_holds_collection_off_too(collecting: None) -> None:
    seen: list[bool] = []

    def worker() -> None:
        with collection_paused():
            seen.append(gc.isenabled())

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join(5)
    assert seen == [False]
    assert gc.isenabled()


def test_once_the_program_runs_collection_itself_a_pause_never_turns_it_on(collecting: None) -> None:
    """The desktop app collects on the Qt thread only (app.MainThreadGC): a worker's pause that began
    while collection was on must not turn it back on after the app has taken it over."""
    inside, leave = threading.Event(), threading.Event()

    def worker() -> None:
        with collection_paused():
            inside.set()
            leave.wait(5)

    thread = threading.Thread(target=worker)
    thread.start()
    assert inside.wait(5)
    gcpause.run_by_caller()  # as MainThreadGC does, then turns collection off
    gc.disable()
    leave.set()
    thread.join(5)
    assert not gc.isenabled()
