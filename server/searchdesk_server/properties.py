"""Search Console property names and the GSC_ALLOWED_SITES scoping rules.

A property is either a URL prefix (`https://host/path/`, always ending in a slash) or a domain
(`sc-domain:host`). A bare `example.com` could mean either, so it is refused with both
spellings rather than guessed. Scoping follows Search Console's own: a domain covers its
subdomains under any scheme; a URL prefix covers whole path segments only.

Scoping compares paths as text, so a path must mean what it reads: a "." or ".." segment (also
percent-encoded, or after a backslash, which browsers read as a slash) is refused rather than
resolved, since `https://example.com/blog/../` would read as inside `/blog/` and name the whole site.
"""

from __future__ import annotations

import re
from urllib.parse import SplitResult, urlsplit

from .text.phrases import describe, too_long

MAX_LENGTH = 2048
# The percent-encodings of ".", "/" and "\\" (any case): decoded before looking for dot segments.
_DOT_OR_SLASH = re.compile("%(2e|2f|5c)", re.IGNORECASE)
_SEPARATOR = re.compile(r"[/\\]")
_HOST = re.compile(r"^(?=.{1,253}$)([a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?\.)*[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$")


class PropertyError(ValueError):
    """A property or URL the server will not send to Google; the message says the accepted forms."""


def _host_ok(host: str) -> bool:
    try:
        ascii_host = host.encode("idna").decode("ascii") if not host.isascii() else host
    except UnicodeError:
        return False
    return bool(_HOST.match(ascii_host))


def _split(text: str) -> SplitResult:
    """urlsplit, with its ValueError (an unclosed "[" of an IPv6 host, say) as a PropertyError."""
    try:
        return urlsplit(text)
    except ValueError:
        raise PropertyError(f"{describe(text)} is not a URL that can be read (check its host name).") from None


def _has_dot_segment(path: str) -> bool:
    decoded = _DOT_OR_SLASH.sub(lambda m: chr(int(m.group(1), 16)), path)
    return any(segment in (".", "..") for segment in _SEPARATOR.split(decoded))


def _refuse_dot_segments(text: str, path: str) -> None:
    if _has_dot_segment(path):
        raise PropertyError(
            f'{describe(text)} has a "." or ".." step in its path (perhaps written %2e); write the address '
            "without it, the way a browser shows it after following it (https://example.com/shop/, not "
            "https://example.com/blog/../shop/)."
        )


def normalise_property(value: str) -> str:
    """`https://…/` (slash added) or `sc-domain:host` (lower-cased); anything else is refused."""
    text = value.strip()
    if not text:
        raise PropertyError("the property is empty; use https://example.com/ or sc-domain:example.com.")
    if len(text) > MAX_LENGTH:
        raise PropertyError(too_long("the property", len(text), MAX_LENGTH))
    if any(not c.isprintable() or c.isspace() for c in text):
        raise PropertyError("the property contains spaces or control characters; copy it again.")
    lower = text.lower()
    if lower.startswith("sc-domain:"):
        host = lower[len("sc-domain:") :].rstrip(".")
        if not _host_ok(host):
            raise PropertyError(
                f"{describe(text)} is not a domain property: after sc-domain: comes a bare host name "
                "such as example.com (no scheme, path or port)."
            )
        return "sc-domain:" + host
    if lower.startswith(("http://", "https://")):
        parts = _split(text)
        if parts.query or parts.fragment or text.endswith(("?", "#")):
            raise PropertyError(
                f"{describe(text)} has a query or fragment; a URL-prefix property is scheme, host and path only."
            )
        host = (parts.hostname or "").rstrip(".")
        if not host or not _host_ok(host) or parts.username or parts.password:
            raise PropertyError(f"{describe(text)} has no valid host name.")
        try:
            port = parts.port
        except ValueError:
            raise PropertyError(f"{describe(text)} has an invalid port.") from None
        netloc = host if port is None else f"{host}:{port}"
        _refuse_dot_segments(text, parts.path)
        path = parts.path or "/"
        if not path.endswith("/"):
            path += "/"
        return f"{parts.scheme.lower()}://{netloc}{path}"
    if "://" not in text and _host_ok(lower.split("/", 1)[0]):
        host = lower.split("/", 1)[0]
        raise PropertyError(
            f"{describe(text)} could mean two properties: the domain property sc-domain:{host} or the "
            f"URL-prefix property https://{host}/. Say which."
        )
    raise PropertyError(
        f"{describe(text)} is not a property; use a URL prefix such as https://example.com/ or a domain "
        "property such as sc-domain:example.com."
    )


def check_url(value: str) -> str:
    """A page URL for inspection or the Indexing API: absolute http(s), no fragment, no user name."""
    text = value.strip()
    if len(text) > MAX_LENGTH:
        raise PropertyError(too_long("the URL", len(text), MAX_LENGTH))
    if any(not c.isprintable() or c.isspace() for c in text):
        raise PropertyError("the URL contains spaces or control characters; percent-encode them.")
    parts = _split(text)
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname or not _host_ok(parts.hostname):
        raise PropertyError(f"{describe(text)} is not an absolute http(s) URL such as https://example.com/page.")
    if parts.username is not None or parts.password is not None:
        raise PropertyError(f"{describe(text)} holds a user name or password; leave them out.")
    if parts.fragment or text.endswith("#"):
        raise PropertyError(f"{describe(text)} has a #fragment; Google knows pages by their URL without one.")
    try:
        parts.port  # noqa: B018 (urlsplit checks the port only when asked)
    except ValueError:
        raise PropertyError(f"{describe(text)} has an invalid port.") from None
    _refuse_dot_segments(text, parts.path)
    return text


def _host_in_domain(host: str, domain: str) -> bool:
    return host == domain or host.endswith("." + domain)


def covers(allowed: str, prop: str) -> bool:
    """Does the allowed property `allowed` include the property `prop`?"""
    if allowed.startswith("sc-domain:"):
        domain = allowed[len("sc-domain:") :]
        if prop.startswith("sc-domain:"):
            return _host_in_domain(prop[len("sc-domain:") :], domain)
        return _host_in_domain((urlsplit(prop).hostname or "").lower(), domain)
    if prop.startswith("sc-domain:"):
        return False
    return prop.startswith(allowed)


def covers_url(allowed: str, url: str) -> bool:
    """Does the allowed property include the page `url` (whole path segments only)?"""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    if allowed.startswith("sc-domain:"):
        return _host_in_domain(host, allowed[len("sc-domain:") :])
    netloc = host if parts.port is None else f"{host}:{parts.port}"
    base = f"{parts.scheme.lower()}://{netloc}{parts.path or '/'}"
    return base.startswith(allowed) or base + "/" == allowed


def check_allowed(allowed: tuple[str, ...], prop: str) -> None:
    if allowed and not any(covers(a, prop) for a in allowed):
        raise PropertyError(
            "that property is outside GSC_ALLOWED_SITES; this server may only use: " + ", ".join(allowed) + "."
        )


def check_allowed_url(allowed: tuple[str, ...], url: str) -> None:
    if allowed and not any(covers_url(a, url) for a in allowed):
        raise PropertyError(
            "that URL is outside GSC_ALLOWED_SITES; this server may only use: " + ", ".join(allowed) + "."
        )


def verification_id(prop: str) -> tuple[str, str]:
    """Site Verification's (type, identifier) for a property: domain -> INET_DOMAIN, prefix -> SITE."""
    if prop.startswith("sc-domain:"):
        return "INET_DOMAIN", prop[len("sc-domain:") :]
    return "SITE", prop
