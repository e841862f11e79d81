"""The credential the server runs with, read from its environment variables; and the secrets scrubbed.

Explicit before ambient (a key or refresh token in the variables before GOOGLE_APPLICATION_CREDENTIALS,
then the SearchDesk app's short-lived tokens); partial, empty or mixed settings are errors, never
guessed. Once read, `scrub_secrets` removes every credential value from the process environment (and,
on Linux, from the block `/proc/<pid>/environ` shows) so no child inherits them. Stdlib only: this
runs on the start-up path.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import re
import sys
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from . import scopes
from .text.phrases import describe
from .variables import CREDENTIAL_VARS, OAUTH_VARS, ConfigError, Var

CredentialKind = Literal["service_account", "oauth", "desktop", "demo", "none"]


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
    token_uri = data.get("token_uri", scopes.TOKEN_URL)
    if token_uri != scopes.TOKEN_URL:
        raise ConfigError(
            f"{name} has a token_uri that is not Google's ({scopes.TOKEN_URL}); refusing it, since the signed "
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
