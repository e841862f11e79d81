"""The settings that reach the server: read-only, tool groups, default property, allowed properties,
each property's brand names (`settings_brand`); and, with several Google accounts, which of them
Claude may use.

They are saved in the app's settings and written into SearchDesk's entry in Claude Desktop's
settings file as the server's variables (``GSC_READ_ONLY``, ``GSC_ALLOW_TOOLS``, ``GSC_SITE_URL``,
``GSC_ALLOWED_SITES``, ``GSC_BRAND_TERMS``). Properties are checked with the server's own rules
(``normalise_property``), so what is saved here is what the server accepts; mistakes are shown beside
the field, never saved.
The accounts Claude may use stay in the app (it answers the server for them), so they take effect
at once, without restarting Claude Desktop. So does the record of changes: how long it is kept (saved
with the rest) and Clear the record (at once, after a question that says what it does); the removals
themselves are `keeping`'s, on the core's worker.

The default property is picked from the properties the accounts listed at the last check (typing one
still works), and one none of the accounts Claude may use could see is flagged with what to do. Close,
Escape and the window's X ask before unsaved changes are lost; a message that appears is scrolled
into view, and the outcome of Save stands outside what scrolls, so none is cut off on a small screen.

Each section is a box of its own that builds its fields (`settings_sections`: the tools, the accounts,
the properties; `settings_brand`, `settings_record`, the archive's and the coverage watch's boxes), as
the main window's steps are; this window lays them out, checks them together and saves them.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QLabel,
    QMessageBox,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from ..claude import config_file as cc
from ..core import Core
from ..help import HelpButton
from ..keeping import record_keeper as keeping
from ..titles import title
from ..updates import checker as update_check
from ..widgets import FlowLayout, error_label, fit_to_screen, page_column, plain_label, scrolling, set_error
from .archive import ArchiveBox, ask_keep_or_delete
from .coverage import CoverageBox
from .coverage import ask_keep_or_delete as ask_keep_or_delete_watch
from .settings_brand import BrandBox
from .settings_form import Parsed, ask_choice, ask_yes, parse_form, unseen_warning, where_settings_go
from .settings_record import RecordBox
from .settings_sections import AccountsBox, PropertiesBox, ToolsBox


class SettingsWindow(QDialog):
    """Edits the settings; Save writes them to the app's settings and to Claude Desktop's entry (the
    accounts Claude may use: to the app alone)."""

    def __init__(self, core: Core, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.core = core
        self.setWindowTitle(title(core.demo, "Settings"))
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        content, layout = page_column(core.demo, "What Claude can do with SearchDesk", 1.25)
        layout.addWidget(
            plain_label(
                "These settings reach SearchDesk through Claude Desktop. After saving, quit "
                "Claude Desktop fully and open it again.",
                selectable=False,
            )
        )
        self.read_only = QCheckBox("Read-only: Claude can read your data but cannot change anything")
        layout.addWidget(self.read_only)
        self._add_fields(layout)
        self._add_kept_here(layout, core)
        layout.addStretch(1)
        self.page: QScrollArea = scrolling(content)
        outer.addWidget(self.page, 1)
        self._add_footer(outer)
        fit_to_screen(self, 640, 720)

        self.all_tools.toggled.connect(self._all_tools_toggled)
        for box in self.group_boxes.values():
            box.toggled.connect(self.validate)
        self.site.textChanged.connect(self.validate)
        self.allowed.textChanged.connect(self.validate)
        self.save_button.clicked.connect(self.save)
        self.close_button.clicked.connect(self.close)
        core.accounts.changed.connect(self._show_accounts)
        core.check_done.connect(self._check_done)
        #: Asks the person a yes/no question (tests answer for them).
        self.ask: Callable[[QMessageBox], bool] = ask_yes
        #: Asks a question with several answers (unsaved changes: Save, Discard, Keep editing).
        self.choose: Callable[[QMessageBox], QMessageBox.StandardButton] = ask_choice
        self._saved: dict[str, object] = {}
        self.load()

    def _add_fields(self, layout: QVBoxLayout) -> None:
        """The sections whose fields Save writes (`settings_sections`, `settings_brand`), each field kept
        under the window's own name for it."""
        self.tools_box = ToolsBox()
        self.all_tools = self.tools_box.all_tools
        self.group_boxes = self.tools_box.group_boxes
        self.groups_error = self.tools_box.groups_error
        layout.addWidget(self.tools_box)
        self.accounts_box = AccountsBox()
        self.account_boxes: dict[str, QCheckBox] = {}
        self.accounts_error = self.accounts_box.accounts_error
        layout.addWidget(self.accounts_box)
        self.properties = PropertiesBox()
        self.site_choice = self.properties.site_choice
        #: The default property as typed (the combo box's own line: picking from the list fills it too).
        self.site = self.properties.site
        self.site_error = self.properties.site_error
        self.site_warning = self.properties.site_warning
        self.site_hint = self.properties.site_hint
        self.allowed = self.properties.allowed
        self.allowed_completer = self.properties.allowed_completer
        self.allowed_error = self.properties.allowed_error
        layout.addWidget(self.properties)
        #: The brand's names per property (the brand report's default), saved with the rest.
        self.brand = BrandBox(self.validate)
        layout.addWidget(self.brand)

    def _add_kept_here(self, layout: QVBoxLayout, core: Core) -> None:
        """The sections that act at once: the record of changes (its Kept for is saved with the rest),
        the archive, the coverage watch, and the update check."""
        self.record = RecordBox(core, lambda box: self.ask(box), self._bring_into_view)
        self.kept_for = self.record.kept_for
        self.clear_button = self.record.clear_button
        self.record_status = self.record.record_status
        self.record_error = self.record.record_error
        layout.addWidget(self.record)
        self.archive_box = ArchiveBox(core)  # its controls act at once (archive.py)
        self.archive_box.setVisible(not core.demo)  # the demo's server has an archive of its own
        layout.addWidget(self.archive_box)
        self.coverage_box = CoverageBox(core)  # the coverage watch: its controls act at once (coverage.py)
        self.coverage_box.setVisible(not core.demo)  # the demo's server has a watch of its own
        layout.addWidget(self.coverage_box)
        self.updates_box, self.update_switch = update_check.settings_box()
        # The demo never asks GitHub; a build without the release key has nothing to believe.
        self.updates_box.setVisible(not core.demo and core.updates_offered)
        layout.addWidget(self.updates_box)

    def _add_footer(self, outer: QVBoxLayout) -> None:
        """What Save did stands outside what scrolls, just above the buttons: always in view."""
        self.status = plain_label("")
        self.status_error = error_label()
        said = QVBoxLayout()
        said.setContentsMargins(9, 4, 9, 0)
        said.addWidget(self.status)
        said.addWidget(self.status_error)
        outer.addLayout(said)
        buttons = FlowLayout(align_right=True)
        buttons.setContentsMargins(9, 0, 9, 9)
        self.save_button = QPushButton("Save")
        self.save_button.setDefault(True)
        self.close_button = QPushButton("Close")
        self.close_button.setAutoDefault(False)
        #: What each setting does and what its messages mean: the settings' help page.
        self.help_button = HelpButton("settings")
        buttons.addWidget(self.help_button)
        buttons.addWidget(self.save_button)
        buttons.addWidget(self.close_button)
        outer.addLayout(buttons)

    # --- state ------------------------------------------------------------------------------
    def load(self) -> None:
        """Show what is saved now (also after Close and reopen: unsaved edits are dropped)."""
        s = self.core.settings
        self.read_only.setChecked(s.read_only)
        chosen = set(s.groups)
        self.all_tools.setChecked(not chosen)
        for group, box in self.group_boxes.items():
            box.setChecked(group in chosen)
        self._all_tools_toggled(not chosen)
        self.site.setText(s.site_url)
        self.allowed.setText(", ".join(s.allowed_sites))
        self.kept_for.setCurrentIndex(max(0, self.kept_for.findData(keeping.kept_for(s.kept_for_days))))
        self.update_switch.setChecked(s.update_check)
        set_error(self.record_error, self.core.record_problem)
        self._offer_properties()
        self._show_brand()
        self._show_accounts()
        self._say(where_settings_go(self.core))
        self.validate()
        self._saved = self._form()

    def _offer_properties(self) -> None:
        """The accounts' own properties, from the last check that listed them, to pick from."""
        seen = self.core.seen_sites
        self.properties.offer(list(seen.sites) if seen is not None else [], demo=self.core.demo)

    def _check_done(self, _result: object) -> None:
        """A check just listed the accounts' properties: offer them, and look at the default again."""
        self._offer_properties()
        self._show_brand(keep_typed=True)
        self.validate()

    def _show_brand(self, *, keep_typed: bool = False) -> None:
        """A brand line for each property the accounts listed at the last check, the default, the allowed
        ones, and any with names kept."""
        s, seen = self.core.settings, self.core.seen_sites
        sites = [*(seen.sites if seen is not None else ()), s.site_url, *s.allowed_sites]
        self.brand.show_sites(sites, s.brand_terms, keep_typed=keep_typed)

    def _form(self) -> dict[str, object]:
        """What the form holds now, to tell unsaved changes from what was loaded or saved."""
        return {
            "read_only": self.read_only.isChecked(),
            "groups": (self.all_tools.isChecked(), tuple(self.chosen_groups())),
            "site": self.site.text().strip(),
            "allowed": self.allowed.text().strip(),
            "kept_for": self.chosen_kept_for(),
            "updates": self.update_switch.isChecked(),
            "accounts": tuple(sorted(self.claude_accounts().items())),
            "brand": tuple(sorted((site, tuple(words)) for site, words in self.brand.chosen().items())),
        }

    def has_unsaved_changes(self) -> bool:
        return bool(self._saved) and self._form() != self._saved

    def unsaved_box(self) -> QMessageBox:
        """Before closing with changes not saved: Save, Discard, or Keep editing (the default, and Escape).

        Keep editing is the default because it is the one answer that changes nothing: an edit the person
        never meant (a wheel that passed over a box, a key pressed in the wrong field) is neither written
        to Claude Desktop by a reflexive Enter nor thrown away; the window stays with the edit in view."""
        box = QMessageBox(
            QMessageBox.Icon.Question,
            title(self.core.demo, "save your changes?"),
            "You changed the settings but have not saved them. Save them now? If you discard them, "
            "the settings stay as they were.",
            QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Discard | QMessageBox.StandardButton.Cancel,
            self,
        )
        box.button(QMessageBox.StandardButton.Save).setText("Save")
        box.button(QMessageBox.StandardButton.Discard).setText("Discard changes")
        box.button(QMessageBox.StandardButton.Cancel).setText("Keep editing")
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        box.setEscapeButton(QMessageBox.StandardButton.Cancel)
        return box

    def reject(self) -> None:
        """Close, Escape and the window's X all end here (QDialog's close event calls it): with unsaved
        changes, ask first; Keep editing, or a Save that found mistakes, leaves the window open."""
        if self.has_unsaved_changes():
            answer = self.choose(self.unsaved_box())
            if answer == QMessageBox.StandardButton.Save:
                if not self.save() or self.status_error.isVisible():
                    return  # the mistakes, or what went wrong, are in view beside the fields
            elif answer == QMessageBox.StandardButton.Discard:
                self.load()
            else:
                return
        super().reject()

    def _show_accounts(self) -> None:
        """One box per account, ticked when Claude may use it (`AccountsBox.show_rows`)."""
        self.account_boxes = self.accounts_box.show_rows(self.core.accounts.rows, self.validate)
        self.validate()
        if self._saved:  # the accounts changed elsewhere: the boxes show what is saved now
            self._saved["accounts"] = self._form()["accounts"]

    def claude_accounts(self) -> dict[str, bool]:
        """Each account's e-mail address, and whether it is ticked."""
        return {email: box.isChecked() for email, box in self.account_boxes.items()}

    def chosen_groups(self) -> list[str]:
        if self.all_tools.isChecked():
            return []
        return [g for g, box in self.group_boxes.items() if box.isChecked()]

    def _all_tools_toggled(self, every: bool) -> None:
        for box in self.group_boxes.values():
            box.setEnabled(not every)
        self.validate()

    def validate(self) -> Parsed:
        """Check every field now and show each problem beside its field; Save is off while any remain."""
        parsed = parse_form(self.site.text(), self.allowed.text())
        if not self.all_tools.isChecked() and not self.chosen_groups():
            parsed.errors["groups"] = "Choose at least one group, or offer every tool."
        if self.account_boxes and not any(self.claude_accounts().values()):
            parsed.errors["accounts"] = (
                "Tick at least one account: with none, Claude could not read any of your Search Console data."
            )
        if problem := self.brand.problem():
            parsed.errors["brand"] = problem
        appeared: list[QLabel] = []
        for key, label in (
            ("groups", self.groups_error),
            ("site", self.site_error),
            ("allowed", self.allowed_error),
            ("accounts", self.accounts_error),
            ("brand", self.brand.error),
        ):
            text = parsed.errors.get(key, "")
            if text and text != label.text():
                appeared.append(label)
            set_error(label, text)
        ticked = [email for email, on in self.claude_accounts().items() if on]
        warning = unseen_warning(self.core, parsed, ticked)
        if warning and warning != self.site_warning.text():
            appeared.append(self.site_warning)
        set_error(self.site_warning, warning)
        if appeared:
            self._bring_into_view(appeared[0])
        self.save_button.setEnabled(not parsed.errors)
        return parsed

    def _bring_into_view(self, label: QLabel) -> None:
        """Scroll a message that just appeared into view, once the layout has made room for it: on the
        next turn of the event loop, and again when the page's height next changes (a wrapped message
        takes its final height only once laid out at its width, which can be a turn later)."""
        if not self.isVisible():
            return
        bar = self.page.verticalScrollBar()
        waiting = [True]

        def ensure(*_: object) -> None:
            if label.isVisible():
                self.page.ensureWidgetVisible(label, 0, 12)

        def stop() -> None:
            if waiting[0]:
                waiting[0] = False
                bar.rangeChanged.disconnect(once)

        def once(*_: object) -> None:
            stop()
            ensure()

        bar.rangeChanged.connect(once)
        QTimer.singleShot(0, self, ensure)
        QTimer.singleShot(500, self, stop)  # no change of height came: stop waiting for one

    def errors(self) -> dict[str, str]:
        return self.validate().errors

    # --- the record of changes (settings_record.RecordBox): where tests and the screenshots reach it
    def chosen_kept_for(self) -> int:
        return self.record.chosen_kept_for()

    def confirm_clear_box(self) -> QMessageBox:
        return self.record.confirm_clear_box()

    def clear_record(self) -> None:
        self.record.clear_record()

    def _cleared(self, problem: str) -> None:
        self.record.cleared(problem)

    def _record_said(self, text: str) -> None:
        self.record.record_said(text)

    def save(self) -> bool:
        parsed = self.validate()
        if parsed.errors:
            return False
        for email, allowed in self.claude_accounts().items():
            row = self.core.accounts.find(email)
            if row is not None and row.for_claude != allowed:
                self.core.set_claude_may_use(email, allowed)
                if not allowed:  # its copied history: kept unread, or deleted
                    ask_keep_or_delete(self, self.core, email, self.ask, removed=False)
                    ask_keep_or_delete_watch(self, self.core, email, self.ask, removed=False)  # and its watch
        if self.chosen_kept_for() != keeping.kept_for(self.core.settings.kept_for_days):
            self.core.set_kept_for(self.chosen_kept_for())
        if self.update_switch.isChecked() != self.core.settings.update_check and not self.core.demo:
            self.core.settings.update_check = self.update_switch.isChecked()
            self.core.settings.update_check_asked = True  # answered here: the main window asks no more
            self.core.settings.save(self.core.settings_path)
            self.core.changed.emit()  # the app's notice and its daily check follow
        try:
            change = self.core.apply_settings(
                read_only=self.read_only.isChecked(),
                groups=self.chosen_groups(),
                site_url=parsed.site_url,
                allowed_sites=parsed.allowed_sites,
                brand_terms=self.brand.chosen(),
            )
        except cc.ClaudeConfigError as exc:
            self._say(f"Saved in SearchDesk, but Claude Desktop's settings were not changed: {exc}", error=True)
            self._saved = self._form()
            return True
        # Show the server's spelling of what was saved (https://example.com -> https://example.com/).
        self.site.setText(parsed.site_url)
        self.allowed.setText(", ".join(parsed.allowed_sites))
        self._show_brand()  # each line as kept: lower case, no repeats; the new default's line too
        lines = ["Saved. " + where_settings_go(self.core, updated=change.changed)]
        if self.core.missing_scopes():
            lines.append(
                "The tools you chose need permissions your Google sign-in did not grant: sign in again "
                "(step 1) so Google asks you for them."
            )
        self._say("\n".join(lines))
        self._saved = self._form()
        return True

    def _say(self, text: str, *, error: bool = False) -> None:
        self.status.setText("" if error else text)
        self.status.setVisible(not error)
        set_error(self.status_error, text if error else "")
