"""The question a person is asked, and the fingerprint every answer is bound to.

The two opening sentences are the server's own, built only from values it derived (counts, which
case of Google's documented consequences applies, the Google account); everything Claude or Google
supplied is listed below a heading that says so, one value a line, each shown by `text.show_url` (an
address: hosts in ASCII, a look-alike marked) or `text.escaped`: every character visible, nothing dropped,
a long value as its start, its end and a digest (`text.shorten`), and the app given every value whole. What
is shown is what is sent: the handler acts on this question's targets, not on the arguments again.

The same words go to the client's dialog, the desktop app's dialog and notification, and the token
text. Google's own help pages are the source of every consequence stated here (docs/asking-a-person.md
cites them); where they are silent the question says nothing.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum

from ..agent import protocol
from ..agent.protocol import fingerprint as _fingerprint
from ..labels import ACTIONS as ACTIONS
from ..labels import PROPERTY as PROPERTY  # re-exported: the questions name their values so
from ..labels import SITEMAP as SITEMAP
from ..labels import action_name as action_name
from ..mcp_client import describe_client as describe_client
from ..properties import verification_id
from ..text import escaped, plural, reads_like, shorten, show_url, show_value

#: The client's own dialog, gateways such as mcp-hub, and the token text take at most this much.
MAX_ELICIT_BYTES = 4096
VALUES_HEADING = "From the program that asked (such as Claude) or from Google; check them:"
UNKNOWN_ACCOUNT = "the Google account set in this server's settings"
#: The label of a Domain property's Site Verification target; a URL prefix is labelled PROPERTY: it is one
#: property, and the domain is every property in it (its verified owners own them all).
DOMAIN = "Domain (all its properties)"
#: The label under which delete_site shows the domain through which this account owns the property.
OWNED_DOMAIN = "Domain this account owns"


#: The words every "this account is the last verified owner" consequence uses (delete_site, unverify_site).
LAST_OWNER_WORDS = "last verified owner:"
#: The headings the app's dialog sets, with a warning icon, over a question where people lose access.
LOSES_ACCESS = "Everyone loses access"
ENDS_OWNERSHIP = "This account stops being a verified owner"
OWNERS_LOSE = "Removed owners lose verified ownership"


def loss_heading(tool: str, consequence: str, labels: Sequence[str]) -> str:
    """The heading over a question where people lose access, or "" for one where nobody does.

    Derived from the server's own words (the consequence and the values' labels, which the digest a yes
    is bound to covers), not from a field beside them: a heading can never claim what the words do not
    say, and both programs read it from this one place. The last verified owner's case first, since it
    is the one where everyone loses access."""
    if LAST_OWNER_WORDS in consequence:
        return LOSES_ACCESS
    if tool == "unverify_site":
        return ENDS_OWNERSHIP
    if tool == "update_site_owners" and any(label.startswith("Removed") for label in labels):
        return OWNERS_LOSE
    return ""


def value_line(label: str, value: str) -> str:
    """One value under the question, as every place that shows it writes it."""
    return f"{label}: {value}"


def question_lines(what: str, consequence: str, values: Sequence[tuple[str, str]]) -> list[str]:
    """The question's lines in the one order everyone shows them: the server's two sentences, a blank line,
    the heading that says where the values come from, then one value a line. The client's dialog, the token
    text, the app's notification and its main window all lay the question out with this."""
    return [what, consequence, "", VALUES_HEADING, *(value_line(label, value) for label, value in values)]


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
    #: Each value whole, in the order of `values` (`text.escaped`, `text.show_url`): what the app's dialog
    #: shows, where `values` holds it shortened. Empty: every value is shown whole already.
    wholes: tuple[str, ...] = field(default=())
    #: The notification form (`note_form`), written beside the question from the same facts; None: none.
    notification: protocol.NotificationForm | None = None

    def __post_init__(self) -> None:
        if self.wholes and len(self.wholes) != len(self.values):
            raise ValueError("a question has one whole value for each value, or none")

    @property
    def fingerprint(self) -> str:
        return _fingerprint(self.tool, list(self.targets))

    @property
    def text(self) -> str:
        return "\n".join(question_lines(self.what, self.consequence, self.values))

    @property
    def digest(self) -> str:
        """What the person saw: a yes counts only while the question reads the same. One digest for every
        binding (the token, the sealed request state, approval/status and the app's book): the one the
        app computes from the request it received (`protocol.words_digest`, over the values as shown)."""
        form = None if self.notification is None else self.notification.to_json()
        return protocol.words_digest(self.what, self.consequence, self.values, form)

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
        wholes: list[str] = []
        seen = 0
        for (label, value), whole in zip(self.values, self._wholes, strict=True):
            if label.startswith(("Removed", "Added")):
                seen += 1
                if seen > n:
                    continue
            kept.append((label, value))
            wholes.append(whole)
        # Everything else as it is (the notification form among it): the size is measured as sent.
        return dataclasses.replace(self, values=tuple(kept), wholes=tuple(wholes))

    @property
    def _wholes(self) -> tuple[str, ...]:
        return self.wholes or tuple(value for _, value in self.values)

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
            values=tuple(
                protocol.Value(label=label, value=value, whole=None if whole == value else whole)
                for (label, value), whole in zip(self.values, self._wholes, strict=True)
            ),
            fingerprint=self.fingerprint,
            client=client,
            wait_s=wait_s,
            requester=requester,
            notification=self.notification,
        )


