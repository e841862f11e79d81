"""Step 2's rules (`claude_install`), without Qt: which way SearchDesk goes into Claude Desktop, when it
asks first and in which words, and what each outcome leaves under the step.

The core is replaced by a small recording double of the part these rules use (`claude_install.Claude`):
the rules decide, the double only says what was done; the writing itself is tested with the real
settings file in test_config_file.py and through the real window in test_app.py and test_extension.py.
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass, field

import pytest

from searchdesk_desktop.claude import install as install
from searchdesk_desktop.claude.config_file import ClaudeConfigError


@dataclass
class Check:
    entry: object | None = None


@dataclass
class Status:
    check: Check = field(default_factory=Check)
    extension: object | None = None


@dataclass
class FakeClaude:
    demo: bool = False
    method: str = "config"
    opens: bool = True
    fails: str = ""  # the one call that raises ClaudeConfigError
    status: Status = field(default_factory=Status)
    done: list[str] = field(default_factory=list)

    def _do(self, what: str) -> object:
        self.done.append(what)
        if self.fails and what.startswith(self.fails):
            raise ClaudeConfigError(f"could not {what}")
        return None

    def add_method(self) -> str:
        return self.method

    def open_extension(self) -> bool:
        self.done.append("open extension")
        return self.opens

    def add_to_claude(self, *, allow_demo: bool = False, replace_real: bool = False) -> object:
        return self._do(f"write allow_demo={allow_demo} replace_real={replace_real}")

    def repair_claude(self) -> object:
        return self._do("repair")

    def remove_from_claude(self) -> object:
        return self._do("remove")

    def claude_status(self) -> Status:
        return self.status


class Person:
    """Answers every question the same way, and remembers which were asked."""

    def __init__(self, yes: bool) -> None:
        self.yes = yes
        self.asked: list[install.InstallQuestion] = []

    def __call__(self, question: install.InstallQuestion) -> bool:
        self.asked.append(question)
        return self.yes


def test_the_real_app_writes_its_entry_without_asking() -> None:
    core, person = FakeClaude(), Person(yes=False)
    assert install.add(core, person) == install.Outcome("", shown=True)
    assert core.done == ["write allow_demo=False replace_real=False"] and person.asked == []


def test_the_extension_goes_in_when_claude_desktop_opens_it_else_the_settings_file_says_why() -> None:
    core = FakeClaude(method="bundle")
    assert install.add(core, Person(yes=True)) == install.Outcome()
    assert core.done == ["open extension"]
    core = FakeClaude(method="bundle", opens=False)
    assert install.add(core, Person(yes=True)) == install.Outcome(install.EXTENSION_NOT_OPENED)
    assert core.done == ["open extension", "write allow_demo=False replace_real=False"]


def test_the_demo_asks_first_and_a_no_changes_nothing() -> None:
    core, person = FakeClaude(demo=True), Person(yes=False)
    assert install.add(core, person) == install.Outcome("", shown=False)
    assert person.asked == [install.ADD_DEMO] and core.done == []
    assert "made-up Search Console data" in install.ADD_DEMO.text
    core, person = FakeClaude(demo=True), Person(yes=True)
    assert install.add(core, person) == install.Outcome()
    assert core.done == ["write allow_demo=True replace_real=False"]


def test_only_the_demo_replaces_a_real_entry_when_switching() -> None:
    core = FakeClaude(demo=True)
    install.switch(core, Person(yes=True))
    assert core.done == ["write allow_demo=True replace_real=True"]
    core = FakeClaude()
    install.switch(core, Person(yes=True))
    assert core.done == ["write allow_demo=False replace_real=False"]


def test_switching_the_real_app_with_the_extension_removes_the_entry_then_opens_the_extension() -> None:
    core = FakeClaude(method="bundle")
    assert install.switch(core, Person(yes=True)) == install.Outcome()
    assert core.done == ["remove", "open extension"]
    core = FakeClaude(method="bundle", fails="remove")
    assert install.switch(core, Person(yes=True)) == install.Outcome("could not remove")
    assert core.done == ["remove"]


def test_the_demo_cannot_take_over_from_the_extension() -> None:
    core = FakeClaude(demo=True, status=Status(extension="SearchDesk.mcpb"))
    assert install.switch(core, Person(yes=True)) == install.Outcome(install.EXTENSION_IN_THE_WAY)
    assert core.done == []


def test_removing_asks_first_and_a_no_leaves_the_step_as_it_was() -> None:
    core, person = FakeClaude(), Person(yes=False)
    assert install.remove(core, person) == install.Outcome(None, shown=False)
    assert person.asked == [install.REMOVE] and core.done == []
    assert install.remove(core, Person(yes=True)) == install.Outcome()
    assert core.done == ["remove"]


@pytest.mark.parametrize(
    ("act", "fails"),
    [
        (lambda core: install.add(core, Person(yes=True)), "write"),
        (lambda core: install.repair(core), "repair"),
        (lambda core: install.remove(core, Person(yes=True)), "remove"),
    ],
)
def test_what_the_settings_file_refused_is_shown_under_the_step(act: object, fails: str) -> None:
    outcome = act(FakeClaude(fails=fails))  # type: ignore[operator]
    assert outcome.shown and outcome.error and outcome.error.startswith("could not")


def test_the_rules_need_no_qt() -> None:
    code = (
        "import sys, searchdesk_desktop.claude.install\n"
        "assert not [m for m in sys.modules if m.startswith('PySide6')], 'Qt imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
