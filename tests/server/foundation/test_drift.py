"""Scopes derive from the registered tools (the tables' drift test is test_docs.py)."""

from __future__ import annotations

from pathlib import Path

from searchdesk_server import scopes

REPO = Path(__file__).resolve().parents[3]


def test_scopes_derive_from_tools() -> None:
    from searchdesk_server.config import load

    full = load({})
    assert set(full.scopes) == {scopes.SCOPE_WM, scopes.SCOPE_SV, scopes.SCOPE_INDEXING}
    ro = load({"GSC_READ_ONLY": "true"})
    assert ro.scopes == (scopes.SCOPE_WM_RO,)
    no_indexing = load({"GSC_DENY_TOOLS": "indexing"})
    assert scopes.SCOPE_INDEXING not in no_indexing.scopes
