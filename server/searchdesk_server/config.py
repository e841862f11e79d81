"""Environment -> one frozen Config, parsed strictly and failing closed.

Every environment variable of SearchDesk's own is named once, in `Var`, and read only here: the rest
of the server takes its settings from the Config (the desktop app's Claude entry and the `.mcpb`
manifest write the same names; a test fails when they drift). Proxy, certificate and platform
variables stay with the libraries that read them.

A bad value stops the server with exit 1 and a message naming the variable and the accepted
values; a secret is never quoted. Secrets are read once and then scrubbed from the process
environment (and, on Linux, from the block `/proc/<pid>/environ` shows) so no child inherits
them. Stdlib only: this runs before anything else on the start-up path.
"""

from __future__ import annotations

import base64
import binascii
import datetime
import json
import os
import re
import sys
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from types import MappingProxyType
from typing import Final, Literal

from . import catalogue, deadlines
from .catalogue import CATALOGUE, Catalogue, ToolSpec
from .properties import PropertyError, normalise_property
from .text import describe, minutes

CredentialKind = Literal["service_account", "oauth", "desktop", "demo", "none"]


class Var(StrEnum):
    """Every environment variable of SearchDesk's own, by its name (a contract: README and docs/ name
    them to users). Each is the string itself, so it serves as a key and in messages."""

    GSC_SERVICE_ACCOUNT_KEY = "GSC_SERVICE_ACCOUNT_KEY"
    GSC_SERVICE_ACCOUNT_KEY_FILE = "GSC_SERVICE_ACCOUNT_KEY_FILE"
    GSC_CLIENT_ID = "GSC_CLIENT_ID"
    GSC_CLIENT_SECRET = "GSC_CLIENT_SECRET"  # noqa: S105 (a variable's name)
    GSC_REFRESH_TOKEN = "GSC_REFRESH_TOKEN"  # noqa: S105 (a variable's name)
    GOOGLE_APPLICATION_CREDENTIALS = "GOOGLE_APPLICATION_CREDENTIALS"
    GSC_READ_ONLY = "GSC_READ_ONLY"
    GSC_ALLOW_TOOLS = "GSC_ALLOW_TOOLS"
    GSC_DENY_TOOLS = "GSC_DENY_TOOLS"
    GSC_SITE_URL = "GSC_SITE_URL"
    GSC_ALLOWED_SITES = "GSC_ALLOWED_SITES"
    GSC_BRAND_TERMS = "GSC_BRAND_TERMS"
    ELICITATION = "ELICITATION"
    MCP_DIAGNOSTICS = "MCP_DIAGNOSTICS"
    SEARCHDESK_DEMO = "SEARCHDESK_DEMO"
    SEARCHDESK_DEMO_TODAY = "SEARCHDESK_DEMO_TODAY"
    SEARCHDESK_APPROVAL_WAIT = "SEARCHDESK_APPROVAL_WAIT"
    SEARCHDESK_AGENT_SOCKET = "SEARCHDESK_AGENT_SOCKET"
    SEARCHDESK_ASK_IN_APP = "SEARCHDESK_ASK_IN_APP"
    #: Read by the desktop app's sign-in (desktop signin.py), not by the server.
    SEARCHDESK_OAUTH_CLIENT_FILE = "SEARCHDESK_OAUTH_CLIENT_FILE"


#: The variables the desktop app's settings write into Claude's entry for the server (its Claude
#: entry and the `.mcpb` manifest's user settings); anything else in that entry is left as it is.
SETTINGS_VARS: Final = (
    Var.GSC_READ_ONLY,
    Var.GSC_ALLOW_TOOLS,
    Var.GSC_SITE_URL,
    Var.GSC_ALLOWED_SITES,
    Var.GSC_BRAND_TERMS,
)

#: What every entry the desktop app writes for Claude carries, whatever the settings (its Claude entry,
#: the demo's included, and the `.mcpb` manifest): such a server asks in the client's dialog or the app,
#: or refuses — it never offers the two-call token, which would be a way around the person that needs
#: only the app to be out of reach (closed, or its socket file removed by a cleaner).
APP_ENTRY_ENV: Final[Mapping[str, str]] = MappingProxyType({Var.SEARCHDESK_ASK_IN_APP: "true"})

