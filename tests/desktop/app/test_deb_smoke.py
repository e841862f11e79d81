"""The .deb's smoke test leaves the machine as it was, also when a step fails (issue 27).

packaging/smoke_deb.sh installs the .deb with apt, runs both programs from /usr/bin and purges it in
an EXIT trap. Here it runs for real on a .deb that build_linux.py builds around two stand-in programs
(the frozen app takes minutes to build; .ci/run smoke-tests that one): one whose server check fails,
and one whose programs both succeed. Either way the package, its files and anything apt brought in
must be gone afterwards.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests import REPO as ROOT

sys.path.insert(0, str(ROOT / "packaging"))
import build_linux
from buildlib import Runner

CAN_INSTALL = sys.platform == "linux" and os.geteuid() == 0 and shutil.which("dpkg-deb") and shutil.which("apt-get")
pytestmark = [
    pytest.mark.skipif(not CAN_INSTALL, reason="installs a package with apt: Debian-family Linux as root (CI) only"),
    pytest.mark.xdist_group("apt"),  # apt takes one lock: one such test at a time
]


def installed(name: str = "searchdesk") -> bool:
    done = subprocess.run(["dpkg-query", "-W", "-f=${Status}", name], capture_output=True, text=True)
    return "install ok installed" in done.stdout


@pytest.mark.parametrize("server_check", ["fails", "passes"])
def test_the_deb_is_purged_whether_the_smoke_steps_pass_or_fail(tmp_path: Path, server_check: str) -> None:
    if installed():
        pytest.fail("searchdesk is installed on this machine; this test would remove it")
    app = tmp_path / "SearchDesk"
    app.mkdir()
    exit_code = 1 if server_check == "fails" else 0
    (app / "searchdesk-server").write_text(f"#!/bin/sh\necho 'stand-in server: check'\nexit {exit_code}\n")
    (app / "searchdesk").write_text("#!/bin/sh\nexit 0\n")
    for program in app.iterdir():
        program.chmod(0o755)
    deb = build_linux.build_deb(app, Runner(), out=tmp_path / "searchdesk_test.deb", stage=tmp_path / "stage")
    try:
        done = subprocess.run(
            ["bash", str(ROOT / "packaging" / "smoke_deb.sh"), str(deb)], capture_output=True, text=True, timeout=300
        )
    finally:
        left = installed()
        if left:  # the script did not clean up: this test does, then fails below
            subprocess.run(["apt-get", "purge", "-y", "-qq", "searchdesk"], capture_output=True, check=False)
    assert not left, "the package was still installed after the smoke test"
    if server_check == "fails":
        assert done.returncode != 0, done.stderr
        assert "after a failure" in done.stderr and "stand-in server" in done.stderr
    else:
        assert done.returncode == 0, done.stderr
        assert "both programs ran from /usr/bin" in done.stderr
    assert "smoke_deb: installed" in done.stderr  # it got as far as installing, so there was something to purge
    assert not installed()
    for path in ("/opt/searchdesk", "/usr/bin/searchdesk", "/usr/bin/searchdesk-server"):
        assert not os.path.lexists(path), path
    assert not Path("/usr/share/applications/searchdesk.desktop").exists()
