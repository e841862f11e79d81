"""What Google says about a site's verified owners, as the cases its help pages document: which one
applies to this account, and the other owners a question names among its values.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

from ..text.display import escaped


class Ownership(Enum):
    """Which of Google's documented cases applies to this account and this site."""

    OTHERS_REMAIN = "others"  # this account is a verified owner, and others are too
    LAST_OWNER = "last"  # this account is the only verified owner
    NOT_OWNER = "not_owner"  # Google does not list this account as a verified owner, nor of a domain it is in
    #: Google lists this account as a verified owner of a domain the property is in, not of the property:
    #: an indirect owner, whom a property's own list leaves out (developers.google.com/site-verification/
    #: v1/webResource: "Indirect owners—for example verified owners of the containing domain—are not
    #: included in this list").
    THROUGH_DOMAIN = "domain"
    UNKNOWN = "unknown"  # Google's owner list could not be read


@dataclass(frozen=True)
class OwnerFacts:
    ownership: Ownership
    others: int = 0
    domain: str = ""  # THROUGH_DOMAIN: the domain (ASCII) whose verified owner this account is
    #: OTHERS_REMAIN: the other owners' addresses as Google lists them, sorted (so the words depend only on
    #: Google's answer, never on its order); empty when this account could not be told apart in the list.
    names: tuple[str, ...] = ()


def owner_facts(owners: Sequence[str] | None, *, readable: bool, account: str | None = None) -> OwnerFacts:
    """The case from Google's verified-owner list. Google shows a site's owners only to one of them,
    so a list that could be read means this account is an owner; the others are the rest, named when
    `account` is found in the list."""
    if not readable:
        return OwnerFacts(Ownership.NOT_OWNER)
    if not owners:
        return OwnerFacts(Ownership.UNKNOWN)
    others = len(owners) - 1
    if not others:
        return OwnerFacts(Ownership.LAST_OWNER)
    me = account.casefold() if account else None
    rest = sorted(a for a in owners if a.casefold() != me)
    return OwnerFacts(Ownership.OTHERS_REMAIN, others, names=tuple(rest) if len(rest) == others else ())


#: How many other owners the values name one a line; the rest are counted ("and N more").
NAMED_OWNERS = 3
OTHER_OWNER = "Other verified owner"


def other_owner_lines(facts: OwnerFacts) -> list[tuple[str, str]]:
    """The other verified owners, in the values below the question (never in the server's sentences: an
    address is Google's, not the server's): the first `NAMED_OWNERS`, ASCII-escaped like every owner
    address, then how many more."""
    if facts.ownership is not Ownership.OTHERS_REMAIN or not facts.names:
        return []
    lines = [(OTHER_OWNER, escaped(a, ascii_only=True)) for a in facts.names[:NAMED_OWNERS]]
    if (more := len(facts.names) - NAMED_OWNERS) > 0:
        lines.append((f"{OTHER_OWNER}s", f"and {more:,} more"))
    return lines