#: Windows: named pipes live under this prefix; a bare name in SEARCHDESK_AGENT_SOCKET gets it.
PIPE_PREFIX: Final = "\\\\.\\pipe\\"

OAUTH_VARS = (Var.GSC_CLIENT_ID, Var.GSC_CLIENT_SECRET, Var.GSC_REFRESH_TOKEN)
CREDENTIAL_VARS = (Var.GSC_SERVICE_ACCOUNT_KEY, Var.GSC_SERVICE_ACCOUNT_KEY_FILE, *OAUTH_VARS)
TRUE_WORDS = ("true", "1", "yes")
FALSE_WORDS = ("false", "0", "no")
WAIT_RANGE = (1, deadlines.APPROVAL_WAIT_MOST)
DEFAULT_APPROVAL_WAIT = deadlines.APPROVAL_WAIT_DEFAULT


class ConfigError(Exception):
    """A setting the server cannot start with; the message names the variable and the fix."""


@dataclass(frozen=True)
class Credential:
    kind: CredentialKind
    origin: str
    info: Mapping[str, str] = field(default_factory=dict, repr=False)

    def describe(self) -> str:
        return {
            "service_account": f"service account from {self.origin}",
            "oauth": f"OAuth refresh token from {self.origin}",
            "desktop": "the SearchDesk app (short-lived tokens over its agent socket)",
            "demo": "none needed (demo)",
            "none": "none",
        }[self.kind]


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
        return catalogue.minimal_scopes(wanted)

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


# --- small parsers ---------------------------------------------------------------------------


def parse_bool(env: Mapping[str, str], name: str) -> bool:
    raw = env.get(name, "").strip().lower()
    if raw == "":
        return False
    if raw in TRUE_WORDS:
        return True
    if raw in FALSE_WORDS:
        return False
    raise ConfigError(
        f"{name} is {describe(env[name])}; use one of true/false, 1/0, yes/no (any case), or leave it unset."
    )


def parse_elicitation(env: Mapping[str, str]) -> bool:
    name = Var.ELICITATION
    raw = env.get(name, "").strip().lower()
    if raw in ("", "true"):
        return True
    if raw == "false":
        return False
    raise ConfigError(f"{name} is {describe(env[name])}; use true or false (any case).")


def parse_wait(env: Mapping[str, str]) -> int:
    name = Var.SEARCHDESK_APPROVAL_WAIT
    raw = env.get(name, "").strip()
    if raw == "":
        return DEFAULT_APPROVAL_WAIT
    lo, hi = WAIT_RANGE
    if raw.isdigit() and lo <= int(raw) <= hi:
        return int(raw)
    raise ConfigError(
        f"{name} is {describe(env[name])}; "
        f"use whole seconds from {lo} to {hi} "
        f"(clients give up on a call after about {minutes(deadlines.CLIENT_WAIT_SECONDS)})."
    )


_ISO_DAY = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


def parse_today(env: Mapping[str, str]) -> datetime.date | None:
    """A pinned day written exactly YYYY-MM-DD (not the other forms ISO 8601 allows), or None."""
    name = Var.SEARCHDESK_DEMO_TODAY
    raw = env.get(name, "").strip()
    if not raw:
        return None
    try:
        if _ISO_DAY.fullmatch(raw):
            return datetime.date.fromisoformat(raw)
    except ValueError:
        pass
    raise ConfigError(f"{name} is {describe(env[name])}; use a real date written YYYY-MM-DD, or unset it.")


def agent_socket_setting(env: Mapping[str, str]) -> str | None:
    """SEARCHDESK_AGENT_SOCKET resolved: on Windows a pipe name (a bare one gets the pipe prefix),
    elsewhere a path with `~` expanded, made absolute. None when unset (the default place)."""
    raw = env.get(Var.SEARCHDESK_AGENT_SOCKET, "").strip()
    if not raw:
        return None
    if sys.platform == "win32":
        return raw if raw.startswith(PIPE_PREFIX) else PIPE_PREFIX + raw
    return os.path.abspath(os.path.expanduser(raw))


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
            f"a prefix with * (e.g. list_*), or groups ({', '.join(catalogue.GROUPS)})."
        )
    return tuple(entries)


