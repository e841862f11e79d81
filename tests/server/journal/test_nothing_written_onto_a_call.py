"""A call's outcome is returned, never written onto the call (issue 39): the approval chain returns how a
guarded call ended and acts through a call made with its consent, the journal's record says itself whether
it is complete, and the archive's sources are gathered per call. No module but runtime.py assigns an
attribute of a `Call` (its own methods fix its routing)."""

from __future__ import annotations

import ast
from pathlib import Path

SERVER = Path(__file__).parents[3] / "server" / "searchdesk_server"


def writes_onto_a_call(source: str) -> list[str]:
    """Each `call.<name> = …` (or `+=`, or an annotated one) in `source`."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Assign):
            targets = list(node.targets)
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        else:
            continue
        for target in targets:
            for part in ast.walk(target):
                if isinstance(part, ast.Attribute) and isinstance(part.value, ast.Name) and part.value.id == "call":
                    found.append(f"line {part.lineno}: call.{part.attr}")
    return found


def test_no_module_writes_an_outcome_onto_a_call() -> None:
    found = {
        str(path.relative_to(SERVER)): writes
        for path in sorted(SERVER.rglob("*.py"))
        if path.name != "runtime.py" and (writes := writes_onto_a_call(path.read_text(encoding="utf-8")))
    }
    assert found == {}, "return the outcome (approval/chain.py Ended, journal/record.py CallRecord) instead"


def test_the_check_finds_a_write() -> None:
    assert writes_onto_a_call("call.asked = question\ncall.n += 1\n") == ["line 1: call.asked", "line 2: call.n"]
