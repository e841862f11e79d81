"""Docs generated from the catalogue must not drift."""

from __future__ import annotations

from pathlib import Path

import pytest

from searchdesk_server import tooltable

REPO = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize("name", ["README.md", "docs/tools.md"])
def test_generated_tool_tables_match(name: str) -> None:
    text = (REPO / name).read_text(encoding="utf-8")
    assert tooltable.splice(text) == text, f"run: python -m searchdesk_server.tooltable --write {name}"


def test_the_documented_question_is_the_servers() -> None:
    from searchdesk_server.approval import question

    q = question.delete_sitemap(
        "https://www.example.com/", "https://www.example.com/old/sitemap.xml", "you@example.com"
    )
    assert q.text in (REPO / "docs/asking-a-person.md").read_text(encoding="utf-8")
