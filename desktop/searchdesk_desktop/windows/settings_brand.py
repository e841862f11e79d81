"""Settings' brand names: per property, the words people search for the brand by, which Claude's brand
report (how much traffic comes from people looking for you by name) counts as branded.

Each line starts from what the property's domain name suggests (`searchdesk_server.brand.domain_terms`,
the very words the server falls back to), so a person only edits what is wrong. Only a list that differs
from that start is kept: a property nobody edited keeps following its domain name, and the server's
fallback stays the one definition of it. Saved with Settings' Save and written into Claude Desktop's
entry (``GSC_BRAND_TERMS``) with the other settings.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from PySide6.QtWidgets import QGroupBox, QLabel, QLineEdit, QVBoxLayout, QWidget

from searchdesk_server.brand import MAX_TERM_LENGTH, MAX_TERMS, clean_terms, domain_terms
from searchdesk_server.properties import PropertyError, normalise_property

from ..widgets import breakable, clear_layout, error_label, plain_label

TITLE = "Your brand's names, as people search for them"


def words_in(text: str) -> list[str]:
    """The names typed into a line, as written (commas separate them; empty ones dropped)."""
    return [" ".join(part.split()) for part in text.split(",") if part.strip()]


def spelled(site: object) -> str:
    """A property in the server's spelling ('' for one the server would refuse: an empty or damaged one)."""
    try:
        return normalise_property(site)  # type: ignore[arg-type]
    except (PropertyError, TypeError, AttributeError):
        return ""


def kept_sites(sites: Iterable[str], kept: Mapping[str, object]) -> dict[str, tuple[str, ...]]:
    """The properties to show, each with its kept names (none: follow the domain name): those given (the
    accounts' own, the default, the allowed ones), then any with a kept list, each once, in the server's
    spelling; one the server would refuse is left out."""
    names = {spelled(site): clean_terms(words) if isinstance(words, list) else () for site, words in kept.items()}
    out: dict[str, tuple[str, ...]] = {}
    for prop in map(spelled, [*sites, *kept]):
        if prop and prop not in out:
            out[prop] = names.get(prop, ())
    return out


class BrandBox(QGroupBox):
    """One line per property: the brand's names, comma separated, starting from the domain name's."""

    def __init__(self, edited: Callable[[], object]) -> None:
        """`edited`: called on every keystroke in a line (Settings checks the form again)."""
        super().__init__(TITLE)
        self._edited = edited
        self.setObjectName("brand")
        column = QVBoxLayout(self)
        column.addWidget(
            plain_label(
                "When Claude works out how much of your traffic comes from people searching for you by name, "
                "a search counts as yours when it contains one of these names. Each property starts with "
                "its domain name; add the names people really type (your shop's name, a product, a common "
                "misspelling), separated by commas.",
                selectable=False,
            )
        )
        #: A property's name above its line, the whole width each (a long address wraps, never clips).
        self.rows = QVBoxLayout()
        column.addLayout(self.rows)
        self.none_yet = plain_label(
            "After Check it works (main window, step 3), your properties are listed here.", selectable=False
        )
        column.addWidget(self.none_yet)
        self.error = error_label()
        column.addWidget(self.error)
        #: Each property's line, in the server's spelling of the property.
        self.fields: dict[str, QLineEdit] = {}

    def show_sites(self, sites: Iterable[str], kept: Mapping[str, object], *, keep_typed: bool = False) -> None:
        """A line per property, holding its kept names, else its domain name's; with `keep_typed` (a check
        just listed the properties again), what the person typed and has not saved yet stays."""
        typed = {site: field.text() for site, field in self.fields.items()} if keep_typed else {}
        clear_layout(self.rows)
        self.fields = {}
        for site, words in kept_sites(sites, kept).items():
            field = QLineEdit()
            field.setObjectName("brandTerms")
            seed = domain_terms(site)
            field.setPlaceholderText(", ".join(seed) if seed else "Your brand's names, separated by commas")
            field.setText(typed.get(site, ", ".join(words or seed)))
            label: QLabel = plain_label(breakable(site), selectable=False)
            label.setBuddy(field)
            row = QWidget()
            stack = QVBoxLayout(row)
            stack.setContentsMargins(0, 0, 0, 0)
            stack.setSpacing(2)
            stack.addWidget(label)
            stack.addWidget(field)
            self.rows.addWidget(row)
            field.textChanged.connect(self._edited)
            self.fields[site] = field
        self.none_yet.setVisible(not self.fields)

    def chosen(self) -> dict[str, list[str]]:
        """The lists to keep: each line that says something other than its domain name's names. An
        emptied line goes back to the domain name's (the server's fallback), as its grey text says."""
        out: dict[str, list[str]] = {}
        for site, field in self.fields.items():
            words = clean_terms(words_in(field.text()))
            if words and words != clean_terms(domain_terms(site)):
                out[site] = list(words)
        return out

    def problem(self) -> str:
        """What is wrong with a line, for a person ('' when nothing is), shown below the lines."""
        for site, field in self.fields.items():
            words = words_in(field.text())
            if len(words) > MAX_TERMS:
                return f"{site}: give at most {MAX_TERMS} names (there are {len(words)})."
            if any(len(word) > MAX_TERM_LENGTH for word in words):
                return f"{site}: each name can be at most {MAX_TERM_LENGTH} characters long."
        return ""
