"""Step 2 of the main window, Claude Desktop: what Claude Desktop has of SearchDesk (the settings file's
entry, the extension) shown with what to do about it, and the buttons that do it.

What each button decides (which entry, whether to replace, whether to ask first and in which words,
what the outcome means) is `claude_install`'s, without Qt; this step only asks the person the question
it names and shows the outcome. "Change what step 2 does": this module and that one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtWidgets import QMessageBox

from .. import __version__
from ..claude import config_file as cc
from ..claude import install as install
from ..core import Core
from ..widgets import breakable_path
from .parts import NOT_FOUND, OK, PROBLEM, RESTART, TODO, Step


class ClaudeStep(Step):
    """Step 2: SearchDesk in Claude Desktop."""

    def __init__(self, core: Core, errors: dict[int, str], ask: Callable[[QMessageBox], bool]) -> None:
        super().__init__(2, "Add to Claude Desktop", "claude", core, errors, ask)

    def show_current(self) -> None:
        step, core = self, self.core
        claude = core.claude_status()
        status = claude.check
        error = self.errors.get(2, "")
        where = f"Settings file: {breakable_path(cc.display_path(status.path))}"
        state = status.state
        if state is cc.EntryState.INVALID_FILE:
            problem = "Claude Desktop's settings file cannot be read"
            step.show_state(PROBLEM, problem, status.detail, error, topic="claude-unreadable")
            step.set_buttons([("Try again", core.changed.emit)])
        elif state is not cc.EntryState.ABSENT and claude.extension is not None:
            step.show_state(
                PROBLEM,
                "SearchDesk is in Claude Desktop twice",
                "It is installed as an extension and also listed in the settings file, so Claude sees every "
                "tool twice. Remove the settings-file entry.\n" + where,
                error,
                topic="claude-twice",
            )
            step.set_buttons([("Remove from the settings file", self.remove_from_claude)])
        elif state is cc.EntryState.OK:
            label = "Added to Claude Desktop" + (" (the demo)" if status.demo else "")
            if core.claude_evidence() is None:  # the entry is ready, but nothing shows Claude Desktop is here
                step.show_state(
                    TODO,
                    f"{label}, but Claude Desktop was not found",
                    f"{NOT_FOUND}\n{where}",
                    error,
                    topic="claude-not-found",
                )
            else:
                step.show_state(OK, label, f"{RESTART}\n{where}", error)
            step.set_buttons([("Remove from Claude Desktop", self.remove_from_claude)])
        elif state is cc.EntryState.OTHER_MODE:
            self._show_other_mode(status.demo, where, error)
        elif state is cc.EntryState.OWN_CREDENTIALS:
            step.show_state(
                PROBLEM,
                "Claude Desktop's entry uses other Google credentials",
                "SearchDesk's entry in Claude Desktop carries Google credentials of its own, so Claude would "
                "not use the account you set up here. SearchDesk can replace the entry with its own.\n" + where,
                error,
                topic="claude-credentials",
            )
            step.set_buttons(
                [("Use SearchDesk's sign-in instead", self.switch_claude)], "Use SearchDesk's sign-in instead"
            )
        elif state in (cc.EntryState.BROKEN, cc.EntryState.OTHER_COPY):
            step.show_state(PROBLEM, f"Needs repair: {status.detail}", where, error, topic="claude-repair")
            step.set_buttons(
                [("Repair", self.repair_claude), ("Remove from Claude Desktop", self.remove_from_claude)],
                primary="Repair",
            )
        elif claude.extension is not None:
            self._show_extension(claude, error)
        elif core.bundle_opened and core.add_method() == "bundle":
            detail = (
                "Claude Desktop should be showing SearchDesk's install dialog: click Install there, then "
                "come back. Nothing appeared? Add SearchDesk through the settings file instead."
            )
            step.show_state(TODO, "Opened in Claude Desktop", detail, error, topic="claude-opened")
            step.set_buttons(
                [("Open it again", self.add_to_claude), ("Use the settings file instead", self.add_via_settings_file)]
            )
        elif not core.claude_desktop_offered():  # Linux, and no unofficial Claude Desktop here
            step.show_state(
                TODO, install.NO_CLAUDE_DESKTOP, install.NO_CLAUDE_DESKTOP_DETAIL, error, topic="claude-linux"
            )
            step.set_buttons([("Look again", core.changed.emit)])
        else:
            notes = []
            if core.claude_evidence() is None:
                notes.append("Claude Desktop was not found on this computer; SearchDesk can add itself anyway.")
            if core.add_method() == "config":
                notes.append(where)
            step.show_state(PROBLEM if error else TODO, "Not added yet", "\n".join(notes), error)
            label = "Add the demo to Claude Desktop" if core.demo else "Add to Claude Desktop"
            step.set_buttons([(label, self.add_to_claude)], primary=label)

    def _show_other_mode(self, entry_is_demo: bool, where: str, error: str) -> None:
        if entry_is_demo:  # the real app, the demo's entry
            status = "Claude Desktop uses the demo, not your account"
            detail = (
                "SearchDesk's entry in Claude Desktop runs the demo, so Claude answers with made-up data. "
                "Switch it to your Google account."
            )
            label = "Switch Claude Desktop to your account"
        else:  # the demo app, a real entry
            status = "Claude Desktop uses your real account, not the demo"
            detail = (
                "SearchDesk's entry in Claude Desktop uses your real Google account; this demo cannot answer "
                "for it. Switch it to the demo, or quit the demo and start SearchDesk normally."
            )
            label = "Switch Claude Desktop to the demo"
        self.show_state(PROBLEM, status, f"{detail}\n{where}", error, topic="claude-demo")
        self.set_buttons([(label, self.switch_claude)], primary=label)

    def _show_extension(self, claude: Any, error: str) -> None:
        step = self
        if self.core.demo:
            label = "Switch Claude Desktop to the demo"
            step.show_state(
                PROBLEM,
                "Claude Desktop uses your real account, not the demo",
                "Claude Desktop has the SearchDesk extension, which uses your real Google account. To use the "
                "demo in Claude, first remove the extension in Claude Desktop (Settings, Extensions), then switch.",
                error,
            )
            step.set_buttons([(label, self.switch_claude)], primary=label)
        elif not claude.extension_is_ours:
            version = claude.extension_version or "unknown"
            ships = self.core.add_method() == "bundle"  # a release carries no extension file: never there
            todo = (
                "Update it: Claude Desktop shows its install dialog, click Install there."
                if ships
                else "Remove it in Claude Desktop (Settings, Extensions, SearchDesk), then click Look again and add "
                "SearchDesk here."
            )
            step.show_state(
                PROBLEM,
                "The SearchDesk extension in Claude Desktop is another version",
                f"Claude Desktop has version {version}; this app is {__version__}. {todo}",
                error,
                topic="claude-extension",
            )
            if ships:
                step.set_buttons([("Update the extension", self.add_to_claude)], primary="Update the extension")
            else:
                step.set_buttons([("Look again", self.core.changed.emit)])
        else:
            detail = "Its settings are in Claude Desktop: Settings, Extensions, SearchDesk."
            step.show_state(OK, "Added to Claude Desktop as an extension", detail, error)
            step.set_buttons([])

    # --- actions: what they decide is claude_install's ----------------------------------------
    def add_to_claude(self, *, confirm: Callable[[], bool] | None = None) -> None:
        """`confirm`: answers the question asked first, if any (tests; default: the person)."""
        self.errors.pop(2, None)
        self._show(install.add(self.core, self._asker(confirm)))

    def add_via_settings_file(self) -> None:
        self.errors.pop(2, None)
        self._show(install.add_via_settings_file(self.core, self._asker(None)))

    def switch_claude(self, *, confirm: Callable[[], bool] | None = None) -> None:
        self.errors.pop(2, None)
        self._show(install.switch(self.core, self._asker(confirm)))

    def repair_claude(self) -> None:
        self.errors.pop(2, None)
        self._show(install.repair(self.core))

    def remove_from_claude(self, *, confirm: Callable[[], bool] | None = None) -> None:
        self._show(install.remove(self.core, self._asker(confirm)))

    def _asker(self, confirm: Callable[[], bool] | None) -> install.Ask:
        """The policy's question put to the person as a box (or answered by `confirm`)."""
        if confirm is not None:
            return lambda _question: confirm()
        return lambda question: self.ask(self.box(question))

    def _show(self, outcome: install.Outcome) -> None:
        if outcome.error is not None:
            self.errors.pop(2, None)
            if outcome.error:
                self.errors[2] = outcome.error
        if outcome.shown:
            self.changed.emit()

    def box(self, question: install.InstallQuestion) -> QMessageBox:
        return self.question_box(question.heading, question.text)

    def confirm_demo_box(self) -> QMessageBox:
        return self.box(install.ADD_DEMO)

    def confirm_remove_box(self) -> QMessageBox:
        return self.box(install.REMOVE)
