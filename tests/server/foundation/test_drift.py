"""The README's tool table is generated from the catalogue; this fails when it drifts."""

from __future__ import annotations

from pathlib import Path

from searchdesk_server import catalogue, tooltable

REPO = Path(__file__).resolve().parents[3]


def test_readme_table_matches_catalogue() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert tooltable.splice(readme) == readme, "run: python -m searchdesk_server.tooltable --write README.md"
    for spec in catalogue.TOOLS:
        assert f"| `{spec.name}` |" in readme


def test_scopes_derive_from_tools() -> None:
    from searchdesk_server.config import load

    full = load({})
    assert set(full.scopes) == {catalogue.SCOPE_WM, catalogue.SCOPE_SV, catalogue.SCOPE_INDEXING}
    ro = load({"GSC_READ_ONLY": "true"})
    assert ro.scopes == (catalogue.SCOPE_WM_RO,)
    no_indexing = load({"GSC_DENY_TOOLS": "indexing"})
    assert catalogue.SCOPE_INDEXING not in no_indexing.scopes
