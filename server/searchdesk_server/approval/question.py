"""The question a person is asked, and the fingerprint every answer is bound to.

The two opening sentences are the server's own, built only from values it derived (counts, which
case of Google's documented consequences applies, the Google account); everything Claude or Google
supplied is listed below a heading that says so, one value a line, each shown by `text.show_value`:
every character visible, nothing dropped, a long value as its start, its end and a digest. What is
shown is what is sent: the handler acts on this question's targets, not on the arguments again.

The same words go to the client's dialog, the desktop app's dialog and notification, and the token
text. Google's own help pages are the source of every consequence stated here (docs/asking-a-person.md
cites them); where they are silent the question says nothing.
"""

from __future__ import annotations

import hashlib
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum

from ..agent import protocol
from ..agent.protocol import fingerprint as _fingerprint
from ..properties import verification_id
from ..text import show_value

#: The client's own dialog, gateways such as mcp-hub, and the token text take at most this much.
MAX_ELICIT_BYTES = 4096
VALUES_HEADING = "From the program that asked (such as Claude) or from Google; check them:"
UNKNOWN_ACCOUNT = "the Google account set in this server's settings"
PROPERTY = "Property"
SITEMAP = "Sitemap"
WEBSITE = "Website (all its properties)"


@dataclass(frozen=True)
class Question:
    """One question, and the exact targets a yes to it allows acting on."""

    tool: str
    what: str
    consequence: str
    values: tuple[tuple[str, str], ...]
    targets: tuple[object, ...]
    site: str = ""
    feedpath: str = ""
    owners: tuple[str, ...] = field(default=())  # update_site_owners: the complete list afterwards

    @property
    def fingerprint(self) -> str:
        return _fingerprint(self.tool, list(self.targets))

    @property
    def text(self) -> str:
        lines = [self.what, self.consequence, "", VALUES_HEADING]
        lines += [f"{label}: {value}" for label, value in self.values]
        return "\n".join(lines)

    @property
    def digest(self) -> str:
        """What the person saw: a yes counts only while the question reads the same."""
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()

    @property
    def fits_elicitation(self) -> bool:
        return len(self.text.encode("utf-8")) <= MAX_ELICIT_BYTES

    @property
    def counted_lines(self) -> int:
        """How many of its value lines are changes (update_site_owners); 0 for the others."""
        return sum(1 for label, _ in self.values if label.startswith(("Removed", "Added")))

    def first_changes(self, n: int) -> Question:
        """The same question with only the first `n` change lines (to find how many would fit)."""
        kept: list[tuple[str, str]] = []
        seen = 0
        for label, value in self.values:
            if label.startswith(("Removed", "Added")):
                seen += 1
                if seen > n:
                    continue
            kept.append((label, value))
        return Question(self.tool, self.what, self.consequence, tuple(kept), self.targets, self.site)

    def to_request(
        self,
        request_id: str,
        *,
        client: protocol.ClientInfo,
        requester: protocol.Requester | None,
        wait_s: float,
    ) -> protocol.ApprovalRequest:
        """The question as `approval/request` carries it to the app: the one way it is put on the wire
        (the chain, the screenshots and the UI walk all send it so, so the pictures show what is sent)."""
        return protocol.ApprovalRequest(
            request_id=request_id,
            tool=self.tool,
            what=self.what,
            consequence=self.consequence,
            values=tuple(protocol.Value(label=label, value=value) for label, value in self.values),
            fingerprint=self.fingerprint,
            client=client,
            wait_s=wait_s,
            requester=requester,
        )


def account_words(account: str | None) -> str:
    """The Google account as the question names it: shown like an owner address (ASCII only)."""
    return f"the Google account {show_value(account, ascii_only=True)}" if account else UNKNOWN_ACCOUNT


def website(site: str) -> str:
    """A Site Verification target as a site owner knows it: the domain, or the URL prefix."""
    _kind, ident = verification_id(site)
    return ident


def resource_id(site: str) -> str:
    kind, ident = verification_id(site)
    return f"dns://{ident}" if kind == "INET_DOMAIN" else ident


# --- what Google says about the owners ----------------------------------------------------------


