"""The one table of tools.

Registration, scopes, annotations, each tool's handler, the question a guarded tool asks a person,
the quota it counts against, the README's tool table and the docs all derive from `TOOLS`; tests
fail when any of them drifts. Descriptions are read into the model's context on every turn, so each
word must earn its place while keeping the limits the model needs.
This module is on the start-up path: stdlib only. A handler or question builder is named here by its
qualified name and imported on the tool's first call (`resolve`), so tools/list pays for none of
them, and a search for a handler's qualified name finds its entry. docs/architecture.md says where
every other kind of fact lives.

The entries themselves are in `catalogue_google.py` (the tools that act on Google) and
`catalogue_reports.py` (the reports and SearchDesk's own records); what an entry holds is `tool_spec.py`'s
and the scopes are `scopes.py`'s.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Final

from .catalogue_google import GOOGLE_TOOLS
from .catalogue_reports import REPORT_TOOLS
from .tool_spec import GROUPS, ToolSpec

__all__ = [
    "BY_NAME",
    "CATALOGUE",
    "DIAGNOSTIC_TOOLS",
    "GROUPS",
    "TOOLS",
    "Catalogue",
    "all_tools",
    "group_members",
    "resolve",
]

#: Every tool, in the order tools/list shows them.
TOOLS: Final[tuple[ToolSpec, ...]] = (*GOOGLE_TOOLS, *REPORT_TOOLS)


#: Tools for troubleshooting, registered only with MCP_DIAGNOSTICS=true.
DIAGNOSTIC_TOOLS: Final[tuple[ToolSpec, ...]] = (
    ToolSpec(
        name="describe_connection",
        group="diagnostics",
        service="none",
        endpoint="none (SearchDesk's own state)",
        kind="read",
        scopes=(),
        title="Describe connection",
        description="How this server is set up and how a destructive call would ask a person right now.",
        diagnostic=True,
        route="none",
        handler="searchdesk_server.tools.diagnostics.describe_connection",
    ),
)


@dataclass(frozen=True)
class Catalogue:
    """The tools a server may offer. A server is built from `CATALOGUE`; a test may build one from a
    copy with a tool added (`adding`) and the whole chain serves it with no other change."""

    tools: tuple[ToolSpec, ...]
    diagnostic_tools: tuple[ToolSpec, ...] = ()
    by_name: Mapping[str, ToolSpec] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "by_name", {t.name: t for t in (*self.tools, *self.diagnostic_tools)})

    def all_tools(self, diagnostics: bool) -> tuple[ToolSpec, ...]:
        return (*self.tools, *self.diagnostic_tools) if diagnostics else self.tools

    def group_members(self, group: str) -> tuple[str, ...]:
        return tuple(t.name for t in self.tools if group in t.groups)

    def adding(self, *specs: ToolSpec) -> Catalogue:
        return replace(self, tools=(*self.tools, *specs))


CATALOGUE: Final = Catalogue(TOOLS, DIAGNOSTIC_TOOLS)
BY_NAME: Final[Mapping[str, ToolSpec]] = CATALOGUE.by_name


def group_members(group: str) -> tuple[str, ...]:
    return CATALOGUE.group_members(group)


def all_tools(diagnostics: bool) -> tuple[ToolSpec, ...]:
    return CATALOGUE.all_tools(diagnostics)


@functools.cache
def resolve(qualified_name: str) -> Any:
    """The function a spec names (`handler`, `question`), importing its module now: the first call of a
    tool pays for its imports, tools/list never does."""
    module, _, name = qualified_name.rpartition(".")
    return getattr(importlib.import_module(module), name)