#: The mark of an address whose host is a look-alike (`url_line`), and what the consequence then says.
LOOKS_LIKE = "looks like"
LOOKS_LIKE_WARNING = (
    "An address marked “looks like” is written with letters of other alphabets that look like the ones it "
    "resembles, so it is another address: check it letter by letter."
)


def url_line(label: str, url: str) -> tuple[str, str]:
    """A property, sitemap or website line, as (label, the value whole): the address as `text.show_url`
    shows it (hosts in ASCII), a look-alike host marked in the label as the owners' "reads like" is."""
    shown = show_url(url)
    if shown.looks_like is None:
        return label, shown.text
    marked = f"{label} ({LOOKS_LIKE} {shown.looks_like}, but is not)"
    if not shown.looks_like or len(marked) > protocol.MAX_LABEL_CHARS:
        marked = f"{label} ({LOOKS_LIKE} another address, but is not)"
    return marked, shown.text


def looks_like_warning(lines: Sequence[tuple[str, str]]) -> list[str]:
    """The sentence a consequence carries when an address in `lines` is marked "looks like" (`url_line`)."""
    return [LOOKS_LIKE_WARNING] if any(f"({LOOKS_LIKE} " in label for label, _ in lines) else []


def shown_values(lines: Sequence[tuple[str, str]]) -> tuple[tuple[tuple[str, str], ...], tuple[str, ...]]:
    """A question's `values` and `wholes` from its lines (label, the value whole): each value as the words
    hold it (`text.shorten`: a long one as its start, its end and a digest), and each whole for the app."""
    return tuple((label, shorten(whole)) for label, whole in lines), tuple(whole for _, whole in lines)


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


def is_domain(site: str) -> bool:
    """A Domain property (sc-domain:): Google verifies it only by a DNS record, and it holds every
    property of the domain; anything else is one URL-prefix property."""
    return verification_id(site)[0] == "INET_DOMAIN"


def _noun(site: str) -> str:
    return "domain" if is_domain(site) else "property"


def _label(site: str) -> str:
    return DOMAIN if is_domain(site) else PROPERTY


def _token_place(site: str) -> str:
    """Where a verification token stays. A domain's is a TXT record in its DNS ("For domains, only 'DNS'
    may be used", the Site Verification API); a URL prefix's is on the website, or also a DNS record
    (support.google.com/webmasters/answer/9357768: "if you used domain verification, you must remove
    your TXT verification entry from the domain host")."""
    return "in the domain's DNS records" if is_domain(site) else "on the website or in its domain's DNS records"


# --- what Google says about the owners ----------------------------------------------------------


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


def _owners_remain(n: int) -> str:
    return f"{n:,} other verified owner{' remains' if n == 1 else 's remain'}"


# --- the four questions ----------------------------------------------------------------------------
# support.google.com/webmasters/answer/9357768 (Remove a property), /7687465 (Property settings) and
# /7687615 (Managing owners, users, and permissions) are the sources of the consequences below, with the
# Site Verification API's reference (developers.google.com/site-verification/v1/webResource, /update and
# /delete) for who its owner lists name and what a change of owners can do; docs/asking-a-person.md cites them.


def _asked(
    tool: str,
    what: str,
    sentences: Sequence[str],
    lines: Sequence[tuple[str, str]],
    targets: tuple[object, ...],
    site: str,
    notification: protocol.NotificationForm | None,
    *,
    feedpath: str = "",
    owners: tuple[str, ...] = (),
) -> Question:
    """A question from what it says and the lines it shows, built one way for all four: each value as the
    words hold it with its whole beside (`shown_values`), and the consequence ending with the warning when
    an address reads like another (`looks_like_warning`), so no question can leave either out."""
    values, wholes = shown_values(lines)
    return Question(
        tool,
        what,
        " ".join([*sentences, *looks_like_warning(lines)]),
        values,
        targets,
        site=site,
        feedpath=feedpath,
        owners=owners,
        wholes=wholes,
        notification=notification,
    )


