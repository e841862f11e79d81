"""Guard against a reference-count bug in PySide6 6.12.0's abi3 wheels on Python 3.11.

Those wheels drop one reference to ``None`` on every call of a void Qt method and one to ``True`` on
every ``Signal.emit()``, as if the objects were immortal (which they are only from Python 3.12 on,
PEP 683). On 3.11 the interpreter aborts with "none_dealloc: deallocating None" after about 5,000
such calls — within minutes of normal use. 6.11.3 does not have the bug (checked here, 2026-11-29).

The singletons are never freed anyway, so giving them a huge reference count is exactly what 3.12
does for them, and harmless everywhere. Applied on import of the package, before any Qt call.
"""

from __future__ import annotations

import ctypes
import sys

_PAD = 1 << 40  # ~10^12 calls of headroom; refcounts are 64-bit


def apply() -> bool:
    if sys.version_info >= (3, 12) or sys.implementation.name != "cpython":
        return False
    for obj in (None, True, False):
        ctypes.c_ssize_t.from_address(id(obj)).value += _PAD  # ob_refcnt is the first field
    return True


applied = apply()
