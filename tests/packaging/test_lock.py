"""constraints.txt and the release's hashed lock stay one set of pins (issue 35), checked without a network.

`make lock` (packaging/lock.py) writes both from one resolution; these fail when either is edited alone,
when a pin in one differs from the other, when a line of the release lock has no hash, or when
pyproject.toml names a package (a new dependency, an extra, the build backend) that a lock lacks.
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