def delete_site(site: str, account: str | None, facts: OwnerFacts) -> Question:
    cases = {
        Ownership.OTHERS_REMAIN: f"{_owners_remain(facts.others)}, so nobody else loses access, and this account "
        "can add the property back later without verifying it again.",
        Ownership.LAST_OWNER: "This account is the property's last verified owner: everyone who uses the property "
        "in Search Console loses access to it.",
        Ownership.NOT_OWNER: "This account is not a verified owner of the property, so only its own list of "
        "properties changes; nobody else is affected.",
        # Only what Google documents: the ownership through the domain (the Site Verification API's
        # "indirect owners") and what 9357768 says of every removal; not what it means for anyone else.
        Ownership.THROUGH_DOMAIN: "Google lists this account as a verified owner of the domain below, not of "
        "the property itself: it owns the property through that domain. It will no longer get notifications "
        "about the property; its message history is kept.",
        Ownership.UNKNOWN: "SearchDesk could not read the property's verified owners from Google. If this account "
        "is the last verified owner, everyone who uses the property in Search Console loses access to it.",
    }
    lines = [url_line(PROPERTY, site), *other_owner_lines(facts)]
    if facts.ownership is Ownership.THROUGH_DOMAIN:
        lines.append(url_line(OWNED_DOMAIN, facts.domain))
    return _asked(
        "delete_site",
        f"This will remove the property below from the Search Console list of {account_words(account)}.",
        [cases[facts.ownership]],
        lines,
        (site,),
        site,
        _delete_site_note(lines, account, facts),
    )


def delete_sitemap(site: str, feedpath: str, account: str | None) -> Question:
    # Google's API reference for sitemaps.delete: "Deletes a sitemap from the Sitemaps report. Does not
    # stop Google from crawling this sitemap or the URLs that were previously crawled in the deleted sitemap."
    lines = [url_line(PROPERTY, site), url_line(SITEMAP, feedpath)]
    return _asked(
        "delete_sitemap",
        f"This will remove the sitemap below from the Sitemaps report of the property below, for "
        f"{account_words(account)}.",
        ["Google may still crawl the sitemap and the pages it listed. It can be submitted again later."],
        lines,
        (site, feedpath),
        site,
        _delete_sitemap_note(lines, account),
        feedpath=feedpath,
    )


def unverify_site(site: str, account: str | None, facts: OwnerFacts) -> Question:
    # A domain's owners keep every property in it; a URL prefix is one property (7687615: "A property
    # must have at least one verified owner, or no users will have access to the property").
    noun = _noun(site)
    users = "its properties" if is_domain(site) else "the property"
    nobody = f"nobody can use {'the Domain property' if is_domain(site) else 'the property'} in Search Console"
    cases = {
        Ownership.OTHERS_REMAIN: f"{_owners_remain(facts.others)}, so the people who use {users} in Search Console "
        f"keep their access. While this account's verification token stays {_token_place(site)}, Google may make "
        "it an owner again.",
        Ownership.LAST_OWNER: f"This account is the {noun}'s last verified owner: {nobody} until someone verifies "
        "ownership again.",
        Ownership.UNKNOWN: f"SearchDesk could not read the {noun}'s verified owners from Google. If this account is "
        f"the last one, {nobody} until someone verifies ownership again.",
    }
    lines = [url_line(_label(site), website(site)), *other_owner_lines(facts)]
    return _asked(
        "unverify_site",
        f"This will end the verified ownership that {account_words(account)} has of the {noun} below.",
        [cases[facts.ownership]],
        lines,
        (resource_id(site),),
        site,
        _unverify_note(lines, account, facts),
    )


