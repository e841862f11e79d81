"""constraints.txt, the release's hashed lock and the signer's stay one set of pins (issue 35), checked
without a network.

`make lock` (packaging/lock.py) writes all three from one resolution; these fail when one is edited alone,
when a pin or a hash in one differs from another, when a line of the release lock has no hash, when
pyproject.toml names a package (a new dependency, an extra, the build backend) that a lock lacks, or when
the release lock would let pip pick a macOS wheel built for a newer macOS than the app promises.
"""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "packaging"))

import lock  # noqa: E402
from spec_common import MACOS_MINIMUM  # noqa: E402

REQUIREMENT = re.compile(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?\s*(?P<rest>.*)$")


def canonical(name: str) -> str:
    """PEP 503's normalised name: PySide6_Essentials and pyside6-essentials are one package."""
    return re.sub(r"[-_.]+", "-", name).lower()


def pins(text: str) -> dict[str, str]:
    """name -> version for each `name==version` requirement, continuation lines (hashes) joined."""
    joined = re.sub(r"\\\n\s*", " ", text)
    found: dict[str, str] = {}
    for raw in joined.splitlines():
        line = raw.split(" #", 1)[0].strip()
        if not line or line.startswith(("#", "-")):
            continue
        name, _, rest = line.partition("==")
        assert rest, f"not pinned exactly: {raw!r}"
        found[canonical(name.strip())] = rest.split(";", 1)[0].split()[0]
    return found


def requirement_names(specs: list[str]) -> set[str]:
    """The packages named, without the project itself (an extra may name another of its own extras)."""
    names = set()
    for spec in specs:
        match = REQUIREMENT.match(spec.strip())
        assert match, spec
        names.add(canonical(match["name"]))
    return names - {"searchdesk"}


def project() -> dict[str, object]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def release_names() -> set[str]:
    data = project()
    proj = data["project"]
    assert isinstance(proj, dict)
    specs = list(proj["dependencies"]) + list(data["build-system"]["requires"])  # type: ignore[index]
    for extra in lock.RELEASE_EXTRAS:
        specs += proj["optional-dependencies"][extra]
    return requirement_names(specs)


def all_names() -> set[str]:
    data = project()
    proj = data["project"]
    assert isinstance(proj, dict)
    specs = list(proj["dependencies"]) + list(data["build-system"]["requires"])  # type: ignore[index]
    for extra in proj["optional-dependencies"].values():
        specs += extra
    return requirement_names(specs)


def test_release_lock_pins_are_constraints_pins() -> None:
    constraints = pins(lock.CONSTRAINTS.read_text(encoding="utf-8"))
    release = pins(lock.RELEASE_LOCK.read_text(encoding="utf-8"))
    drift = {name: (v, constraints.get(name)) for name, v in release.items() if constraints.get(name) != v}
    assert not drift, f"release-lock.txt and constraints.txt differ (lock, constraints): {drift}; run make lock"


def test_every_release_requirement_is_hashed() -> None:
    text = re.sub(r"\\\n\s*", " ", lock.RELEASE_LOCK.read_text(encoding="utf-8"))
    lines = [line for line in text.splitlines() if line.strip() and not line.startswith("#")]
    assert lines
    unhashed = [line.split()[0] for line in lines if "--hash=sha256:" not in line]
    assert not unhashed, f"no hash for {unhashed}: pip --require-hashes would refuse the lock; run make lock"


@pytest.mark.parametrize(
    ("which", "wanted"), [("constraints.txt", all_names), ("packaging/release-lock.txt", release_names)]
)
def test_every_package_pyproject_names_is_locked(which: str, wanted: object) -> None:
    assert callable(wanted)
    locked = pins((ROOT / which).read_text(encoding="utf-8"))
    missing = sorted(set(wanted()) - set(locked))
    assert not missing, f"pyproject.toml names {missing} but {which} has no pin for it: run make lock"


def test_a_release_installs_no_test_or_lint_tool() -> None:
    release = set(pins(lock.RELEASE_LOCK.read_text(encoding="utf-8")))
    assert not release & {"pytest", "mypy", "ruff", "hypothesis", "zizmor", "uv", "pytest-qt"}


def test_lock_resolves_for_every_system() -> None:
    """The per-system packages the apps load (notifications' backends, PyInstaller's helpers) are locked."""
    text = lock.RELEASE_LOCK.read_text(encoding="utf-8")
    for name, system in [("rubicon-objc", "darwin"), ("winrt-runtime", "win32"), ("pefile", "win32")]:
        assert re.search(rf"^{name}==\S+ ; .*sys_platform == '{system}'", text, re.M), name


def hashes_by_package(text: str) -> dict[str, tuple[str, set[str]]]:
    """name -> (the line's marker, its SHA-256 hashes), continuation lines joined."""
    joined = re.sub(r"\\\n\s*", " ", text)
    found = {}
    for line in joined.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        head = line.split(" --hash=", 1)[0].strip()
        name, _, marker = head.partition(" ; ")
        found[canonical(name.split("==")[0])] = (marker, set(re.findall(r"--hash=sha256:([0-9a-f]{64})", line)))
    return found


def test_the_signers_lock_is_the_release_locks_own_pins_and_hashes() -> None:
    """signer-requirements.txt is written by make lock from the release resolution: each of its packages at
    the release lock's version and marker, with none but the release lock's hashes for it."""
    text = lock.SIGNER_LOCK.read_text(encoding="utf-8")
    assert "make lock" in text.split("\n\n", 1)[0], "the header must say how the file is made"
    release, signer = pins(lock.RELEASE_LOCK.read_text(encoding="utf-8")), pins(text)
    assert set(lock.SIGNER_ROOTS) <= set(signer)
    assert {name: release.get(name) for name in signer} == signer, "signer-requirements.txt drifted: make lock"
    release_hashes = hashes_by_package(lock.RELEASE_LOCK.read_text(encoding="utf-8"))
    for name, (marker, hashes) in hashes_by_package(text).items():
        assert hashes, name
        assert marker == release_hashes[name][0], name
        stray = hashes - release_hashes[name][1]
        assert not stray, f"{name}: hashes the release lock does not hold: {sorted(stray)[:3]}; run make lock"


#: google-re2 1.1.20251105's macOS wheels for CPython 3.11 (PyPI, the files' SHA-256): one per macOS it
#: was built for. The release runs on macOS 13.0 (spec_common.MACOS_MINIMUM), so only the 13.0 ones may be
#: installable; with the others listed, pip on a macos-15 runner takes the 15.0 wheel.
GOOGLE_RE2_MACOS = {
    "google_re2-1.1.20251105-1-cp311-cp311-macosx_13_0_arm64.whl": (
        "329efa209ea7baa44f0facf0402fa34e655dc97fdeb10d0b83fc06354f5575fd"
    ),
    "google_re2-1.1.20251105-1-cp311-cp311-macosx_13_0_x86_64.whl": (
        "aa2ad5f6f48921ec137a7b7f1b1da903ddef8627a2dc30bc878a9a69d9925719"
    ),
    "google_re2-1.1.20251105-1-cp311-cp311-macosx_14_0_arm64.whl": (
        "ac1cb2526cc88f050a0661fc7245ad009ee454bddc541b2e653f1d007585000d"
    ),
    "google_re2-1.1.20251105-1-cp311-cp311-macosx_14_0_x86_64.whl": (
        "50c7205182ad66c23c07abe8072f720ca2f7d595b61e28fd9b63623614f9afd6"
    ),
    "google_re2-1.1.20251105-1-cp311-cp311-macosx_15_0_arm64.whl": (
        "4cb5acee61e35772503b8b1db3c592a46b8e6a9bc0ab54d7d6233654ea2bf93d"
    ),
    "google_re2-1.1.20251105-1-cp311-cp311-macosx_15_0_x86_64.whl": (
        "1617097d63620c2d46bdfc0e48f24f66cd341664fc75718636d234f67473fe7f"
    ),
}


def test_the_release_lock_lets_a_mac_install_only_google_re2_for_macos_13() -> None:
    assert MACOS_MINIMUM == "13.0", "the recorded wheels below are for 13.0; record the new minimum's"
    assert pins(lock.RELEASE_LOCK.read_text(encoding="utf-8")).get("google-re2") == "1.1.20251105"
    _, hashes = hashes_by_package(lock.RELEASE_LOCK.read_text(encoding="utf-8"))["google-re2"]
    listed = {name for name, sha in GOOGLE_RE2_MACOS.items() if sha in hashes}
    assert listed == {name for name in GOOGLE_RE2_MACOS if "macosx_13_0" in name}


@pytest.mark.parametrize(
    ("filename", "too_new"),
    [
        ("google_re2-1.1.20251105-1-cp311-cp311-macosx_13_0_arm64.whl", False),
        ("google_re2-1.1.20251105-1-cp311-cp311-macosx_14_0_arm64.whl", True),
        ("google_re2-1.1.20251105-1-cp311-cp311-macosx_15_0_x86_64.whl", True),
        ("cryptography-50.0.2-cp311-abi3-macosx_11_0_arm64.whl", False),
        ("pyside6_essentials-6.11.3-cp310-abi3-macosx_13_0_universal2.whl", False),
        ("x-1.0-cp311-cp311-macosx_10_9_x86_64.macosx_14_0_arm64.whl", False),  # one tag runs on 13.0
        ("x-1.0-cp311-cp311-macosx_14_0_x86_64.macosx_14_0_arm64.whl", True),
        ("x-1.0-cp311-cp311-macosx_26_0_arm64.whl", True),
        ("cffi-2.1.1-cp311-cp311-win_amd64.whl", False),
        ("cffi-2.1.1-cp311-cp311-manylinux2014_x86_64.manylinux_2_17_x86_64.whl", False),
        ("cffi-2.1.1.tar.gz", False),
    ],
)
def test_a_macos_wheel_for_a_newer_macos_than_the_minimum_is_too_new(filename: str, too_new: bool) -> None:
    assert lock.needs_newer_macos(filename, "13.0") is too_new


PYLOCK = """\
lock-version = "1.0"
created-by = "uv"
requires-python = ">=3.11"

[[packages]]
name = "google-re2"
version = "1.1.20251105"
sdist = { url = "https://files.pythonhosted.org/packages/aa/google_re2-1.1.20251105.tar.gz", hashes = { sha256 = "%(sdist)s" } }
wheels = [
    { url = "https://files.pythonhosted.org/packages/bb/google_re2-1.1.20251105-1-cp311-cp311-macosx_13_0_arm64.whl", hashes = { sha256 = "%(m13)s" } },
    { url = "https://files.pythonhosted.org/packages/cc/google_re2-1.1.20251105-1-cp311-cp311-macosx_14_0_arm64.whl", hashes = { sha256 = "%(m14)s" } },
    { url = "https://files.pythonhosted.org/packages/dd/google_re2-1.1.20251105-1-cp311-cp311-macosx_15_0_arm64.whl", hashes = { sha256 = "%(m15)s" } },
    { url = "https://files.pythonhosted.org/packages/ee/google_re2-1.1.20251105-1-cp311-cp311-win_amd64.whl", hashes = { sha256 = "%(win)s" } },
]

[[packages]]
name = "pycparser"
version = "3.12"
marker = "implementation_name != 'PyPy'"
sdist = { url = "https://files.pythonhosted.org/packages/ff/pycparser-3.12.tar.gz", hashes = { sha256 = "%(psdist)s" } }
wheels = [{ url = "https://files.pythonhosted.org/packages/11/pycparser-3.12-py3-none-any.whl", hashes = { sha256 = "%(pwheel)s" } }]
"""
FAKE = {
    key: char * 64
    for key, char in zip(["sdist", "m13", "m14", "m15", "win", "psdist", "pwheel"], "abcdef0", strict=True)
}


def test_the_lock_is_written_from_the_resolution_without_wheels_for_a_newer_macos(tmp_path: Path) -> None:
    """uv's PEP 751 lock in, pip's hashed requirements out: the 14.0 and 15.0 wheels' hashes are gone,
    the 13.0 one, Windows' and the sdist stay, in uv's own layout (hashes sorted, markers kept)."""
    path = tmp_path / "pylock.toml"
    path.write_text(PYLOCK % FAKE, encoding="utf-8")
    release = [lock.for_minimum_macos(p, "13.0") for p in lock.read_pylock(path)]
    assert lock.requirements(release) == (
        "google-re2==1.1.20251105 \\\n"
        + " \\\n".join(f"    --hash=sha256:{FAKE[k]}" for k in ("sdist", "m13", "win"))
        + "\npycparser==3.12 ; implementation_name != 'PyPy' \\\n"
        + " \\\n".join(f"    --hash=sha256:{FAKE[k]}" for k in ("pwheel", "psdist"))
        + "\n"
    )
    signer = lock.signer_packages(release, ["pycparser"])
    assert lock.requirements(signer, wheels_only=True) == (
        f"pycparser==3.12 ; implementation_name != 'PyPy' \\\n    --hash=sha256:{FAKE['pwheel']}\n"
    )


def test_a_package_with_no_apple_silicon_wheel_for_the_minimum_stops_the_lock(tmp_path: Path) -> None:
    path = tmp_path / "pylock.toml"
    path.write_text((PYLOCK % FAKE).replace("macosx_13_0_arm64", "macosx_14_0_arm64"), encoding="utf-8")
    with pytest.raises(lock.LockError, match=r"google-re2 .* no wheel for Apple silicon that runs on macOS 13\.0"):
        [lock.for_minimum_macos(p, "13.0") for p in lock.read_pylock(path)]