class Ownership(Enum):
    """Which of Google's documented cases applies to this account and this site."""

    OTHERS_REMAIN = "others"  # this account is a verified owner, and others are too
    LAST_OWNER = "last"  # this account is the only verified owner
    NOT_OWNER = "not_owner"  # Google does not list this account as a verified owner
    UNKNOWN = "unknown"  # Google's owner list could not be read


@dataclass(frozen=True)
class OwnerFacts:
    ownership: Ownership
    others: int = 0


def owner_facts(owners: Sequence[str] | None, *, readable: bool) -> OwnerFacts:
    """The case from Google's verified-owner list. Google shows a site's owners only to one of them,
    so a list that could be read means this account is an owner; the others are the rest."""
    if not readable:
        return OwnerFacts(Ownership.NOT_OWNER)
    if not owners:
        return OwnerFacts(Ownership.UNKNOWN)
    others = len(owners) - 1
    return OwnerFacts(Ownership.OTHERS_REMAIN, others) if others else OwnerFacts(Ownership.LAST_OWNER)


def _owners_remain(n: int) -> str:
    return f"{n:,} other verified owner{' remains' if n == 1 else 's remain'}"


# --- the four questions ----------------------------------------------------------------------------
# support.google.com/webmasters/answer/9357768 (Remove a property), /7687465 (Property settings) and
# /7687615 (Managing owners, users, and permissions) are the sources of the consequences below.


def delete_site(site: str, account: str | None, facts: OwnerFacts) -> Question:
    cases = {
        Ownership.OTHERS_REMAIN: f"{_owners_remain(facts.others)}, so nobody else loses access, and this account "
        "can add the property back later without verifying it again.",
        Ownership.LAST_OWNER: "This account is the property's last verified owner: everyone who uses the property "
        "in Search Console loses access to it.",
        Ownership.NOT_OWNER: "This account is not a verified owner of the property, so only its own list of "
        "properties changes; nobody else is affected.",
        Ownership.UNKNOWN: "SearchDesk could not read the property's verified owners from Google. If this account "
        "is the last verified owner, everyone who uses the property in Search Console loses access to it.",
    }
    return Question(
        "delete_site",
        f"This will remove the property below from the Search Console list of {account_words(account)}.",
        cases[facts.ownership],
        ((PROPERTY, show_value(site)),),
        (site,),
        site=site,
    )


def delete_sitemap(site: str, feedpath: str, account: str | None) -> Question:
    # Google's API reference for sitemaps.delete: "Deletes a sitemap from the Sitemaps report. Does not
    # stop Google from crawling this sitemap or the URLs that were previously crawled in the deleted sitemap."
    return Question(
        "delete_sitemap",
        f"This will remove the sitemap below from the Sitemaps report of the property below, for "
        f"{account_words(account)}.",
        "Google may still crawl the sitemap and the pages it listed. It can be submitted again later.",
        ((PROPERTY, show_value(site)), (SITEMAP, show_value(feedpath))),
        (site, feedpath),
        site=site,
        feedpath=feedpath,
    )


def unverify_site(site: str, account: str | None, facts: OwnerFacts) -> Question:
    cases = {
        Ownership.OTHERS_REMAIN: f"{_owners_remain(facts.others)}, so the people who use its properties in "
        "Search Console keep their access. While this account's verification token stays on the website, "
        "Google may make it an owner again.",
        Ownership.LAST_OWNER: "This account is the website's last verified owner: nobody can use its properties "
        "in Search Console until someone verifies ownership again.",
        Ownership.UNKNOWN: "SearchDesk could not read the website's verified owners from Google. If this account "
        "is the last one, nobody can use its properties in Search Console until someone verifies ownership again.",
    }
    return Question(
        "unverify_site",
        f"This will end the verified ownership that {account_words(account)} has of the website below.",
        cases[facts.ownership],
        ((WEBSITE, show_value(website(site))),),
        (resource_id(site),),
        site=site,
    )


# --- owner changes ---------------------------------------------------------------------------------