# --- owner changes ---------------------------------------------------------------------------------


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
        return label, escaped(address, ascii_only=True)

    what = (
        f"This will replace the verified owners of the {_noun(site)} below, as {account_words(account)}: "
        f"{len(removed):,} removed, {len(added):,} added, {len(wanted):,} in total afterwards."
    )
    sentences = ["Everyone not in the new list loses verified ownership."]
    if removed:
        sentences.append(f"A removed owner whose verification token stays {_token_place(site)} may get ownership back.")
    if removes_self:
        # developers.google.com/site-verification/v1/webResource/update: "You cannot use this method to
        # unverify the authenticated user's ownership of a site. Use the delete method instead."
        sentences.append(
            f"This includes {account_words(account)}, which SearchDesk uses, but Google says a change of owners "
            "cannot end the verified ownership of the account making it: that takes a separate request to end it."
        )
    if removed_look & added_look:
        sentences.append(
            "Addresses marked “reads like” look almost the same as another one here: check them letter by letter."
        )
    lines = [url_line(_label(site), website(site))]
    lines += [line("Removed", a, added_look) for a in removed]
    lines += [line("Added", a, removed_look) for a in added]
    if not removed and not added:
        lines.append(("Change", "none: the list is the same as now"))
    return _asked(
        "update_site_owners",
        what,
        sentences,
        lines,
        (resource_id(site), wanted),
        site,
        _owners_note(lines, account, len(removed), len(added), removes_self),
        owners=tuple(wanted),
    )


# --- the notification form ---------------------------------------------------------------------------
# One form of every question, written beside it from the same facts: what a notification shows while its
# Approve button is visible. The facts a person decides on (the action, the account once in the subtitle,
# every target whole, the consequence that matters) are laid out so that the common cases fit the smallest
# presentation the app holds figures for: a macOS banner's one subtitle line and two body lines (issue 36);
# a line that is only good to know (it can be submitted again, a token may make you an owner again) is
# added only where even that banner has room, so one form serves every system. Counted at about 40
# characters a line (a Windows toast is 364 px wide, Microsoft Learn, "App notification content"); the app
# measures the form against each system's figures (desktop approval.notifications.FITS). A target is never
# shortened here: a form that cannot hold every fact, or whose question carries a warning it cannot say in
# a line, is marked `show_question` with why.

Notification = protocol.NotificationForm
#: Lines of about this many characters (Microsoft Learn: the toast is 364 px wide).
NOTE_LINE_CHARS = 40
#: The subtitle and the body together, in lines of NOTE_LINE_CHARS: the Windows toast's 4.
NOTE_LINES = 4
#: The body's lines in the smallest presentation (a macOS banner: a subtitle line of its own, then two lines
#: of body): a good-to-know line is added only while the body stays within it.
NOTE_BODY_LINES = 2
#: Why Approve is not offered, in a few words (the notification shows it beside "Show the question").
HOLD_LOOKS_LIKE = "An address looks like another one."
HOLD_READS_LIKE = "Two addresses look almost the same."
HOLD_TOO_LONG = "An address is too long to show here."
HOLD_SEVERAL = "Several owner changes."
HOLD_SELF = "The change includes this account."
#: The consequences the form carries: short forms of the question's, from the same case, each one line.
NOTE_LAST_OWNER = "Last verified owner: all lose access."
#: unverify_site's last owner: the property unusable until someone verifies ownership again.
NOTE_LAST_OWNER_ENDS = "Last verified owner: nobody can use it."
NOTE_UNKNOWN = "Owners unreadable: if you are the last, everyone loses access."
NOTE_NOT_OWNER = "Only this account's list changes."
NOTE_SUBMIT_AGAIN = "It can be submitted again."


