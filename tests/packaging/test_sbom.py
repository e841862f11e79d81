"""Each release file's SBOM lists what its frozen folder holds, never the build's test and lint tools (issue 35).

The release used to describe the whole lock (pytest, mypy, ruff, PyInstaller ...). packaging/sbom.py reads
the folder PyInstaller made: here a real one-folder freeze of a small program, built in this venv, which
holds pytest and the rest; and, when a bundle has been built (make bundle, the rehearsal), SearchDesk's own.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "packaging"))

import sbom  # noqa: E402

TOOLS = {"pytest", "mypy", "ruff", "hypothesis", "pyinstaller", "pyinstaller-hooks-contrib"}


def names(components: list[sbom.Component]) -> set[str]:
    return {sbom.canonical(c.name) for c in components}


def test_only_what_the_folder_holds_is_listed() -> None:
    """Names found in the folder map to the distributions that provide them; the standard library and
    the app's own code map to none; a venv's other packages are never asked about."""
    providers = {"httpx": ["httpx"], "PySide6": ["PySide6_Essentials"], "_pytest": ["pytest"], "pytest": ["pytest"]}
    versions = {"httpx": "0.28.1", "pyside6-essentials": "6.11.3", "pytest": "9.2.0"}
    found = sbom.resolve({"httpx", "PySide6", "json", "searchdesk_server"}, providers, versions)
    assert found == {sbom.Component("httpx", "0.28.1"), sbom.Component("PySide6_Essentials", "6.11.3")}
    doc = sbom.document(
        sorted(found, key=lambda c: sbom.canonical(c.name)),
        "searchdesk-0.1.0-linux-x86_64.tar.gz",
        "ab" * 32,
        python="3.11.2",
        now=datetime(2026, 12, 4, tzinfo=UTC),
        serial="urn:uuid:x",
    )
    assert doc["bomFormat"] == "CycloneDX" and doc["specVersion"] == "1.6"
    purls = [c["purl"] for c in doc["components"]]  # type: ignore[attr-defined]
    assert purls == ["pkg:generic/python@3.11.2", "pkg:pypi/httpx@0.28.1", "pkg:pypi/pyside6-essentials@6.11.3"]
    subject = doc["metadata"]["component"]  # type: ignore[index]
    assert subject["hashes"] == [{"alg": "SHA-256", "content": "ab" * 32}]


def test_a_folder_holding_a_tool_is_refused() -> None:
    with pytest.raises(sbom.ShipsATool, match="pytest"):
        sbom.check_no_tools([sbom.Component("pytest", "9.2.0"), sbom.Component("httpx", "0.28.1")], "dist/App")


@pytest.fixture(scope="module")
def frozen(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real PyInstaller one-folder build of a program that imports idna (and nothing of the tests)."""
    pytest.importorskip("PyInstaller", reason="PyInstaller is the bundle extra (make bundle installs it)")
    work = tmp_path_factory.mktemp("freeze")
    script = work / "tiny.py"
    script.write_text("import idna\nprint(idna.encode('example.com'))\n", encoding="utf-8")
    subprocess.run(
        [sys.executable, "-m", "PyInstaller", "--noconfirm", "--log-level", "ERROR", "--onedir"]
        + ["--distpath", str(work / "dist"), "--workpath", str(work / "build"), "--specpath", str(work), str(script)],
        check=True,
        cwd=work,
        env={**os.environ, "PYINSTALLER_CONFIG_DIR": str(work / "cache")},
    )
    return work / "dist" / "tiny"


@pytest.mark.timeout(300)
def test_a_real_freeze_lists_its_packages_and_no_tool(frozen: Path, tmp_path: Path) -> None:
    import importlib.metadata

    assert importlib.metadata.version("pytest")  # the venv this froze in holds the tools
    artifact = tmp_path / "tiny.tar.gz"
    artifact.write_bytes(b"x")
    out = sbom.write(frozen, artifact)
    doc = json.loads(out.read_text(encoding="utf-8"))
    listed = {c["name"].lower() for c in doc["components"]}
    assert "idna" in listed
    assert not listed & TOOLS


@pytest.mark.skipif(not (ROOT / "dist" / "SearchDesk").is_dir(), reason="no bundle built here (make bundle)")
def test_searchdesk_frozen_holds_no_test_or_lint_tool() -> None:
    pytest.importorskip("PyInstaller")
    found = names(sbom.components_of(ROOT / "dist" / "SearchDesk"))
    assert {"pyside6-essentials", "mcp", "httpx"} <= found
    assert not found & sbom.TOOLS
