"""Environment -> one frozen Config, parsed strictly and failing closed.

Every environment variable of SearchDesk's own is named once, in `variables.Var`, and read only by
`load` (the credential by `credential_setting`): the rest of the server takes its settings from the
Config (the desktop app's Claude entry and the `.mcpb` manifest write the same names; a test fails
when they drift). Proxy, certificate and platform variables stay with the libraries that read them.

A bad value stops the server with exit 1 and a message naming the variable and the accepted
values; a secret is never quoted. Secrets are read once and then scrubbed from the process
environment (`credential_setting.scrub_secrets`) so no child inherits them. Stdlib only: this runs
before anything else on the start-up path.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Mapping
from dataclasses import dataclass, field

from . import scopes, tool_spec
from .catalogue import CATALOGUE, Catalogue
from .credential_setting import Credential, parse_credential
from .properties import PropertyError, normalise_property
from .text.phrases import describe
from .tool_spec import ToolSpec
from .variables import (
    DEFAULT_APPROVAL_WAIT,
    ConfigError,
    Var,
    agent_socket_setting,
    parse_bool,
    parse_elicitation,
    parse_today,
    parse_wait,
)


@dataclass(frozen=True)
class Config:
    credential: Credential
    demo: bool = False
    read_only: bool = False
    diagnostics: bool = False
    elicitation: bool = True
    #: SEARCHDESK_ASK_IN_APP: never the two-call token, whatever the credentials (see `never_a_token`).
    ask_in_app: bool = False
    approval_wait: int = DEFAULT_APPROVAL_WAIT
    allow: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    default_site: str | None = None
    allowed_sites: tuple[str, ...] = ()
    #: GSC_BRAND_TERMS: the brand terms the person keeps per property (report_brand_split's default).
    brand_terms: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    #: SEARCHDESK_AGENT_SOCKET resolved (`~` expanded, absolute; a bare Windows pipe name made whole);
    #: None: the default place (`agent.paths.default_socket_path`). Every agent client uses this.
    agent_socket: str | None = None
    #: SEARCHDESK_DEMO_TODAY: the day "today" is in Google's time (the demo's data and every period);
    #: None: the date in America/Los_Angeles when asked (`tools/analytics/dates.google_today`).
    today: datetime.date | None = None
    #: Tools in the order of the catalogue, after read-only and allow/deny.
    tools: tuple[str, ...] = ()
    #: Write-capable scopes brought in by tools named explicitly in read-only mode.
    explicit_write_scopes: tuple[str, ...] = ()
    #: The table `tools` were chosen from (a test may serve a copy with a tool added).
    catalogue: Catalogue = field(default=CATALOGUE, repr=False, compare=False)

    def spec(self, name: str) -> ToolSpec:
        return self.catalogue.by_name[name]

    @property
    def never_a_token(self) -> bool:
        """A guarded call is asked in the client's dialog or the app, or refused — never the two-call token.

        So with the app's keys (its sign-in hands this server its tokens) and in every entry the app
        writes (SEARCHDESK_ASK_IN_APP, the demo's included): there the app is the person's place to say
        yes, and the app being out of reach must not open a cheaper way around them. The token is left
        only to a server given its credentials directly (variables, key files: a scheduled job), and even
        there only until it has reached the app once (`Runtime.app_reached`).
        """
        return self.ask_in_app or self.credential.kind == "desktop"

    @property
    def scopes(self) -> tuple[str, ...]:
        wanted: set[str] = set()
        for name in self.tools:
            spec = self.spec(name)
            wanted.update(spec.scopes)
            if not self.read_only:
                wanted.update(spec.optional_scopes)
        return scopes.minimal_scopes(wanted)

    def startup_line(self) -> str:
        parts = [f"credentials: {self.credential.describe()}"]
        parts.append("read-only" if self.read_only else "read-write")
        parts.append(f"{len(self.tools)} tools")
        if self.allow or self.deny:
            parts.append(
                "restricted by "
                + " and ".join(
                    v for v, on in ((Var.GSC_ALLOW_TOOLS, self.allow), (Var.GSC_DENY_TOOLS, self.deny)) if on
                )
            )
        if self.explicit_write_scopes:
            parts.append("explicitly allowed tools bring write-capable scopes " + ", ".join(self.explicit_write_scopes))
        if self.allowed_sites:
            parts.append(f"limited to {len(self.allowed_sites)} allowed properties")
        if self.demo:
            parts.append("DEMO data (no Google account used)")
        if not self.elicitation:
            parts.append(f"{Var.ELICITATION}=false")
        if self.ask_in_app:
            parts.append(f"{Var.SEARCHDESK_ASK_IN_APP}=true")
        return "searchdesk-server: " + "; ".join(parts)


# --- the tools ----------------------------------------------------------------------------------


def parse_tool_list(env: Mapping[str, str], name: str, table: Catalogue = CATALOGUE) -> tuple[str, ...]:
    """Names, `prefix*` patterns or groups; an entry matching nothing is an error, never ignored."""
    raw = env.get(name, "")
    entries = [e.strip() for e in raw.split(",") if e.strip()]
    unknown = [e for e in entries if not expand_entry(e, table)]
    if unknown:
        shown = ", ".join(describe(e) for e in unknown)
        names = ", ".join(t.name for t in table.tools)
        raise ConfigError(
            f"{name} has entries that match no tool: {shown}. Use tool names ({names}), "
            f"a prefix with * (e.g. list_*), or groups ({', '.join(tool_spec.GROUPS)})."
        )
    return tuple(entries)


def expand_entry(entry: str, table: Catalogue = CATALOGUE) -> tuple[str, ...]:
    if entry in tool_spec.GROUPS:
        return table.group_members(entry)
    if entry.endswith("*"):
        prefix = entry[:-1]
        return tuple(t.name for t in table.tools if t.name.startswith(prefix))
    return (entry,) if any(t.name == entry for t in table.tools) else ()


def select_tools(
    read_only: bool,
    allow: tuple[str, ...],
    deny: tuple[str, ...],
    diagnostics: bool = False,
    table: Catalogue = CATALOGUE,
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The registered tools and the write-capable scopes brought in explicitly in read-only mode."""
    allowed = {n for e in allow for n in expand_entry(e, table)} if allow else set(table.by_name)
    # Read-only mode keeps a read whose only scope could also write only when named by itself.
    named = {e for e in allow if e in table.by_name}
    denied = {n for e in deny for n in expand_entry(e, table)}
    chosen: list[str] = []
    brought: set[str] = set()
    for spec in table.all_tools(diagnostics):
        if spec.diagnostic:
            chosen.append(spec.name)  # MCP_DIAGNOSTICS asked for it; allow/deny lists are about Google tools
            continue
        if spec.name not in allowed or spec.name in denied:
            continue
        if read_only:
            if spec.write:
                continue
            writers = set(spec.scopes) & scopes.WRITE_CAPABLE_SCOPES
            if writers:
                if spec.name not in named:
                    continue
                brought |= writers
        chosen.append(spec.name)
    return tuple(chosen), tuple(sorted(brought))


# --- properties --------------------------------------------------------------------------------


def parse_sites(env: Mapping[str, str]) -> tuple[str | None, tuple[str, ...]]:
    default: str | None = None
    raw = env.get(Var.GSC_SITE_URL, "").strip()
    if raw:
        try:
            default = normalise_property(raw)
        except PropertyError as exc:
            raise ConfigError(f"{Var.GSC_SITE_URL}: {exc}") from None
    allowed: list[str] = []
    for entry in env.get(Var.GSC_ALLOWED_SITES, "").split(","):
        if entry.strip():
            try:
                allowed.append(normalise_property(entry.strip()))
            except PropertyError as exc:
                raise ConfigError(f"{Var.GSC_ALLOWED_SITES}: {exc}") from None
    return default, tuple(dict.fromkeys(allowed))


def parse_brand_terms(env: Mapping[str, str]) -> dict[str, tuple[str, ...]]:
    """GSC_BRAND_TERMS: a JSON object of property → list of brand terms, as the app's Settings write it."""
    from .brand import clean_terms

    raw = env.get(Var.GSC_BRAND_TERMS, "").strip()
    if not raw:
        return {}
    try:
        data = json.loads(raw)
    except ValueError:
        data = None
    if not isinstance(data, dict) or not all(isinstance(v, list) for v in data.values()):
        raise ConfigError(
            f'{Var.GSC_BRAND_TERMS} must be JSON such as {{"sc-domain:example.com": ["example", "example shop"]}}.'
        )
    out: dict[str, tuple[str, ...]] = {}
    for site, terms in data.items():
        try:
            out[normalise_property(str(site))] = clean_terms(terms)
        except PropertyError as exc:
            raise ConfigError(f"{Var.GSC_BRAND_TERMS}: {exc}") from None
    return out


# --- the whole ------------------------------------------------------------------------------


def load(env: Mapping[str, str], *, demo_flag: bool = False, table: Catalogue = CATALOGUE) -> Config:
    demo = demo_flag or parse_bool(env, Var.SEARCHDESK_DEMO)
    read_only = parse_bool(env, Var.GSC_READ_ONLY)
    diagnostics = parse_bool(env, Var.MCP_DIAGNOSTICS)
    elicitation = parse_elicitation(env)
    ask_in_app = parse_bool(env, Var.SEARCHDESK_ASK_IN_APP)
    wait = parse_wait(env)
    today = parse_today(env)
    allow = parse_tool_list(env, Var.GSC_ALLOW_TOOLS, table)
    deny = parse_tool_list(env, Var.GSC_DENY_TOOLS, table)
    default_site, allowed_sites = parse_sites(env)
    brand_terms = parse_brand_terms(env)
    credential = parse_credential(env, demo)
    tools, brought = select_tools(read_only, allow, deny, diagnostics, table)
    return Config(
        credential=credential,
        demo=demo,
        read_only=read_only,
        diagnostics=diagnostics,
        elicitation=elicitation,
        ask_in_app=ask_in_app,
        approval_wait=wait,
        allow=allow,
        deny=deny,
        default_site=default_site,
        allowed_sites=allowed_sites,
        brand_terms=brand_terms,
        agent_socket=agent_socket_setting(env),
        today=today,
        tools=tools,
        explicit_write_scopes=brought,
        catalogue=table,
    )