# Letters that look alike in common fonts, folded to one shape so that two addresses a person would
# read as the same compare equal (Unicode's confusables, cut to what occurs in e-mail addresses).
_LOOKALIKE = str.maketrans(
    {
        "0": "o",
        "1": "l",
        "i": "l",
        "|": "l",
        "5": "s",
        "а": "a",  # Cyrillic
        "е": "e",
        "о": "o",
        "р": "p",
        "с": "c",
        "у": "y",
        "х": "x",
        "і": "l",
        "ј": "j",
        "ѕ": "s",
        "ԁ": "d",
        "ӏ": "l",
        "ο": "o",  # Greek
        "α": "a",
        "ν": "v",
        "ρ": "p",
        "τ": "t",
        "ι": "l",
        "κ": "k",
        "ɡ": "g",  # Latin small script g
        "ı": "l",  # dotless i
    }
)


def reads_like(address: str) -> str:
    """An address folded to how it reads: case, width, accents, invisible characters and look-alike
    letters do not count."""
    folded = unicodedata.normalize("NFKD", address).casefold()
    kept = "".join(ch for ch in folded if unicodedata.category(ch)[0] not in "CMZ")
    return kept.translate(_LOOKALIKE).replace("rn", "m").replace("vv", "w").replace("cl", "d")


def update_site_owners(site: str, current: Sequence[str], new: Sequence[str], account: str | None) -> Question:
    wanted = sorted(set(new))
    removed = sorted(set(current) - set(wanted))
    added = sorted(set(wanted) - set(current))
    removed_look = {reads_like(a) for a in removed}
    added_look = {reads_like(a) for a in added}
    me = account.casefold() if account else None
    removes_self = me is not None and any(a.casefold() == me for a in removed)

    def line(kind: str, address: str, other_side: set[str]) -> tuple[str, str]:
        marks = []
        if me is not None and address.casefold() == me:
            marks.append("the account SearchDesk uses")
        if reads_like(address) in other_side:
            marks.append("reads like an added one" if kind == "Removed" else "reads like a removed one")
        label = f"{kind} ({'; '.join(marks)})" if marks else kind
        return label, show_value(address, ascii_only=True)

    what = (
        f"This will replace the verified owners of the website below, as {account_words(account)}: "
        f"{len(removed):,} removed, {len(added):,} added, {len(wanted):,} in total afterwards."
    )
    sentences = ["Everyone not in the new list loses verified ownership."]
    if removed:
        sentences.append("A removed owner whose verification token stays on the website may get ownership back.")
    if removes_self:
        sentences.append(f"This includes {account_words(account)}, which SearchDesk uses.")
    if removed_look & added_look:
        sentences.append(
            "Addresses marked “reads like” look almost the same as another one here: check them letter by letter."
        )
    values = [(WEBSITE, show_value(website(site)))]
    values += [line("Removed", a, added_look) for a in removed]
    values += [line("Added", a, removed_look) for a in added]
    if not removed and not added:
        values.append(("Change", "none: the list is the same as now"))
    return Question(
        "update_site_owners",
        what,
        " ".join(sentences),
        tuple(values),
        (resource_id(site), wanted),
        site=site,
        owners=tuple(wanted),
    )


# --- who asked ---------------------------------------------------------------------------------------

#: MCP clients whose self-reported names a person would not recognise.
KNOWN_CLIENTS = {"claude-ai": "Claude Desktop", "claude-code": "Claude Code"}
#: Names SDKs use when the program gives none of its own.
UNNAMED_CLIENTS = frozenset({"", "mcp"})


def describe_client(name: str, version: str = "") -> str:
    """Who asked, in the one wording the dialog, the notification and Activity all use: only what the
    program says it is, a known name said plainly (claude-ai: Claude Desktop), an SDK's default name as
    no name at all."""
    if name.strip().casefold() in UNNAMED_CLIENTS:
        return "a program that did not give its name"
    plain = KNOWN_CLIENTS.get(name.strip().casefold(), name)
    return f"a program that says it is {plain}" + (f" (version {version})" if version else "")


def asked_by(name: str, version: str = "") -> str:
    """The line under the values in the app's dialog and notification: who asked, as it says."""
    return f"Asked by {describe_client(name, version)}."
