"""What one tool's entry in the catalogue holds (`ToolSpec`), and the parameter shapes entries share.

Kept terse on purpose: every parameter's shape is read into the model's context on every turn, so the
shapes say what the validator (`validate`) does not already enforce. On the start-up path: stdlib only.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Final, Literal

Service = Literal["searchconsole", "siteVerification", "indexing", "none"]
Kind = Literal["read", "write", "guarded"]
#: Which Google account a call goes to when the SearchDesk app holds several (account_routing.py):
#: "property" the account that sees its property best in Search Console; "verified" one that verified
#: it; "url" one that sees a property containing its URL, owner first; "named" the `account` argument,
#: else the default; "every" each account (the handler merges); "none" no Google call.
Route = Literal["property", "verified", "url", "named", "every", "none"]


class QuotaKind(StrEnum):
    """A daily quota Google enforces and SearchDesk counts before it asks (quota.py keeps the counts)."""

    INDEXING = "indexing"  # key: the Google Cloud project ("project:<id>"), else the account
    INSPECTION = "inspection"  # key: the property (siteUrl)


GROUPS: Final = (
    "essential",
    "sites",
    "sitemaps",
    "analytics",
    "inspection",
    "indexing",
    "verification",
    "reports",
    "changes",
    "coverage",
)


#: What `menu_terse` leaves off a parameter in the menu (the validator still checks it): a lower bound
#: and a count of items. An upper bound stays: 25,000 rows is worth telling a model before it asks.
MENU_UNSAID: Final = frozenset({"minimum", "maxItems"})


@dataclass(frozen=True)
class ToolSpec:
    """One tool: everything the server, the docs and the tests need to know about it."""

    name: str
    group: str
    service: Service
    endpoint: str  # discovery method id(s) it calls, for the docs and the fake's checks
    kind: Kind
    scopes: tuple[str, ...]
    title: str
    description: str
    params: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    required: tuple[str, ...] = ()
    essential: bool = False
    #: Scopes the tool can do without (it reports less); left out in read-only mode.
    optional_scopes: tuple[str, ...] = ()
    #: Registered only with MCP_DIAGNOSTICS=true; never part of groups or presets.
    diagnostic: bool = False
    route: Route = "property"
    #: The handler's qualified name, e.g. "searchdesk_server.tools.sites.list_sites": an async function
    #: of a `runtime.Call` returning a `result.Output`, imported on the first call (`resolve`).
    handler: str = field(kw_only=True)
    #: A guarded tool's question builder, by qualified name: an async function of the call returning
    #: the `approval.question.Question` a person answers before the handler acts. Set for exactly the
    #: guarded tools: this is what makes the approval chain ask.
    question: str | None = field(default=None, kw_only=True)
    #: The daily quota each call spends (the handler counts it in `Runtime.quota`), if any.
    quota: QuotaKind | None = field(default=None, kw_only=True)
    #: The output schema's properties, for a tool that declares them (every schema stays open).
    output: Mapping[str, Mapping[str, Any]] | None = field(default=None, kw_only=True)
    #: Parameters (a dotted path into `params`) whose checks the menu leaves to the validator: a list of
    #: values Google's own API defines under the same names, which a model knows; a lower bound nobody
    #: would cross (1 row, row 0), a count of filters, a filter's required keys. The validator names
    #: each on any other value. Checked exactly as before (`input_schema`); only the menu
    #: (`menu_schema`) is shorter, by the characters every turn would otherwise pay for.
    menu_terse: tuple[str, ...] = field(default=(), kw_only=True)

    def __post_init__(self) -> None:
        if (self.kind == "guarded") != (self.question is not None):
            raise ValueError(f"{self.name}: a guarded tool names its question builder, and only a guarded tool does")

    @property
    def write(self) -> bool:
        return self.kind != "read"

    @property
    def guarded(self) -> bool:
        """Asks a person before acting: it has a question to ask."""
        return self.question is not None

    @property
    def groups(self) -> tuple[str, ...]:
        return (self.group, "essential") if self.essential else (self.group,)

    @property
    def annotations(self) -> dict[str, bool]:
        """All four hints, always explicit: a client may not assume defaults."""
        return {
            "readOnlyHint": not self.write,
            "destructiveHint": self.guarded,
            "idempotentHint": True,
            "openWorldHint": False,
        }

    @property
    def input_schema(self) -> dict[str, Any]:
        """The tool's parameters; a guarded tool also takes the two-call token (`confirm_token`)."""
        schema: dict[str, Any] = {"type": "object"}
        params = {**self.params, "confirm_token": TOKEN} if self.guarded else self.params
        if params:
            schema["properties"] = {k: dict(v) for k, v in params.items()}
        if self.required:
            schema["required"] = list(self.required)
        return schema

    @property
    def menu_schema(self) -> dict[str, Any]:
        """The input schema as tools/list shows it: `input_schema` with each `menu_terse` parameter's
        list of values replaced by its type (string), and its `MENU_UNSAID` checks left out. The
        validator keeps checking `input_schema`."""
        schema = copy.deepcopy(self.input_schema)  # nested mappings are the catalogue's own
        for path in self.menu_terse:
            *parents, leaf = path.split(".")
            props = schema["properties"]
            for name in parents:
                props = props[name]["items"]["properties"] if "items" in props[name] else props[name]["properties"]
            said = {k: v for k, v in props[leaf].items() if k not in MENU_UNSAID}
            items = said.get("items", {})
            if "enum" in said:
                said = {"type": "string"}
            elif "enum" in items:  # a list of names, each one of Google's
                said["items"] = {"type": "string"}
            elif "required" in items:
                said["items"] = {k: v for k, v in items.items() if k != "required"}
            if said == props[leaf]:
                raise ValueError(f"{self.name}: menu_terse names {path}, which has nothing to leave out")
            props[leaf] = said
        return schema

    @property
    def output_schema(self) -> dict[str, Any]:
        # Open on purpose: an odd Google answer must never make the schema refuse a result.
        if self.output:
            return {"type": "object", "properties": {k: dict(v) for k, v in self.output.items()}}
        return {"type": "object"}


