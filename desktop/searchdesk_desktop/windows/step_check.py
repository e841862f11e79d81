"""Step 3 of the main window, the check: SearchDesk started exactly as Claude Desktop would, reading
Search Console through it; what it found, and whether Claude Desktop has started it yet."""

from __future__ import annotations

import time
from collections.abc import Callable

from PySide6.QtWidgets import QMessageBox

from ..check.last_check import BUSY as CHECKING
from ..check.run import check_verdict
from ..claude import install as install
from ..core import Core
from ..help import check_topic
from .check_report import CheckResult
from .parts import BUSY, NOT_FOUND, OK, PROBLEM, RESTART, TODO, Step


class CheckStep(Step):
    """Step 3: Check it works, and what Claude would see."""

    def __init__(self, core: Core, errors: dict[int, str], ask: Callable[[QMessageBox], bool]) -> None:
        super().__init__(3, "Check it works", "check", core, errors, ask)
        self.check_result = CheckResult()
        self.extras.addWidget(self.check_result)
        core.check_done.connect(self._check_done)

    def show_current(self) -> None:
        step, core = self, self.core
        blocked = core.check_blocked()
        result = None if blocked else core.last_check
        self.check_result.setVisible(False)
        if blocked:
            step.show_state(TODO, "Not checked yet", blocked)
            step.set_buttons([])
            return
        if result is None:
            step.show_state(
                TODO,
                "Not checked yet",
                "Starts SearchDesk exactly as Claude Desktop would, and reads your Search Console data through it.",
            )
            step.set_buttons([("Check it works", self.run_check)], primary="Check it works")
            return
        if result == CHECKING:  # the check's own word for one under way; BUSY is how a step shows it
            step.show_state(BUSY, "Checking…", "Starting SearchDesk as Claude Desktop would.")
            step.set_buttons([])
            return
        if isinstance(result, str):
            step.show_state(PROBLEM, "The check could not run", "", result, topic="check-could-not-run")
        else:
            claude = core.claude_status()
            added = claude.check.entry is not None or claude.extension is not None
            seen = core.claude_seen()
            warning = str(getattr(result, "warning", ""))
            if result.ok and warning:  # a default property nobody can see: not a tick
                state, status = PROBLEM, "SearchDesk works, but the default property needs your attention"
                verdict = f"{result.verdict} {warning}"
            elif result.ok and added and core.claude_evidence() is None:
                state, status = TODO, "SearchDesk works; Claude Desktop was not found"
                verdict = f"{result.verdict} {NOT_FOUND}"
            elif result.ok and added and seen is None:
                state, status = TODO, "SearchDesk works; Claude Desktop has not started it yet"
                verdict = f"{result.verdict} {RESTART} Then ask Claude about your site; this step turns green then."
            elif result.ok and added:
                at, version = seen or (0.0, "")
                says = f" (it says it is version {version})" if version else ""
                state, status = OK, "It works"
                verdict = (
                    f"{result.verdict} Claude Desktop started SearchDesk at "
                    f"{time.strftime('%H:%M on %d %B', time.localtime(at))} and it answered{says}."
                )
            elif result.ok:
                state, status = TODO, "SearchDesk works; Claude Desktop does not have it yet"
                then = "Once you add SearchDesk to Claude Desktop (step 2), Claude can use it."
                if not core.claude_desktop_offered():  # Linux: Anthropic offers no Claude Desktop there
                    then = install.NO_CLAUDE_DESKTOP_THEN
                elif core.claude_evidence() is None:  # adding it alone would not let Claude use it
                    then = "Claude Desktop was not found: install it from claude.ai/download, then add SearchDesk."
                verdict = f"{result.verdict} {then}"
            else:
                state, status, verdict = PROBLEM, "The check found a problem", check_verdict(result)
            step.show_state(state, status, topic="" if result.ok else check_topic(str(result.kind)))
            self.check_result.show_report(verdict, core.check_subject(), result, demo=core.demo)
            self.check_result.setVisible(True)
        step.set_buttons([("Check again", self.run_check)])

    def run_check(self) -> None:
        self.core.run_check()
        self.changed.emit()

    def _check_done(self, _result: object) -> None:
        self.changed.emit()
