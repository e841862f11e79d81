"""The macOS and Windows release jobs start what they built before anything is signed or uploaded (issue 35).

Read from release.yml and the scripts its steps run: the build step freezes and smoke-tests the app
(`--check --demo`, smoke.py) and makes the installer unsigned (macOS: ad hoc); the next step installs it
silently, starts the installed app and removes it; only then come the signing step, the attestations and
the upload. The Linux job's one build step is the script .ci/run rehearses.
"""

from __future__ import annotations

import sys
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "packaging"))

import install_check  # noqa: E402
import release_build  # noqa: E402

RELEASE = ROOT / ".github" / "workflows" / "release.yml"


def steps(job: str) -> list[dict[str, Any]]:
    data = yaml.safe_load(RELEASE.read_text(encoding="utf-8"))
    found = data["jobs"][job]["steps"]
    assert isinstance(found, list)
    return found


def index(job_steps: list[dict[str, Any]], predicate: Any, what: str) -> int:
    hits = [i for i, step in enumerate(job_steps) if predicate(step)]
    assert hits, f"no step that {what}"
    return hits[0]


def runs(text: str) -> Any:
    return lambda step: text in str(step.get("run", ""))


def checks_the_update_key(step: dict[str, Any]) -> bool:
    """The job's first step: the update-signing secret is compared with the public key, nothing is signed."""
    return str(step.get("run", "")).strip() == "bash packaging/signer.sh check-key"


def signs_or_ships(step: dict[str, Any]) -> bool:
    uses = str(step.get("uses", ""))
    if uses.startswith(("actions/attest", "actions/upload-artifact", "azure/login")):
        return True
    if checks_the_update_key(step):
        return False
    return "--sign" in str(step.get("run", "")) or "secrets." in str(step.get("env", {})).replace(
        "secrets.GOOGLE_OAUTH_CLIENT_JSON", ""
    )


@pytest.mark.parametrize("system", ["macos", "windows"])
def test_smoke_test_and_silent_install_come_before_signing_and_upload(system: str) -> None:
    job = steps(system)
    build = index(
        job, lambda s: str(s.get("run", "")).strip() == f"python packaging/release_build.py {system}", "builds"
    )
    check = index(job, runs(f"packaging/install_check.py {system}"), "installs silently")
    first_sign = index(job, signs_or_ships, "signs, attests or uploads")
    assert build < check < first_sign, (build, check, first_sign)
    assert index(job, checks_the_update_key, "checks the update key") < build, "a bad key stops the job first"
    assert runs("--sign")(job[index(job, runs(f"release_build.py {system} --sign"), "signs")])

    built = [" ".join(cmd) for cmd in release_build.commands(system)]
    smoke = next(i for i, cmd in enumerate(built) if "packaging/smoke.py" in cmd)
    installer = next(i for i, cmd in enumerate(built) if f"build_{system}.py" in cmd)
    assert smoke < installer, "the frozen app is smoke-tested before its installer is made"
    assert built[installer].endswith("--unsigned" if system == "windows" else "--ad-hoc")
    assert all("--sign" not in cmd for cmd in built)


def test_the_smoke_test_starts_the_frozen_app_with_check_demo() -> None:
    text = (ROOT / "packaging" / "smoke.py").read_text(encoding="utf-8")
    assert '[str(APP / exe("searchdesk")), "--check", "--demo"]' in text


def test_windows_installs_and_uninstalls_as_nsis_documents() -> None:
    where = PureWindowsPath(r"C:\Users\runner admin\AppData\Local\Programs\SearchDesk")
    cmds = install_check.windows_commands(PureWindowsPath(r"D:\a\dist\SearchDesk-0.1.0-setup.exe"), where)
    assert cmds[0] == [r"D:\a\dist\SearchDesk-0.1.0-setup.exe", "/S"]
    assert [where.as_posix() in PureWindowsPath(c[0]).as_posix() for c in cmds[1:]] == [True] * 3
    assert cmds[1][1:] == ["--check", "--demo"]
    # _?= last and unquoted, even with a space in the folder (NSIS 3.2.2)
    assert cmds[-1] == [str(where / "uninstall.exe"), "/S", f"_?={where}"]


def test_macos_mounts_copies_starts_and_detaches() -> None:
    cmds = install_check.macos_commands(
        PurePosixPath("dist/SearchDesk-0.1.0.dmg"), PurePosixPath("/tmp/v"), PurePosixPath("/tmp/Applications")
    )
    assert cmds[0][:2] == ["hdiutil", "attach"] and "-nobrowse" in cmds[0] and cmds[0][-1].endswith(".dmg")
    assert cmds[1] == ["ditto", "/tmp/v/SearchDesk.app", "/tmp/Applications/SearchDesk.app"]
    assert ["hdiutil", "detach", "/tmp/v"] in cmds
    assert ["/tmp/Applications/SearchDesk.app/Contents/MacOS/searchdesk", "--check", "--demo"] in cmds


def test_linux_job_runs_the_rehearsed_script_in_a_container_pinned_by_digest() -> None:
    data = yaml.safe_load(RELEASE.read_text(encoding="utf-8"))
    assert "@sha256:" in data["jobs"]["linux"]["container"]
    assert any(
        str(s.get("run", "")).strip() == "bash packaging/release_linux.sh --in-container" for s in steps("linux")
    )
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    commands = [line.strip() for line in ci.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    assert "bash packaging/release_linux.sh --host" in commands
    assert not [c for c in commands if c.startswith(("make bundle", ".venv/bin/python packaging/build_linux.py --deb"))]


@pytest.mark.parametrize("job", ["macos", "windows", "linux"])
def test_every_release_file_has_an_sbom_attestation(job: str) -> None:
    kinds = {kind for kind, _ in release_build.CARRIES[job].values()}
    attested = {
        str(s["with"]["subject-path"]).split(".outputs.")[1].rstrip(" }")
        for s in steps(job)
        if str(s.get("uses", "")).startswith("actions/attest-sbom@")
    }
    assert attested == kinds