# --- parameter shapes (kept terse: every character is paid for on every turn) -------------------

MAX_ID = 2048
MAX_OWNER = 254

# String ceilings (2,048 for ids and URLs) are enforced by `validate` and not repeated on the menu.
SITE: Final[Mapping[str, Any]] = {"type": "string"}
SITE_REQ: Final = SITE  # same shape; listed in `required`, so GSC_SITE_URL is never assumed
URL: Final = SITE
FEEDPATH: Final = URL
LANG: Final = SITE
TOKEN: Final = SITE
ACCOUNT: Final = SITE  # a Google account's e-mail, as list_sites shows it
DIMENSIONS: Final = ("date", "query", "page", "country", "device", "searchAppearance", "hour")
PERIODS: Final = (
    "today",
    "yesterday",
    "last7days",
    "last28days",
    "last3months",
    "last6months",
    "last12months",
    "last16months",
)
OPERATORS: Final = ("equals", "notEquals", "contains", "notContains", "includingRegex", "excludingRegex")
SEARCH_TYPES: Final = ("web", "image", "video", "news", "discover", "googleNews")
DATA_STATES: Final = ("final", "all", "hourly_all")
AGGREGATIONS: Final = ("auto", "byPage", "byProperty")
VERIFY_METHODS: Final = ("DNS", "FILE", "META")
MAX_ROWS = 25_000
DEFAULT_ROWS = 100

REPORT_DATES: Final[Mapping[str, Mapping[str, Any]]] = {"site": SITE, "start_date": SITE, "end_date": SITE}
REPORT_VS: Final = SITE  # previous | year | YYYY-MM-DD

GUARD_NOTE = " Asks a person first."
