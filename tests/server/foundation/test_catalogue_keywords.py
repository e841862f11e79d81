"""The catalogue's entries name every field: `ToolSpec(name="x", group=..., ...)`, never by position.

An entry read by position is a row of unlabelled values (which string is the endpoint, which the
title?) and silently shifts when a field is added in the middle. `ToolSpec` itself keeps positional
construction (a test's own tool may still use it); the catalogue's entries may not.
"""

from __future__ import annotations

import ast
import inspect

from searchdesk_server import catalogue, catalogue_google, catalogue_reports

#: The modules that write the catalogue's entries.
TABLES = (catalogue, catalogue_google, catalogue_reports)


def test_every_catalogue_entry_is_written_with_keywords() -> None:
    calls = [
        (table.__name__, node)
        for table in TABLES
        for node in ast.walk(ast.parse(inspect.getsource(table)))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "ToolSpec"
    ]
    assert len(calls) >= len(catalogue.TOOLS)  # every entry, the diagnostic ones beside TOOLS included
    positional = [f"{where} line {call.lineno}" for where, call in calls if call.args]
    assert positional == []