def _note_rows(text: str) -> int:
    return max(1, -(-len(text) // NOTE_LINE_CHARS))


def _note_account(account: str | None) -> str:
    return f"as {show_value(account, ascii_only=True)}" if account else "as the account in SearchDesk's settings"


def _others_keep(n: int) -> str:
    return f"{plural(n, 'other verified owner')} keep{'s' if n == 1 else ''} access."


def note_form(tool: str, subtitle: str, lines: Sequence[str], labels: Sequence[str], hold: str = "") -> Notification:
    """The form: the action as its title, `subtitle` and `lines` (every target whole) as its text. Marked
    `show_question` when the question carries a warning the form cannot say (a "looks like" host, a
    "reads like" owner: `labels` are the question's value labels), when `hold` says why, or when a line
    would not fit the toast whole (never shortened: the question is shown instead)."""
    if not hold and any(f"({LOOKS_LIKE} " in label for label in labels):
        hold = HOLD_LOOKS_LIKE
    if not hold and any("reads like" in label for label in labels):
        hold = HOLD_READS_LIKE
    if not hold and any(_note_rows(line) > NOTE_LINES for line in (subtitle, *lines)):
        hold = HOLD_TOO_LONG
    if hold:  # the lines still say what is asked, as far as the wire's bounds take them whole
        room = protocol.MAX_NOTE_BODY_CHARS - len(hold) - 1
        kept = [line for line in lines if len(line) <= protocol.MAX_NOTE_TITLE_CHARS]
        while kept and len("\n".join(kept)) > room:
            kept.pop()
        lines = [*kept, hold][: protocol.MAX_NOTE_LINES]
        subtitle = subtitle if len(subtitle) <= protocol.MAX_NOTE_TITLE_CHARS else ""
    return Notification(title=action_name(tool), subtitle=subtitle, body="\n".join(lines), show_question=hold)


def _with_room(lines: list[str], subtitle: str, *optional: str) -> list[str]:
    """`lines`, then each optional consequence (one that is good to know, never a warning, and only ever
    one that makes the action sound less final) while the form still fits the smallest presentation: the
    body within NOTE_BODY_LINES (a macOS banner) and the subtitle and body within the toast's NOTE_LINES."""
    out = list(lines)
    for line in optional:
        body = sum(_note_rows(x) for x in (*out, line))
        if body <= NOTE_BODY_LINES and _note_rows(subtitle) + body <= NOTE_LINES:
            out.append(line)
    return out


def _labels(lines: Sequence[tuple[str, str]]) -> list[str]:
    return [label for label, _ in lines]


def _delete_site_note(lines: Sequence[tuple[str, str]], account: str | None, facts: OwnerFacts) -> Notification:
    subtitle = _note_account(account)
    domain = next((whole for label, whole in lines if label.startswith(OWNED_DOMAIN)), "")
    cases = {
        Ownership.OTHERS_REMAIN: _others_keep(facts.others),
        Ownership.LAST_OWNER: NOTE_LAST_OWNER,
        Ownership.NOT_OWNER: NOTE_NOT_OWNER,
        Ownership.THROUGH_DOMAIN: f"Owned through {domain}",
        Ownership.UNKNOWN: NOTE_UNKNOWN,
    }
    body = [lines[0][1], cases[facts.ownership]]
    return note_form("delete_site", subtitle, body, _labels(lines))


def _delete_sitemap_note(lines: Sequence[tuple[str, str]], account: str | None) -> Notification:
    """The sitemap on one line and its property on the next (the title says it is a sitemap)."""
    subtitle = _note_account(account)
    prop, sitemap = lines[0][1], lines[1][1]
    # "in" says which line is the property, where it takes no line more (a long domain's name: just the name).
    where = f"in {prop}" if _note_rows(f"in {prop}") == _note_rows(prop) else prop
    body = _with_room([sitemap_in(prop, sitemap), where], subtitle, NOTE_SUBMIT_AGAIN)
    return note_form("delete_sitemap", subtitle, body, _labels(lines))


def sitemap_in(prop: str, sitemap: str) -> str:
    """The sitemap as the notification names it beside its property (both as the question shows them):
    its path alone when it is on the URL-prefix property's own scheme and host, which the next line names,
    so the two lines still read as the whole address; else the whole address."""
    if prop.startswith(("http://", "https://")) and " " not in prop and " " not in sitemap:
        origin = prop[: prop.find("/", prop.find("://") + 3) + 1 or len(prop)]
        if origin.endswith("/") and sitemap.startswith(origin):
            return sitemap[len(origin) - 1 :]
    return sitemap


def _unverify_note(lines: Sequence[tuple[str, str]], account: str | None, facts: OwnerFacts) -> Notification:
    subtitle = _note_account(account)
    cases = {
        Ownership.OTHERS_REMAIN: _others_keep(facts.others),
        Ownership.LAST_OWNER: NOTE_LAST_OWNER_ENDS,
        Ownership.UNKNOWN: "Owners unreadable: if you are the last, nobody can use it.",
    }
    body = [lines[0][1], cases.get(facts.ownership, NOTE_UNKNOWN)]
    if facts.ownership is Ownership.OTHERS_REMAIN:
        body = _with_room(body, subtitle, "Its token may make you an owner again.")
    return note_form("unverify_site", subtitle, body, _labels(lines))


def _owners_note(
    lines: Sequence[tuple[str, str]], account: str | None, removed: int, added: int, removes_self: bool
) -> Notification:
    """A single change (one removed, added or replaced) named whole; several, or one that includes this
    account (which Google says a change of owners cannot remove), only with the whole question."""
    hold = HOLD_SEVERAL if removed > 1 or added > 1 else HOLD_SELF if removes_self else ""
    changes = [f"{label.split(' (')[0]}: {whole}" for label, whole in lines[1:]]
    if not removed and not added:
        changes = ["No change: the list stays the same."]
    return note_form("update_site_owners", _note_account(account), [lines[0][1], *changes], _labels(lines), hold)


# --- who asked ---------------------------------------------------------------------------------------


def asked_by(name: str, version: str = "") -> str:
    """The line under the values in the app's dialog and notification: who asked, as it says."""
    return f"Asked by {describe_client(name, version)}."