def expand_entry(entry: str, table: Catalogue = CATALOGUE) -> tuple[str, ...]:
    if entry in catalogue.GROUPS:
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
            writers = set(spec.scopes) & catalogue.WRITE_CAPABLE_SCOPES
            if writers:
                if spec.name not in named:
                    continue
                brought |= writers
        chosen.append(spec.name)
    return tuple(chosen), tuple(sorted(brought))


# --- credentials -----------------------------------------------------------------------------


# Control characters (C0, DEL, C1: tab, CR, LF, NEL, escapes) and Unicode's line and paragraph separators.
_BREAK_OR_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def _check_one_line(name: str, value: str) -> None:
    """A client id, client secret or refresh token is one line; a break inside it is a paste gone wrong.

    Two values run together, or a line wrapped by a terminal, would reach Google as a different secret
    and fail later as "revoked". Whitespace around the value is trimmed as before; a service-account
    key is JSON and may span many lines, so it is not held to this.
    """
    if _BREAK_OR_CONTROL.search(value.strip()):
        raise ConfigError(
            f"{name} has a line break or control character inside it; it must be one line. "
            "Copy it again as a single line, then restart."
        )


def _check_text(name: str, value: str) -> str:
    if value.strip() == "":
        raise ConfigError(f"{name} is set but empty; set it to a value or remove it.")
    if any((ord(c) < 32 and c not in "\n\r\t") or ord(c) == 0x7F for c in value):
        raise ConfigError(f"{name} contains control characters; copy the value again without them.")
    return value.strip()


def _service_account(name: str, text: str) -> dict[str, str]:
    raw = text.strip()
    data: object
    try:
        data = json.loads(raw)
    except ValueError:
        try:
            data = json.loads(base64.b64decode(raw, validate=True).decode("utf-8"))
        except (ValueError, binascii.Error, UnicodeDecodeError):
            raise ConfigError(
                f"{name} is not a service-account key: expected its JSON, or the JSON in base64."
            ) from None
    if not isinstance(data, dict):
        raise ConfigError(f"{name} is not a service-account key: expected a JSON object.")
    kind = data.get("type")
    if kind != "service_account":
        what = "an OAuth client file" if "installed" in data or "web" in data else f"of type {describe(str(kind))}"
        raise ConfigError(f'{name} is {what}, not a service-account key ("type": "service_account").')
    missing = [k for k in ("client_email", "private_key") if not isinstance(data.get(k), str) or not data[k]]
    if missing:
        raise ConfigError(f"{name} is missing {', '.join(missing)}; download the key from Google Cloud again.")
    token_uri = data.get("token_uri", catalogue.TOKEN_URL)
    if token_uri != catalogue.TOKEN_URL:
        raise ConfigError(
            f"{name} has a token_uri that is not Google's ({catalogue.TOKEN_URL}); refusing it, since the signed "
            "assertion would be sent there."
        )
    return {k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, str)}


def _read_file(name: str, path: str) -> str:
    try:
        return Path(path).expanduser().read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{name} names a file that does not exist; check the path.") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{name} names a file that cannot be read ({type(exc).__name__}).") from None


