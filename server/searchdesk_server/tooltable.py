"""The tool table for the README and docs, generated from the catalogue (a test fails on drift).

`python -m searchdesk_server.tooltable --write README.md docs/tools.md` rewrites the text
between the `<!-- tools:start -->` and `<!-- tools:end -->` markers.
"""

from __future__ import annotations

import sys
from pathlib import Path

from .catalogue import TOOLS

START, END = "<!-- tools:start -->", "<!-- tools:end -->"


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


def markdown_table() -> str:
    lines = [
        "| Tool | Group | What it does | Changes things | Asks a person "
        "| readOnly | destructive | idempotent | openWorld |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for t in TOOLS:
        a = t.annotations
        what = t.description.replace("|", "\\|")
        lines.append(
            f"| `{t.name}` | {', '.join(t.groups)} | {what} | {_yes(t.write)} | {_yes(t.guarded)} | "
            f"{_yes(a['readOnlyHint'])} | {_yes(a['destructiveHint'])} | {_yes(a['idempotentHint'])} | "
            f"{_yes(a['openWorldHint'])} |"
        )
    return "\n".join(lines)


def splice(document: str) -> str:
    """The document with the generated table between the markers."""
    head, found, rest = document.partition(START)
    _, found_end, tail = rest.partition(END)
    if not found or not found_end:
        raise ValueError(f"markers {START} … {END} not found")
    return f"{head}{START}\n{markdown_table()}\n{END}{tail}"


def main(argv: list[str]) -> int:
    if argv[:1] != ["--write"] or len(argv) < 2:
        print(markdown_table())
        return 0
    for name in argv[1:]:
        path = Path(name)
        path.write_text(splice(path.read_text(encoding="utf-8")), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
