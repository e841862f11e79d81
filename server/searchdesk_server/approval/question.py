"""The question a person is asked, and the fingerprint every answer is bound to.

The two opening sentences are the server's own, built only from values it derived (counts,
the tool); everything the caller or Google supplied is listed below a heading that says so,
one value a line, flattened and cut. The same words go to the client's dialog, the desktop
app's dialog and notification, and the token text. The whole stays under 4 KiB.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ..agent.protocol import fingerprint as _fingerprint
from ..properties import verification_id
from ..text import flatten

MAX_QUESTION_BYTES = 4096
VALUE_CHARS = 200
VALUES_HEADING = "Supplied by the caller or by Google (check them; they are not SearchDesk's words):"


@dataclass(frozen=True)
class Question:
    tool: str
    what: str
    consequence: str
    values: tuple[tuple[str, str], ...]
    targets: tuple[object, ...] = field(default=())

    @property
    def fingerprint(self) -> str:
        return _fingerprint(self.tool, list(self.targets))

    @property
    def text(self) -> str:
        lines = [self.what, self.consequence, "", VALUES_HEADING]
        lines += [f"{label}: {value}" for label, value in self.values]
        return "\n".join(lines)


def _values(pairs: Sequence[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    """Flatten every value and stop adding lines before the question would pass 4 KiB."""
    out: list[tuple[str, str]] = []
    budget = MAX_QUESTION_BYTES - 1200  # the sentences and heading are at most this long
    used = 0
    for i, (label, value) in enumerate(pairs):
        flat = flatten(value, VALUE_CHARS) or "(empty)"
        size = len(f"{label}: {flat}\n".encode())
        if used + size > budget:
            out.append(("…", f"and {len(pairs) - i} more not shown"))
            break
        out.append((label, flat))
        used += size
    return tuple(out)


def delete_site(site: str) -> Question:
    return Question(
        "delete_site",
        "This will delete the Search Console property below from this account.",
        "Its performance history (about 16 months) goes with it and adding it again starts empty; "
        "export the data first (query_search_analytics) if it may be needed.",
        _values([("Property", site)]),
        (site,),
    )


def delete_sitemap(site: str, feedpath: str) -> Question:
    return Question(
        "delete_sitemap",
        "This will delete the sitemap below from the Search Console property below.",
        "Its submission history and error report are lost; submit_sitemap can add the sitemap again, starting fresh.",
        _values([("Property", site), ("Sitemap", feedpath)]),
        (site, feedpath),
    )


def resource_id(site: str) -> str:
    kind, ident = verification_id(site)
    return f"dns://{ident}" if kind == "INET_DOMAIN" else ident


def unverify_site(site: str) -> Question:
    return Question(
        "unverify_site",
        "This will remove this account's verified ownership of the site below.",
        "Every Search Console property of that site drops to no access (403) for this account and the "
        "Indexing API stops working for it; getting it back means placing a verification token again.",
        _values([("Site", site)]),
        (resource_id(site),),
    )


def update_site_owners(site: str, current: Sequence[str], new: Sequence[str], account: str | None) -> Question:
    wanted = sorted(set(new))
    removed = sorted(set(current) - set(wanted))
    added = sorted(set(wanted) - set(current))
    what = (
        f"This will replace the verified owners of the site below: {len(removed)} removed, "
        f"{len(added)} added, {len(wanted)} in total afterwards."
    )
    consequence = "Everyone not in the new list loses verified ownership."
    if account and account in current and account not in wanted:
        consequence += " The account SearchDesk is using would remove itself and lose access to this site."
    pairs = [("Site", site)]
    pairs += [("Removed", r) for r in removed]
    pairs += [("Added", a) for a in added]
    if not removed and not added:
        pairs.append(("Change", "none: the list is the same as now"))
    return Question("update_site_owners", what, consequence, _values(pairs), (resource_id(site), wanted))
