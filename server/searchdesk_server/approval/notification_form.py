"""The notification form of a question: what a notification shows while its Approve button is visible,
written beside the question from the same facts (question.py builds each tool's), and measured so that
one form serves every system.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..agent import protocol
from ..labels import action_name
from ..text.display import show_value
from ..text.phrases import plural
from .addresses import LOOKS_LIKE

# One form of every question, written beside it from the same facts: what a notification shows while its
# Approve button is visible. The facts a person decides on (the action, the account once in the subtitle,
# every target whole, the consequence that matters) are laid out so that the common cases fit the smallest
# presentation the app holds figures for: a macOS banner's one subtitle line and two body lines (issue 36);
# a line that is only good to know (it can be submitted again, a token may make you an owner again) is
# added only where even that banner has room, so one form serves every system. Counted at about 40
# characters a line (a Windows toast is 364 px wide, Microsoft Learn, "App notification content"); the app
# measures the form against each system's figures (desktop approval.notification_question.FITS). A target is never
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


def note_rows(text: str) -> int:
    return max(1, -(-len(text) // NOTE_LINE_CHARS))


def note_account(account: str | None) -> str:
    return f"as {show_value(account, ascii_only=True)}" if account else "as the account in SearchDesk's settings"


def others_keep(n: int) -> str:
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
    if not hold and any(note_rows(line) > NOTE_LINES for line in (subtitle, *lines)):
        hold = HOLD_TOO_LONG
    if hold:  # the lines still say what is asked, as far as the wire's bounds take them whole
        room = protocol.MAX_NOTE_BODY_CHARS - len(hold) - 1
        kept = [line for line in lines if len(line) <= protocol.MAX_NOTE_TITLE_CHARS]
        while kept and len("\n".join(kept)) > room:
            kept.pop()
        lines = [*kept, hold][: protocol.MAX_NOTE_LINES]
        subtitle = subtitle if len(subtitle) <= protocol.MAX_NOTE_TITLE_CHARS else ""
    return Notification(title=action_name(tool), subtitle=subtitle, body="\n".join(lines), show_question=hold)


def with_room(lines: list[str], subtitle: str, *optional: str) -> list[str]:
    """`lines`, then each optional consequence (one that is good to know, never a warning, and only ever
    one that makes the action sound less final) while the form still fits the smallest presentation: the
    body within NOTE_BODY_LINES (a macOS banner) and the subtitle and body within the toast's NOTE_LINES."""
    out = list(lines)
    for line in optional:
        body = sum(note_rows(x) for x in (*out, line))
        if body <= NOTE_BODY_LINES and note_rows(subtitle) + body <= NOTE_LINES:
            out.append(line)
    return out


def value_labels(lines: Sequence[tuple[str, str]]) -> list[str]:
    return [label for label, _ in lines]


def sitemap_in(prop: str, sitemap: str) -> str:
    """The sitemap as the notification names it beside its property (both as the question shows them):
    its path alone when it is on the URL-prefix property's own scheme and host, which the next line names,
    so the two lines still read as the whole address; else the whole address."""
    if prop.startswith(("http://", "https://")) and " " not in prop and " " not in sitemap:
        origin = prop[: prop.find("/", prop.find("://") + 3) + 1 or len(prop)]
        if origin.endswith("/") and sitemap.startswith(origin):
            return sitemap[len(origin) - 1 :]
    return sitemap
