"""Credential-shaped text is never echoed: tokens, keys and client secrets become "[redacted]".

Google may echo back the token a call used, and an error body or a log line may hold a private key or
a client secret. `redact` replaces every credential shape it knows, and every secret the caller holds,
wherever it appears. The desktop app's log filter uses the same function.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final

__all__ = ["KNOWN_MIN", "REDACTED", "redact"]

_CRED_CHARS = r"[A-Za-z0-9_\-.~+/=]"
_SECRET_PATTERNS: Final = (
    # A PEM private key, with or without its end line (a cut-off message still holds the key). The
    # body may hold real newlines or JSON's "\n" escapes.
    re.compile(
        r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY-----[A-Za-z0-9+/=\s\\]*"
        r"(?:-----END[A-Z0-9 ]{0,40}PRIVATE KEY-----)?"
    ),
    re.compile(r"ya29\." + _CRED_CHARS + "*"),  # OAuth access token
    re.compile(r"1//" + _CRED_CHARS + "{8,}"),  # OAuth refresh token
    re.compile(r"GOCSPX-" + _CRED_CHARS + "*"),  # OAuth client secret
    re.compile(r"AIza" + _CRED_CHARS + "{8,}"),  # API key
    # A DER private key's base64 without its PEM header (the message was cut before it).
    re.compile(r"MII[A-Za-z0-9+/]{2}(?:[A-Za-z0-9+/=]|\\n|\s){60,}"),
)
# JSON (or Python repr) values of credential fields; only the value is replaced.
_SECRET_VALUE = re.compile(
    r"""\\?["'](?:private_key|client_secret|refresh_token|access_token)\\?["']\s*:\s*"""
    r"""(?P<v>"(?:[^"\\]|\\.)*"?|'(?:[^'\\]|\\.)*'?|\\"(?:[^"\\]|\\[^"])*(?:\\")?)""",
    re.DOTALL,
)
# Whatever follows "Bearer" (any kind of token, not only Google's shapes); the word itself stays.
_BEARER = re.compile(r"""(?i)\bbearer\s+(?P<v>[^\s"',;]+)""")
_PEM_END = re.compile(r"-----END[A-Z0-9 ]{0,40}PRIVATE KEY-----")
_PEM_BODY_CHARS: Final = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=\\ \t\r\n")
REDACTED: Final = "[redacted]"


#: A secret we hold is redacted wherever it appears, whatever its shape; shorter ones are too likely
#: to match ordinary text.
KNOWN_MIN: Final = 8


def _secret_spans(s: str, known: Iterable[str]) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    for secret in known:
        if len(secret) >= KNOWN_MIN:
            at = s.find(secret)
            while at != -1:
                spans.append((at, at + len(secret)))
                at = s.find(secret, at + len(secret))
    for pattern in _SECRET_PATTERNS:
        spans.extend(m.span() for m in pattern.finditer(s))
    spans.extend(m.span("v") for m in _SECRET_VALUE.finditer(s))
    spans.extend(m.span("v") for m in _BEARER.finditer(s))
    # An end line whose beginning was cut away: take the key body before it. Walking back by hand
    # keeps this linear (a regex anchored on the end line would rescan the body from every start).
    for m in _PEM_END.finditer(s):
        start = m.start()
        while start > 0 and s[start - 1] in _PEM_BODY_CHARS:
            start -= 1
        spans.append((start, m.end()))
    return spans


def redact(s: str, known: Iterable[str] = ()) -> str:
    """Replace credential shapes anywhere in ``s``, and every secret in ``known`` (the tokens a call
    used, which Google may echo back), with "[redacted]".

    Each pattern is matched on the original text independently and the spans are merged, so one
    secret ending where another begins cannot shield the second one's tail.
    """
    spans = sorted(span for span in _secret_spans(s, known) if span[1] > span[0])
    if not spans:
        return s
    out: list[str] = []
    pos = 0
    cur_start, cur_end = spans[0]
    for start, end in spans[1:]:
        if start <= cur_end:
            cur_end = max(cur_end, end)
            continue
        out.append(s[pos:cur_start])
        out.append(REDACTED)
        pos = cur_end
        cur_start, cur_end = start, end
    out.append(s[pos:cur_start])
    out.append(REDACTED)
    out.append(s[cur_end:])
    return "".join(out)