def parse_credential(env: Mapping[str, str], demo: bool) -> Credential:
    """Explicit before ambient; partial, empty or mixed settings are errors, never guessed."""
    present = [v for v in CREDENTIAL_VARS if v in env]
    for var in present:
        if var in OAUTH_VARS:
            _check_one_line(var, env[var])
        _check_text(var, env[var])
    sa = [v for v in (Var.GSC_SERVICE_ACCOUNT_KEY, Var.GSC_SERVICE_ACCOUNT_KEY_FILE) if v in env]
    trio = [v for v in OAUTH_VARS if v in env]
    if len(sa) == 2:
        raise ConfigError(
            f"Both {Var.GSC_SERVICE_ACCOUNT_KEY} and {Var.GSC_SERVICE_ACCOUNT_KEY_FILE} are set; keep one."
        )
    if sa and trio:
        raise ConfigError(
            f"{sa[0]} and {', '.join(trio)} are both set; use a service account or an OAuth refresh token, not both."
        )
    if trio and len(trio) < 3:
        missing = [v for v in OAUTH_VARS if v not in trio]
        raise ConfigError(
            f"{', '.join(trio)} set without {', '.join(missing)}; an OAuth refresh token needs all three."
        )
    if demo:
        return Credential("demo", "--demo")
    if sa == [Var.GSC_SERVICE_ACCOUNT_KEY]:
        return Credential("service_account", sa[0], _service_account(sa[0], env[sa[0]]))
    if sa == [Var.GSC_SERVICE_ACCOUNT_KEY_FILE]:
        text = _read_file(sa[0], env[sa[0]].strip())
        return Credential("service_account", sa[0], _service_account(sa[0], text))
    if trio:
        info = {"client_id": env[Var.GSC_CLIENT_ID].strip(), "client_secret": env[Var.GSC_CLIENT_SECRET].strip()}
        info["refresh_token"] = env[Var.GSC_REFRESH_TOKEN].strip()
        return Credential("oauth", "/".join(OAUTH_VARS), info)
    adc = env.get(Var.GOOGLE_APPLICATION_CREDENTIALS, "").strip()
    if adc:
        return _adc(adc)
    return Credential("desktop", "SearchDesk app")


def _adc(path: str) -> Credential:
    name = Var.GOOGLE_APPLICATION_CREDENTIALS
    text = _read_file(name, path)
    try:
        data = json.loads(text)
    except ValueError:
        raise ConfigError(f"{name} names a file that is not JSON.") from None
    kind = data.get("type") if isinstance(data, dict) else None
    if kind == "service_account":
        return Credential("service_account", name, _service_account(name, text))
    if kind == "authorized_user":
        fields = ("client_id", "client_secret", "refresh_token")
        if not all(isinstance(data.get(k), str) and data[k] for k in fields):
            raise ConfigError(f"{name} is an authorized_user file missing {', '.join(fields)}; run the login again.")
        for key in fields:
            _check_one_line(f"{name} (its {key})", data[key])
        return Credential("oauth", name, {k: data[k] for k in fields})
    raise ConfigError(
        f"{name} names a credential of type {describe(str(kind))}; only service_account and "
        "authorized_user files are accepted (other kinds reach hosts SearchDesk does not allow)."
    )


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


def scrub_secrets(environ: MutableMapping[str, str] = os.environ) -> None:
    """Remove credential values so no child inherits them and /proc shows none of them."""
    names = [v for v in (*CREDENTIAL_VARS, Var.GOOGLE_APPLICATION_CREDENTIALS) if v in environ]
    for name in names:
        del environ[name]
    if names and sys.platform.startswith("linux"):
        _wipe_initial_environ(set(names))


def _wipe_initial_environ(names: set[str]) -> None:
    """Overwrite the original environment block in place.

    `del os.environ[...]` only changes Python's copy and the libc table; the kernel keeps
    showing the block the process was started with in /proc/<pid>/environ. That block lives
    at the top of the stack and stays writable, so its bytes are overwritten here.
    """
    try:
        raw = Path("/proc/self/environ").read_bytes()
        stat = Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()
        # Fields 50 and 51 of /proc/<pid>/stat (env_start, env_end) counted after the comm field.
        env_start = int(stat[47])
    except (OSError, IndexError, ValueError):
        return
    import ctypes

    offset = 0
    for entry in raw.split(b"\0"):
        key = entry.split(b"=", 1)[0].decode("latin-1")
        if key in names and b"=" in entry:
            start = env_start + offset + len(key) + 1
            length = len(entry) - len(key) - 1
            ctypes.memset(start, ord("x"), length)
        offset += len(entry) + 1
