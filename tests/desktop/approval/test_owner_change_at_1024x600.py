"""The consequence stays in view (issue 36, item 10): with 200 owners on a 1024×600 screen, the owner-change
dialog keeps its sentences, counts, heading and the consequence ("Everyone not in the new list loses…") in
view, and only the list of addresses scrolls; it names a Domain property as the owners question does,
never by its "sc-domain:" spelling. Real widgets on Qt's offscreen platform with a 1024×600 screen (and the
same screen at 150 %), in a process of their own (`owner_change_walk.py`). Before issue 36 the whole
question scrolled as one and the consequence was below the addresses, out of sight."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from searchdesk_server.approval.question import DOMAIN
from tests import REPO

WALK = Path(__file__).with_name("owner_change_walk.py")


def walk(tmp_path: Path, owners: int, scale: str) -> dict[str, Any]:
    config = tmp_path / "screen.json"
    screen = {"name": "small", "x": 0, "y": 0, "width": 1024, "height": 600, "logicalDpi": 96, "dpr": 1}
    config.write_text(json.dumps({"screens": [screen]}))
    env = {**os.environ, "QT_QPA_PLATFORM": f"offscreen:configfile={config}", "QT_SCALE_FACTOR": scale}
    done = subprocess.run(
        [sys.executable, str(WALK), str(owners)], env=env, cwd=REPO, capture_output=True, text=True, timeout=120
    )
    lines = done.stdout.strip().splitlines()
    assert done.returncode == 0 and lines, done.stdout[-3000:] + done.stderr[-3000:]
    result: dict[str, Any] = json.loads(lines[-1])
    return result


@pytest.mark.parametrize("scale", ["1", "1.5"])
def test_the_consequence_stays_in_view_with_200_owners_at_1024x600(tmp_path: Path, scale: str) -> None:
    seen = walk(tmp_path, 200, scale)
    assert seen["values"] == 202  # the domain, 200 removed, 1 added
    assert seen["dialog"][1] <= seen["screen"][1], seen
    assert seen["consequence_in_view"], seen  # below the addresses, yet in view
    assert seen["consequence_top"] < seen["buttons_top"], seen
    assert seen["what_in_view"] and seen["heading_in_view"] and seen["loss_in_view"], seen  # the counts, the heading
    assert seen["first_value_in_view"] and not seen["last_value_in_view"], seen  # only the list scrolls
    assert not seen["sc_domain_shown"] and seen["domain_line"] == [f"{DOMAIN}: example.com"], seen


def test_a_short_owner_change_does_not_scroll(tmp_path: Path) -> None:
    seen = walk(tmp_path, 2, "1")
    assert seen["consequence_in_view"] and seen["first_value_in_view"] and seen["last_value_in_view"], seen
