"""Where the sitemap reader may go: the property's own hosts, on global addresses only, pinned.

The coverage watch reads the property's sitemaps from the person's own website (keeping/coverage_sitemaps.py).
A website is hostile ground: a sitemap, or a redirect from one, can name any host, and a host name can
resolve to the person's router, a printer or a cloud's metadata service. So, before any byte leaves:

- **The address** (``check_url``): ``http`` or ``https`` only, port 80 or 443 only, no user name or
  password, a host inside the property (a URL-prefix property: under its prefix; a Domain property: the
  domain and its subdomains), host names compared after IDNA, case and a trailing dot are normalised.
- **The machine** (``global_address``): every address the name resolves to must be a global one, after
  unwrapping the IPv6 forms that carry an IPv4 address (IPv4-mapped, 6to4, NAT64); loopback passes
  only when the reader was built with ``allow_loopback=True``, which only the tests do.
- **The connection** (``PinnedBackend``): the name is resolved once, by the resolver the reader was
  given (a constructor argument, never an environment variable), the addresses checked, and the socket
  connected to the address that was checked: a name that answers differently the second time (DNS
  rebinding) is never asked a second time. The host name stays in the URL, so TLS's SNI, the
  certificate check and ``Host`` are the website's own.
"""

from __future__ import annotations

import enum
import functools
import ipaddress
import re
import socket
import typing
import urllib.parse
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import httpcore
import httpx
import idna

__all__ = [
    "NAT64",
    "Address",
    "Refused",
    "Resolver",
    "Site",
    "Why",
    "check_url",
    "global_address",
    "normal_host",
    "page_inside",
    "resolve_checked",
    "system_resolver",
]

#: What a resolver returns: (IP address, port) pairs, as getaddrinfo's socket addresses are.
Address = tuple[str, int]
#: ``resolver(host, port)``: the addresses to try for a host name (ASCII, normalised) and port.
Resolver = Callable[[str, int], list[Address]]

#: Ports a sitemap may be fetched from.
PORTS = frozenset({80, 443})
#: A page or sitemap address longer than this is skipped (the longest Google takes in a sitemap).
MAX_URL = 2048
#: NAT64 prefixes: the well-known one (RFC 6052, the IPv4 address in the last 32 bits) and the
#: local-use one (RFC 8215, where it may sit anywhere: never global, refused whole).
NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
NAT64_LOCAL = ipaddress.IPv6Network("64:ff9b:1::/48")
#: Characters no address SearchDesk uses may hold (controls, spaces, a backslash that parsers read
#: differently).
_UNSAFE = re.compile(r"[\x00-\x20\x7f\\]")


class Why(enum.Enum):
    """Why a sitemap was kept out, in a site owner's words (shown in Settings and the logs)."""

    SCHEME = "its address is not a web address (only http and https are read)"
    PORT = "its address names a port other than 80 or 443"
    USERINFO = "its address carries a user name or password"
    OUTSIDE = "it is not on your property's website"
    HOST = "its address has a host name SearchDesk cannot read"
    TOO_LONG = "its address is longer than 2,048 characters"
    NOT_GLOBAL = "the website's name leads to a private or local network address, not the public internet"
    UNRESOLVED = "the website's name could not be looked up"
    REDIRECTS = "the website redirected it more than 5 times"
    STATUS = "the website did not send it"
    TOO_BIG = "it is larger than 50 MB once unpacked"
    ENCODING = "the website sent it packed in a way SearchDesk does not read"
    BROKEN = "it is not a readable sitemap"
    DOCTYPE = "it declares a document type or entities, which sitemaps never need (a known way to attack readers)"
    NESTED = "it is a sitemap index inside a sitemap index (Google reads one level only)"
    SLOW = "the website took too long to send it"
    NETWORK = "the website could not be reached"
    DAILY = "SearchDesk has read this property's sitemaps as often as it does in one day"


class Refused(Exception):
    """A sitemap kept out, with why (``why``) and which address (``url``)."""

    def __init__(self, why: Why, url: str, detail: str = "") -> None:
        self.why = why
        self.url = url
        self.detail = detail
        super().__init__(f"{url}: {why.value}" + (f" ({detail})" if detail else ""))


