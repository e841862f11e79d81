"""How SearchDesk installs itself into Claude Desktop: the decisions behind step 2's buttons, without Qt.

Which way it goes in (the extension when this build ships one and Claude Desktop opens it, else the
settings file), when an entry is replaced (switching between the demo and the real app, or an entry
with credentials of its own), when the person is asked first and in which words (adding the demo,
removing SearchDesk), and what each outcome means for step 2. The main window's step 2
(`windows.step_claude`) only asks the question this module names and shows the outcome; the writing
itself is `config_file`'s, through the core. Kept apart from the window so that "change what step 2
does" is this module and that one, and so the rules are tested without a display.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from .config_file import ClaudeConfigError


@dataclass(frozen=True)
class InstallQuestion:
    """A yes/no question to ask before acting; its safe answer, No, is the default where it is shown."""

    heading: str  # the title's words after the app's name ("add the demo to Claude Desktop?")
    text: str


#: Asked before the demo's entry goes into Claude Desktop (it then answers with made-up data).
ADD_DEMO = InstallQuestion(
    "add the demo to Claude Desktop?",
    "Claude Desktop will then use SearchDesk's demo: made-up Search Console data, labelled as demo. "
    "To go back to your real account, start SearchDesk normally and switch there.",
)
#: Asked before SearchDesk's entry leaves Claude Desktop (Claude loses its access until it is added again).
REMOVE = InstallQuestion(
    "remove from Claude Desktop?",
    "Remove SearchDesk from Claude Desktop? Claude will no longer reach your Search Console data "
    "through SearchDesk. You can add it again at any time.",
)
#: The extension could not be handed to Claude Desktop: the settings file was used instead.
EXTENSION_NOT_OPENED = (
    "Claude Desktop did not open SearchDesk's extension file, so SearchDesk added itself to Claude "
    "Desktop's settings file instead."
)
#: The demo cannot take Claude Desktop over from the extension: only Claude Desktop removes an extension.
EXTENSION_IN_THE_WAY = (
    "The SearchDesk extension is still in Claude Desktop. Remove it there first (Settings, "
    "Extensions, SearchDesk): SearchDesk cannot remove it for you."
)


#: The systems Anthropic offers Claude Desktop for; on any other (Linux) only unofficial builds exist.
CLAUDE_DESKTOP_SYSTEMS = ("darwin", "win32")
#: Step 2 on Linux where no unofficial Claude Desktop is found: the status, then what works there instead.
NO_CLAUDE_DESKTOP = "There is no Claude Desktop for Linux"
NO_CLAUDE_DESKTOP_DETAIL = (
    "Anthropic offers Claude Desktop for macOS and Windows only. On Linux, SearchDesk works with Claude Code and "
    "other programs that can start it: Help shows how to add it there. Use an unofficial Claude Desktop for "
    "Linux? Start it once, then click Look again: SearchDesk can add itself to its settings."
)
#: Step 3's last sentence after a check that passed, on Linux without Claude Desktop.
NO_CLAUDE_DESKTOP_THEN = "To use it with Claude, add SearchDesk to Claude Code or another program (Help shows how)."


def offers_claude_desktop(system: str, *, claude_found: bool) -> bool:
    """Whether step 2 offers to add SearchDesk to Claude Desktop's settings file.

    On macOS and Windows always: Anthropic's Claude Desktop reads the file whenever it is installed, before or
    after. Elsewhere (Linux) Anthropic offers none, so only where an unofficial build is on this computer (its
    program, its settings from before SearchDesk wrote there, or a server it started: `claude_found`): a file
    written for a program that does not exist would tell the person something is set up that is not."""
    return system in CLAUDE_DESKTOP_SYSTEMS or claude_found


@dataclass(frozen=True)
class Outcome:
    """What one of step 2's actions came to.

    `error`: what step 2 shows under it from now on ("": nothing), or None to leave what it shows as it
    is (the person said no before anything was tried). `shown`: whether the window shows the new state
    now (False: the person said no, nothing changed)."""

    error: str | None = ""
    shown: bool = True


#: The answer to a question: True for yes (the step asks the person; tests answer for them).
Ask = Callable[[InstallQuestion], bool]


class Entry(Protocol):
    """SearchDesk's entry in the settings file as checked (`config_file.EntryCheck`)."""

    @property
    def entry(self) -> object | None: ...


class Status(Protocol):
    """What Claude Desktop has now (the core's `ClaudeStatus`): as much of it as these rules read."""

    @property
    def check(self) -> Entry: ...

    @property
    def extension(self) -> object | None: ...


class Claude(Protocol):
    """What these rules use of the core (`core.Core` is one): this app's mode and Claude Desktop's files."""

    @property
    def demo(self) -> bool: ...

    def add_method(self) -> str: ...

    def open_extension(self) -> bool: ...

    def add_to_claude(self, *, allow_demo: bool = False, replace_real: bool = False) -> object: ...

    def repair_claude(self) -> object: ...

    def remove_from_claude(self) -> object: ...

    def claude_status(self) -> Status: ...


def add(core: Claude, ask: Ask) -> Outcome:
    """Add to Claude Desktop: the extension (.mcpb) when this build ships one; else, or when Claude
    Desktop cannot open it, the settings file."""
    if core.add_method() == "bundle":
        if core.open_extension():
            return Outcome()
        return write_entry(core, ask, error=EXTENSION_NOT_OPENED)
    return write_entry(core, ask)


def add_via_settings_file(core: Claude, ask: Ask) -> Outcome:
    """The settings file, whatever this build ships (Claude Desktop showed no install dialog)."""
    return write_entry(core, ask)


def switch(core: Claude, ask: Ask) -> Outcome:
    """Make Claude Desktop's entry this app's own: the other mode's entry, or one with credentials of
    its own, is replaced (the real app in a build with the extension: by the extension)."""
    status = core.claude_status()
    if core.demo and status.extension is not None and status.check.entry is None:
        return Outcome(EXTENSION_IN_THE_WAY)
    if not core.demo and core.add_method() == "bundle":
        try:
            core.remove_from_claude()
        except ClaudeConfigError as exc:
            return Outcome(str(exc))
        return add(core, ask)
    return write_entry(core, ask, replace=True)


def write_entry(core: Claude, ask: Ask, *, replace: bool = False, error: str = "") -> Outcome:
    """Write this app's entry into the settings file. The demo's only after a yes (it would answer
    Claude with made-up data), and only the demo replaces a real entry: the real app's own entry always
    replaces the demo's. `error`: what step 2 shows if the writing works (why it took this way)."""
    allow_demo = False
    if core.demo:
        if not ask(ADD_DEMO):
            return Outcome(error, shown=False)
        allow_demo = True
    try:
        core.add_to_claude(allow_demo=allow_demo, replace_real=replace and allow_demo)
    except ClaudeConfigError as exc:
        return Outcome(str(exc))
    return Outcome(error)


def repair(core: Claude) -> Outcome:
    """Write the entry as it should be (another copy's program, a broken entry)."""
    try:
        core.repair_claude()
    except ClaudeConfigError as exc:
        return Outcome(str(exc))
    return Outcome()


def remove(core: Claude, ask: Ask) -> Outcome:
    """Take SearchDesk out of Claude Desktop, after a yes: removing breaks Claude's access until
    SearchDesk is added again."""
    if not ask(REMOVE):
        return Outcome(None, shown=False)
    try:
        core.remove_from_claude()
    except ClaudeConfigError as exc:
        return Outcome(str(exc))
    return Outcome()
