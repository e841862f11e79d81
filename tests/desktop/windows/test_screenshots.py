"""The setup pages' pictures (render_steps): each step's row, done, from a real window and a real check."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from searchdesk_desktop.screenshots import STEP_PICTURES, SYSTEMS, step_picture


def test_render_steps_writes_one_picture_per_step(tmp_path: Path, qtbot: QtBot) -> None:
    from PySide6.QtGui import QImage

    from searchdesk_desktop.screenshots import render_steps

    before = {k: os.environ.get(k) for k in ("HOME", "SEARCHDESK_OAUTH_CLIENT_FILE")}
    paths = render_steps(tmp_path)
    assert [p.name for p in paths] == list(STEP_PICTURES)  # each system's three, in its own words
    assert {k: os.environ.get(k) for k in before} == before  # the environment is put back
    sizes = {p.name: QImage(str(p)).size() for p in paths}
    for name, size in sizes.items():
        assert size.width() > 500 and size.height() > 50, name
    # Step 3 holds the check's output under the step, so it is the tallest: a row grabbed alone would not be.
    for system in SYSTEMS:
        step1, step3 = sizes[step_picture(1, system)], sizes[step_picture(3, system)]
        assert step3.height() > 1.5 * step1.height(), system.page


def test_render_steps_refuses_to_picture_a_failing_check(
    tmp_path: Path, qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A check that fails (here: the demo's "today" is not a date, so the server will not start)."""
    from searchdesk_desktop import screenshots

    monkeypatch.setattr(screenshots, "STEPS_DAY", "not-a-date")
    with pytest.raises(RuntimeError, match="step 3 cannot be pictured"):
        screenshots.render_steps(tmp_path)
    assert not any(tmp_path.glob("setup-step-3*.png"))