def normal_host(host: str) -> str:
    """A host name as compared: IDNA (UTS #46) to ASCII, lower case, without a trailing dot.

    Raises ValueError for a name that is not a valid host name (an empty label, a space, ...)."""
    name = host[:-1] if host.endswith(".") else host
    if not name or name.startswith("[") or ":" in name:
        raise ValueError(host)
    try:
        ipaddress.ip_address(name)
        return name  # an IP literal: never inside a property (properties are names), compared as is
    except ValueError:
        pass
    return idna.encode(name, uts46=True).decode("ascii").lower()


@dataclass(frozen=True)
class Site:
    """A Search Console property as the reader bounds it: a Domain (the domain and its subdomains) or a
    URL prefix (scheme, host, port and the path it starts with)."""

    domain: str | None
    scheme: str = ""
    host: str = ""
    port: int = 0
    path: str = "/"

    @classmethod
    def of(cls, site_url: str) -> Site:
        if site_url.startswith("sc-domain:"):
            return cls(domain=normal_host(site_url.removeprefix("sc-domain:")))
        scheme, host, port, path = _parts(site_url)
        return cls(domain=None, scheme=scheme, host=host, port=port, path=path if path.endswith("/") else path + "/")

    def holds(self, scheme: str, host: str, port: int, path: str) -> bool:
        """Whether a URL so split (host normalised) is inside this property."""
        if self.domain is not None:
            return host == self.domain or host.endswith("." + self.domain)
        return (
            scheme == self.scheme
            and host == self.host
            and port == self.port
            and (path.startswith(self.path) or path + "/" == self.path)
        )


@functools.lru_cache(maxsize=256)
def _host(netloc_host: str) -> str:
    return normal_host(netloc_host)


def _parts(text: str) -> tuple[str, str, int, str]:
    """(scheme, normalised host, port, path) of an http(s) URL, or Refused saying what is wrong."""
    if len(text) > MAX_URL:
        raise Refused(Why.TOO_LONG, text[:80] + "…")
    try:
        split = urllib.parse.urlsplit(text)
        scheme = split.scheme.lower()
        if scheme not in ("http", "https"):
            raise Refused(Why.SCHEME, text)
        if "@" in split.netloc:
            raise Refused(Why.USERINFO, text)
        port = split.port or (443 if scheme == "https" else 80)
        if port not in PORTS:
            raise Refused(Why.PORT, text)
        if _UNSAFE.search(text):
            raise Refused(Why.HOST, text)
        host = _host(split.hostname or "")
    except (ValueError, idna.IDNAError):
        raise Refused(Why.HOST, text) from None
    return scheme, host, port, split.path or "/"


def page_inside(site: Site, text: str) -> bool:
    """Whether a page address from a sitemap is one of the property's own (fast: 50,000 a file).

    The same answer as ``_parts`` gives, without splitting every address: in a sitemap they share a
    few beginnings (``https://www.example.com``), so the scheme and authority are split and checked
    once each (``_head``) and each address only looked through for unsafe characters and cut at its
    path. Taken only when the address starts with letters and ``://`` and holds no unsafe character:
    then urlsplit finds exactly that scheme and authority in the address and in its beginning alone."""
    if len(text) > MAX_URL:
        return False
    colon = text.find("://")
    if colon <= 0 or not (text[:colon].isascii() and text[:colon].isalpha()) or _UNSAFE.search(text):
        return _slow_inside(site, text)
    end = len(text)
    for mark in "/?#":
        at = text.find(mark, colon + 3, end)
        if at != -1:
            end = at
    head = _head(text[:end])
    if head is None:
        return False
    path = text[end:]
    for mark in "#?":
        path = path.partition(mark)[0]
    return site.holds(*head, path or "/")


def _slow_inside(site: Site, text: str) -> bool:
    try:
        return site.holds(*_parts(text))
    except Refused:
        return False


@functools.lru_cache(maxsize=256)
def _head(head: str) -> tuple[str, str, int] | None:
    """(scheme, normalised host, port) of an address's scheme and authority, or None when refused."""
    try:
        scheme, host, port, _ = _parts(head)
    except Refused:
        return None
    return scheme, host, port


