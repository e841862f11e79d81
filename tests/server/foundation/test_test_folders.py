"""A test folder must not be named like a standard-library module: a helper script run from its parent
(tests/desktop/xcb_driver.py is one) has that parent first on sys.path, and a folder `socket/` there
shadowed the standard library's socket for everything the script imported."""

from __future__ import annotations

import sys

from tests import REPO


def test_no_test_folder_shadows_a_standard_library_module() -> None:
    folders = {p.name for p in (REPO / "tests").rglob("*") if p.is_dir() and p.name != "__pycache__"}
    assert sorted(folders & set(sys.stdlib_module_names)) == []
