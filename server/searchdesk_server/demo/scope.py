"""Which URLs a property covers, with Search Console's own rules.

A domain property (sc-domain:example.com) covers http and https on the domain and every subdomain; a
URL-prefix property covers exactly the URLs that start with its prefix, scheme and host included.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

DOMAIN_PREFIX = "sc-domain:"
_HOST = re.compile(r"(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+")
_PREFIX = re.compile(r"https?://([^/?#@\s]+)(/[^?#\s]*)?")
MAX_URL = 2048


def host_of(url: str) -> str | None:
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    if parts.scheme not in ("http", "https"):
        return None
    return parts.hostname or None


def is_valid_domain(domain: str) -> bool:
    return bool(_HOST.fullmatch(domain))


def is_valid_site_url(site_url: str) -> bool:
    """A property as Search Console names it: sc-domain:host, or http(s)://host/…/ ending in a slash."""
    if len(site_url) > MAX_URL:
        return False
    if site_url.startswith(DOMAIN_PREFIX):
        return is_valid_domain(site_url[len(DOMAIN_PREFIX) :])
    match = _PREFIX.fullmatch(site_url)
    if not match or not site_url.endswith("/"):
        return False
    host = match.group(1).rsplit(":", 1)[0]
    return is_valid_domain(host) or host == "localhost"


def domain_covers(domain: str, host: str) -> bool:
    return host == domain or host.endswith("." + domain)


def covers(site_url: str, url: str) -> bool:
    """Whether `url` belongs to the property `site_url`."""
    if site_url.startswith(DOMAIN_PREFIX):
        host = host_of(url)
        return host is not None and domain_covers(site_url[len(DOMAIN_PREFIX) :], host)
    return url.startswith(site_url) and host_of(url) is not None
