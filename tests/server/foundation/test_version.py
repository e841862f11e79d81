"""One version everywhere a release names it."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import searchdesk_desktop
import searchdesk_server

REPO = Path(__file__).resolve().parents[3]


def test_versions_agree() -> None:
    version = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
    assert searchdesk_server.__version__ == version
    assert searchdesk_desktop.__version__ == version
    manifest = REPO / "packaging" / "mcpb" / "manifest.json"
    if manifest.exists():
        assert json.loads(manifest.read_text())["version"] == version
