"""No module over 500 lines, no function over 80, no constructor over 60, in server/ and desktop/.

A module that long holds more than one job, and a reader cannot tell which part a change belongs to; a
function that long does several things a test cannot reach one by one; a constructor that long
builds a whole window in one breath (build it from parts, as the main window's steps are). Lines are counted as `ast` counts them: a
function from its ``def`` through its last line (``end_lineno - lineno + 1``), decorators not counted.
The screenshot script alone is exempt, by name: it stages every window of the app for the docs.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from pathlib import Path

from tests import REPO

PACKAGES = (REPO / "server" / "searchdesk_server", REPO / "desktop" / "searchdesk_desktop")
DESKTOP = PACKAGES[1]
MODULE_MAX = 500
FUNCTION_MAX = 80
INIT_MAX = 60
#: The one module allowed to be longer, by path from the repository.
EXEMPT_MODULES = frozenset({"desktop/searchdesk_desktop/screenshots.py"})


def modules(roots: Iterable[Path] = PACKAGES) -> list[Path]:
    return sorted(p for root in roots for p in root.rglob("*.py") if "__pycache__" not in p.parts)


def name_of(path: Path) -> str:
    return path.relative_to(REPO).as_posix() if path.is_relative_to(REPO) else path.as_posix()


def functions(tree: ast.AST) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield node


def length(node: ast.stmt) -> int:
    assert node.end_lineno is not None
    return node.end_lineno - node.lineno + 1


def long_modules(paths: Iterable[Path]) -> list[str]:
    return [
        f"{name_of(p)}: {n} lines"
        for p in paths
        if name_of(p) not in EXEMPT_MODULES and (n := len(p.read_text(encoding="utf-8").splitlines())) > MODULE_MAX
    ]


def long_functions(source: str, where: str) -> list[str]:
    return [
        f"{where}:{f.lineno} {f.name}: {length(f)} lines"
        for f in functions(ast.parse(source))
        if length(f) > FUNCTION_MAX
    ]


def long_constructors(source: str, where: str) -> list[str]:
    return [
        f"{where}:{node.lineno} {cls.name}.__init__: {length(node)} lines"
        for cls in ast.walk(ast.parse(source))
        if isinstance(cls, ast.ClassDef)
        for node in cls.body
        if isinstance(node, ast.FunctionDef) and node.name == "__init__" and length(node) > INIT_MAX
    ]


def test_no_module_is_over_500_lines() -> None:
    found = long_modules(modules())
    assert not found, "split each module by what its parts hold:\n" + "\n".join(found)


def test_no_function_is_over_80_lines() -> None:
    found = [line for p in modules() for line in long_functions(p.read_text(encoding="utf-8"), name_of(p))]
    assert not found, "split each function into steps with names:\n" + "\n".join(found)


def test_no_constructor_is_over_60_lines() -> None:
    found = [line for p in modules() for line in long_constructors(p.read_text(encoding="utf-8"), name_of(p))]
    assert not found, "build each window or object from parts (a method or a widget per part):\n" + "\n".join(found)


# --- the checks themselves can fail ------------------------------------------------------------


def test_a_long_function_is_found_and_one_of_80_lines_is_not() -> None:
    def source(lines: int) -> str:
        return "def f() -> None:\n" + "    pass\n" * (lines - 1)

    assert long_functions(source(80), "x.py") == []
    assert long_functions(source(81), "x.py") == ["x.py:1 f: 81 lines"]
    method = "class C:\n    async def g(self) -> None:\n" + "        pass\n" * 80
    assert long_functions(method, "y.py") == ["y.py:2 g: 81 lines"]


def test_a_long_module_is_found_unless_it_is_the_screenshot_script(tmp_path: Path) -> None:
    fake = tmp_path / "x.py"
    fake.write_text("pass\n" * 500, encoding="utf-8")
    assert long_modules([fake]) == []
    fake.write_text("pass\n" * 501, encoding="utf-8")
    assert long_modules([fake]) == [f"{fake.as_posix()}: 501 lines"]
    (screenshots,) = (p for p in modules([DESKTOP]) if name_of(p) in EXEMPT_MODULES)  # the exemption names a file
    assert long_modules([screenshots]) == []


def test_a_long_constructor_is_found_and_one_of_60_lines_is_not() -> None:
    def source(lines: int) -> str:
        return "class W(QDialog):\n    def __init__(self) -> None:\n" + "        pass\n" * (lines - 1)

    assert long_constructors(source(60), "w.py") == []
    assert long_constructors(source(61), "w.py") == ["w.py:2 W.__init__: 61 lines"]
    assert long_constructors("def __init__() -> None:\n" + "    pass\n" * 70, "m.py") == []  # not a constructor