def check_url(site: Site, text: str) -> httpx.URL:
    """``text`` as a URL the reader may fetch from the property's website, or Refused saying why.

    Split twice, by the standard library and by httpx (which makes the request), and the two must
    agree: a URL the two parsers read differently is not fetched."""
    scheme, host, port, path = _parts(text)
    if not site.holds(scheme, host, port, path):
        raise Refused(Why.OUTSIDE, text)
    try:
        url = httpx.URL(text)
        same = (url.scheme, _host(url.host), url.port or (443 if url.scheme == "https" else 80), url.userinfo)
    except (httpx.InvalidURL, ValueError, TypeError, idna.IDNAError):
        raise Refused(Why.HOST, text) from None
    if same != (scheme, host, port, b""):
        raise Refused(Why.HOST, text)
    return url.copy_with(host=host)


def _unwrap(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    """The IPv4 address an IPv6 address carries (IPv4-mapped, 6to4, well-known NAT64), else itself."""
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return ip.ipv4_mapped
        if ip.sixtofour is not None:
            return ip.sixtofour
        if ip in NAT64:
            return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return ip


def global_address(text: str, *, allow_loopback: bool = False) -> bool:
    """Whether the sitemap reader may connect to ``text``: a global address after unwrapping.

    ``is_global`` alone is not enough on Python 3.11 (multicast and some reserved IPv6 ranges count as
    global there), so those are refused by name too. Loopback passes only with ``allow_loopback``."""
    try:
        ip = _unwrap(ipaddress.ip_address(text.split("%", 1)[0]))
    except ValueError:
        return False
    if allow_loopback and ip.is_loopback:
        return True
    if isinstance(ip, ipaddress.IPv6Address) and ip in NAT64_LOCAL:
        return False
    return (
        ip.is_global
        and not ip.is_multicast
        and not ip.is_reserved
        and not ip.is_unspecified
        and not ip.is_link_local
        and not ip.is_loopback
        and not ip.is_private
    )


def system_resolver(host: str, port: int) -> list[Address]:
    """The system's answer for ``host`` (TCP addresses, in the system's order)."""
    found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP)
    return [(str(sockaddr[0]), int(sockaddr[1])) for *_, sockaddr in found]


def resolve_checked(resolver: Resolver, host: str, port: int, *, allow_loopback: bool, url: str) -> list[Address]:
    """The host's addresses, each checked: Refused if any is not global (a name that points anywhere
    private is not the public website, whatever else it lists) or if there are none."""
    try:
        addresses = resolver(host, port)
    except OSError as exc:
        raise Refused(Why.UNRESOLVED, url, str(exc)) from None
    if not addresses:
        raise Refused(Why.UNRESOLVED, url)
    for ip, _ in addresses:
        if not global_address(ip, allow_loopback=allow_loopback):
            raise Refused(Why.NOT_GLOBAL, url, ip)
    return addresses


class PinnedBackend(httpcore.SyncBackend):
    """httpcore's network backend, resolving with the given resolver, checking, and connecting to the
    checked address (the URL's host name stays for SNI and Host: httpcore takes those from the URL)."""

    def __init__(self, resolver: Resolver, *, allow_loopback: bool) -> None:
        self.resolver = resolver
        self.allow_loopback = allow_loopback
        #: Every (host, address) connected to, in order: what the tests read to see the pinning.
        self.connected: list[tuple[str, Address]] = []

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: typing.Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.NetworkStream:
        addresses = resolve_checked(
            self.resolver, host, port, allow_loopback=self.allow_loopback, url=f"//{host}:{port}"
        )
        last: Exception | None = None
        for address in addresses:
            try:
                stream = super().connect_tcp(address[0], address[1], timeout, local_address, _options(socket_options))
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                last = exc
                continue
            self.connected.append((host, address))
            return stream
        assert last is not None
        raise last

    def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: typing.Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.NetworkStream:
        raise httpcore.ConnectError("the sitemap reader never connects to a local socket")


def _options(given: Iterable[httpcore.SOCKET_OPTION] | None) -> list[httpcore.SOCKET_OPTION]:
    return list(given or [])
