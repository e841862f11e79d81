"""Site Verification v1: verified sites (webResource) and verification tokens.

Ids follow Google: a URL-prefix site is its URL, a domain is dns://domain. Verification succeeds for
hosts the demo user controls (CONTROLLED_DOMAINS) and fails for every other, as if the token were
missing; a verified site makes the matching Search Console property owned.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from . import wire
from .faults import GoogleFault, bad_request
from .prng import hexdigest, token
from .request import DemoRequest
from .scope import domain_covers, host_of, is_valid_domain
from .state import CONTROLLED_DOMAINS, DemoState, WebResource

SITE = "SITE"
DOMAIN = "INET_DOMAIN"
SITE_METHODS = ("FILE", "META", "ANALYTICS", "TAG_MANAGER", "DNS", "DNS_TXT", "DNS_CNAME")
DOMAIN_METHODS = ("DNS", "DNS_TXT", "DNS_CNAME")
VERIFICATION_FAILED = (
    "The verification failed: the necessary verification token could not be found on your site. "
    "Place the token and try again."
)
NOT_AN_OWNER = "You are not an owner of this site."
MAX_OWNER = 254


def _site(value: object, where: str) -> tuple[str, str]:
    """(type, canonical identifier) of a site object; Google's 400 when it is not one."""
    site = wire.fields(wire.obj_at(value, where), ("type", "identifier"), where)
    kind = wire.text(site, "type")
    identifier = wire.text(site, "identifier")
    if kind not in (SITE, DOMAIN):
        raise bad_request("site.type must be SITE or INET_DOMAIN.")
    if not identifier:
        raise bad_request("site.identifier is required.")
    if kind == DOMAIN:
        domain = identifier.strip().lower().rstrip(".")
        if not is_valid_domain(domain):
            raise bad_request("site.identifier must be a domain name such as example.com for INET_DOMAIN.")
        return kind, domain
    if host_of(identifier) is None:
        raise bad_request("site.identifier must be an http or https URL for SITE.")
    parts = urlsplit(identifier)
    path = parts.path or "/"
    return kind, f"{parts.scheme}://{parts.netloc.lower()}{path}"


def _method(raw: str | None, kind: str) -> str:
    if not raw:
        raise bad_request("verificationMethod is required.")
    method = raw.upper()
    allowed = DOMAIN_METHODS if kind == DOMAIN else SITE_METHODS
    if method not in allowed:
        raise bad_request(
            f"The verification method {method[:20]} cannot be used for {kind}; use one of {', '.join(allowed)}."
        )
    return method


def _id(kind: str, identifier: str) -> str:
    return "dns://" + identifier if kind == DOMAIN else identifier


def _controlled(kind: str, identifier: str) -> bool:
    host = identifier if kind == DOMAIN else (host_of(identifier) or "")
    return any(domain_covers(domain, host) for domain in CONTROLLED_DOMAINS)


def _owned(state: DemoState, resource_id: str) -> WebResource:
    resource = state.resources.get(resource_id)
    if resource is None or state.user not in resource.owners:
        if not (resource_id.startswith("dns://") or host_of(resource_id)):
            raise bad_request("The id is not a verified site: use a site URL or dns://domain.")
        raise GoogleFault(403, NOT_AN_OWNER)
    return resource


def list_resources(state: DemoState, req: DemoRequest) -> object:
    items = [r.to_json() for r in state.owned_resources()]
    return {"items": items} if items else {}


def get_resource(state: DemoState, req: DemoRequest) -> object:
    return _owned(state, req.param("id")).to_json()


def get_token(state: DemoState, req: DemoRequest) -> object:
    body = wire.fields(wire.read_object(req.body), ("site", "verificationMethod"))
    if body.get("site") is None:
        raise bad_request("site is required.")
    kind, identifier = _site(body["site"], "site")
    method = _method(wire.text(body, "verificationMethod"), kind)
    return {"method": method, "token": verification_token(method, identifier)}


def verification_token(method: str, identifier: str) -> str:
    """The token Google would hand out for this site and method (stable for the pair)."""
    secret = token("verify", method.replace("DNS_TXT", "DNS"), identifier, length=43)
    if method in ("DNS", "DNS_TXT"):
        return "google-site-verification=" + secret
    if method == "DNS_CNAME":
        label = hexdigest("cname", identifier, length=12)
        return f"{label} CNAME gv-{hexdigest('gv', identifier, length=26)}.dv.googlehosted.com"
    if method == "FILE":
        return f"google{hexdigest('file', identifier, length=16)}.html"
    if method == "META":
        return f'<meta name="google-site-verification" content="{secret}" />'
    if method == "ANALYTICS":
        return "G-" + hexdigest("ga", identifier, length=10).upper()
    return "GTM-" + hexdigest("gtm", identifier, length=7).upper()


def insert(state: DemoState, req: DemoRequest) -> object:
    body = wire.fields(wire.read_object(req.body), ("id", "site", "owners"))
    if body.get("site") is None:
        raise bad_request("site is required.")
    kind, identifier = _site(body["site"], "site")
    _method(req.query_value("verificationMethod"), kind)
    if not _controlled(kind, identifier):
        raise bad_request(VERIFICATION_FAILED)
    resource_id = _id(kind, identifier)
    resource = state.resources.get(resource_id)
    if resource is None:
        resource = WebResource(resource_id, kind, identifier, [])
        state.resources[resource_id] = resource
    if state.user not in resource.owners:
        resource.owners.insert(0, state.user)
    return resource.to_json()


def _owners(value: object) -> list[str]:
    if not isinstance(value, list) or not value:
        raise bad_request("owners must be a non-empty list of email addresses.")
    owners: list[str] = []
    for index, owner in enumerate(value):
        if not isinstance(owner, str) or not 3 <= len(owner) <= MAX_OWNER or "@" not in owner or " " in owner:
            raise bad_request(f"owners[{index}] is not a valid email address.")
        if owner not in owners:
            owners.append(owner)
    return owners


def _modify(state: DemoState, req: DemoRequest, *, require_owners: bool) -> dict[str, Any]:
    resource = _owned(state, req.param("id"))
    body = wire.fields(wire.read_object(req.body), ("id", "site", "owners"))
    if body.get("site") is not None and _site(body["site"], "site") != (resource.type, resource.identifier):
        raise bad_request("The site in the request body does not match the id in the URL.")
    if body.get("id") not in (None, resource.id):
        raise bad_request("The id in the request body does not match the id in the URL.")
    if require_owners or body.get("owners") is not None:
        resource.owners = _owners(body.get("owners"))
    return resource.to_json()


def update(state: DemoState, req: DemoRequest) -> object:
    return _modify(state, req, require_owners=True)


def patch(state: DemoState, req: DemoRequest) -> object:
    return _modify(state, req, require_owners=False)


def delete(state: DemoState, req: DemoRequest) -> object:
    resource = _owned(state, req.param("id"))
    del state.resources[resource.id]
    return None


def owns_url(state: DemoState, url: str) -> bool:
    """Whether a verified site of the demo user covers `url` (what the Indexing API checks)."""
    host = host_of(url)
    if host is None:
        return False
    for resource in state.owned_resources():
        if resource.type == DOMAIN and domain_covers(resource.identifier, host):
            return True
        if resource.type == SITE and url.startswith(resource.identifier):
            return True
    return False
