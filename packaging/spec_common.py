"""What both PyInstaller specs share: paths, the version, what to leave out, the OAuth client, the
update check's release key.

The .spec files are executed by PyInstaller, which ruff and mypy do not read; everything with a
decision in it lives here, typed and linted, and the specs stay a few lines of wiring.
PyInstaller's spec reference: https://pyinstaller.org/en/v6.22.3/spec-files.html
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import sys
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGING = ROOT / "packaging"
ASSETS = ROOT / "assets"
APP_NAME = "SearchDesk"
BUNDLE_ID = "com.searchdesk.app"  # as the desktop app's LaunchAgent label (lifecycle/autostart.py)

#: Strip debug symbols on Linux only (libpython alone drops from 23 MB to 6 MB). On macOS stripping
#: invalidates signatures and on Windows there is nothing to strip.
STRIP = sys.platform.startswith("linux")

#: The build-time variable naming the OAuth client ("Desktop app" client JSON from Google Cloud).
#: Unset: a development build, whose sign-in explains that no client is built in.
OAUTH_CLIENT_VAR = "SEARCHDESK_BUILD_OAUTH_CLIENT_FILE"
#: Where the desktop app looks for it (searchdesk_desktop.accounts.signin.BUNDLED_CLIENT, at the package's top).
OAUTH_CLIENT_DEST = "searchdesk_desktop/oauth_client.json"

#: The build-time variable holding the update check's release key (raw Ed25519 public key, base64; the
#: release workflow fills it from the repository variable UPDATE_PUBLIC_KEY). Unset: a build that never
#: checks for updates, and says so in About (docs/update-manifest.md).
UPDATE_KEY_VAR = "SEARCHDESK_BUILD_UPDATE_PUBLIC_KEY"
#: Where the app reads it (searchdesk_desktop.updates.checker.KEY_FILE, at the package's top).
UPDATE_KEY_DEST = "searchdesk_desktop/update_public_key.txt"

#: Never in any build: the stdlib GUI toolkit and test/tooling packages that may sit in the venv.
COMMON_EXCLUDES = [
    "tkinter",
    "_tkinter",
    "turtle",
    "idlelib",
    "pydoc_data",
    "lib2to3",
    "pytest",
    "_pytest",
    "pytestqt",
    "hypothesis",
    "mypy",
    "ruff",
    "PyInstaller",
    "setuptools",
    "pip",
]

#: Windows wheels repaired by delvewheel keep their DLLs in `<distribution>.libs` beside the package, found
#: at run time only through the package's own os.add_dll_directory; PyInstaller collects such a folder with
#: `collect_delvewheel_libs_directory` (a no-op on macOS and Linux). google-re2 (server google/regex.py)
#: ships its own msvcp140 there: (import name, folder).
DELVEWHEEL_LIBS: list[tuple[str, str]] = [("re2", "google_re2.libs")]

#: Set to build without the size cuts below (`make bundle-sizes` does, to measure what each one saves).
NO_CUTS_VAR = "SEARCHDESK_BUILD_NO_CUTS"
CUTTING = not os.environ.get(NO_CUTS_VAR)

#: Left out of both programs' Python archives: pulled in needlessly. Pygments only colours the output of
#: httpx's command-line tool (httpx/_main.py), which httpx imports only if it can (1.7 MB per program).
PYZ_EXCLUDES = ["pygments"] if CUTTING else []

#: The server has no Qt, no keyring and no desktop code (docs/architecture.md: the server never imports it).
SERVER_EXCLUDES = [
    *COMMON_EXCLUDES,
    *PYZ_EXCLUDES,
    "PySide6",
    "shiboken6",
    "searchdesk_desktop",
    "keyring",
    "secretstorage",
    "jeepney",
    "google_auth_oauthlib",
    "requests_oauthlib",
]

#: Qt modules the desktop app does not import (it uses QtCore, QtGui, QtWidgets and QtNetwork; SVG icons
#: load through Qt's plugins). Excluding a module drops its Python binding and, unless something else links
#: it, its Qt library. When the app starts importing one of these, delete it here (smoke.py would fail).
QT_UNUSED = [
    "PySide6.QtQml",
    "PySide6.QtQuick",
    "PySide6.QtQuickControls2",
    "PySide6.QtQuickWidgets",
    "PySide6.QtQuickTest",
    "PySide6.QtOpenGL",
    "PySide6.QtOpenGLWidgets",
    "PySide6.QtPrintSupport",
    "PySide6.QtSql",
    "PySide6.QtTest",
    "PySide6.QtXml",
    "PySide6.QtUiTools",
    "PySide6.QtDesigner",
    "PySide6.QtHelp",
    "PySide6.QtConcurrent",
    "PySide6.QtStateMachine",
    "PySide6.QtDBus",
    "PySide6.scripts",
]
DESKTOP_EXCLUDES = [*COMMON_EXCLUDES, *PYZ_EXCLUDES, *QT_UNUSED]

#: Shared libraries that the Qt hooks pull from the *build host* (not the wheel): the GTK 3 platform
#: theme plugin and its GTK stack (about 8 MB). The app looks the same with Qt's own Fusion/xdg theme,
#: and a GTK copied from the build machine can clash with the user's own GTK.
DROP_BINARY_PARTS = (
    "libqgtk3",
    "libgtk-3",
    "libgdk-3",
    "libatk-1",
    "libatk-bridge",
    "libatspi",
    "libpango",
    "libcairo",
    "libgdk_pixbuf",
    "libharfbuzz",
    "libepoxy",
    "libfribidi",
    "libthai",
    "libdatrie",
    "libpixman",
    "libwayland-cursor",
    "libwayland-egl",
    "libXcomposite",
    "libXdamage",
    "libXinerama",
    "libXrandr",
    "libXcursor",
    "libXi.so",
    "libXfixes",
    "libXext",
    "libXrender",
    "libcloudproviders",
    "libtracker",
)


@dataclass(frozen=True)
class Cut:
    """Files left out of the desktop app, by pieces of their path in the bundle (forward slashes).

    Kept on purpose: platforminputcontexts (compose key, IBus: accented and CJK input), platformthemes
    (the desktop portal's file dialogs), the xcb, wayland and offscreen platforms, the SVG image and icon
    plugins (every icon is an SVG; PNG is built into Qt).
    """

    what: str
    parts: tuple[str, ...]


#: Each cut is measured in packaging/MEASUREMENTS.md (`make bundle-sizes`).
CUTS = (
    Cut("Qt's translations (SearchDesk is in English only)", ("/translations/",)),
    Cut(
        "image formats the app never reads (it shows SVG and PNG)",
        tuple(
            f"imageformats/{name}"
            for name in ("libqgif", "libqicns", "libqico", "libqjpeg", "libqtga", "libqtiff", "libqwbmp", "libqwebp")
        )
        + tuple(f"imageformats/q{name}" for name in ("gif", "icns", "ico", "jpeg", "tga", "tiff", "wbmp", "webp")),
    ),
    Cut(
        "Qt's TLS backends and network-status plugins (Qt only opens local sockets; HTTPS is Python's)",
        ("plugins/tls/", "plugins/networkinformation/"),
    ),
    Cut(
        "platforms for devices without a desktop (framebuffer, EGLFS, VNC, Vulkan display) and their input",
        (
            "platforms/libqeglfs",
            "platforms/libqlinuxfb",
            "platforms/libqminimal",
            "platforms/libqvnc",
            "platforms/libqvkkhrdisplay",
            "plugins/egldeviceintegrations/",
            "plugins/generic/",
            "libQt6EglFSDeviceIntegration",
            "libQt6EglFsKmsSupport",
        ),
    ),
    Cut(
        "Wayland plugins for compositors and non-desktop shells (apps use xdg-shell)",
        (
            "wayland-graphics-integration-client/libdmabuf-server",
            "wayland-graphics-integration-client/libdrm-egl-server",
            "wayland-graphics-integration-client/libshm-emulation-server",
            "wayland-graphics-integration-client/libvulkan-server",
            "wayland-shell-integration/libfullscreen-shell",
            "wayland-shell-integration/libivi-shell",
            "wayland-shell-integration/libqt-shell",
            "wayland-shell-integration/libwl-shell",
        ),
    ),
)


def is_cut(dest: str) -> bool:
    dest = dest.replace("\\", "/")
    return CUTTING and any(piece in dest for cut in CUTS for piece in cut.parts)


def apply_cuts(entries: Iterable[tuple[str, str, str]]) -> list[tuple[str, str, str]]:
    return [e for e in entries if not is_cut(e[0])]


def prune_unneeded(binaries: list[tuple[str, str, str]]) -> list[tuple[str, str, str]]:
    """Drop the build host's shared libraries that nothing left in the bundle loads (Linux).

    PyInstaller copied them for something the cuts (or the GTK strip) took out: libgio for the network
    status plugin, libjpeg for GTK's image loader. Whatever a kept file needs, directly or through
    another library, stays.
    """
    if not CUTTING or not sys.platform.startswith("linux"):
        return binaries
    from PyInstaller.depend.bindepend import get_imports

    def host_library(dest: str) -> bool:
        return "/" not in dest and dest.startswith("lib") and ".so" in dest and not dest.startswith("libpython")

    by_name = {dest: src for dest, src, _ in binaries}
    needed: set[str] = set()
    todo = [dest for dest in by_name if not host_library(dest)]
    while todo:
        dest = todo.pop()
        for name, _path in get_imports(by_name[dest]):
            if name in by_name and name not in needed and host_library(name):
                needed.add(name)
                todo.append(name)
    return [e for e in binaries if not host_library(e[0]) or e[0] in needed]


#: ICU's data, on Linux only (the PySide6 wheel bundles ICU there; macOS and Windows use the system's).
#: Qt reads ICU for collation, case mapping, normalisation and text breaking; its own CLDR tables format
#: dates, numbers and names. These groups serve only ICU's own formatting and charset-conversion APIs
#: (units, currencies, language/region/zone display names, transliteration, spelled-out numbers,
#: legacy charsets), which nothing in the app calls. Kept: the locales' own data, coll/, brkitr/, *.icu, *.nrm.
ICU_UNUSED = ("unit/", "curr/", "lang/", "region/", "zone/", "translit/", "rbnf/", ".cnv")
ICU_TOOLS_HOW = "Install ICU's tools and a C compiler (Debian: apt-get install icu-devtools gcc)."


def slim_icu(binaries: list[tuple[str, str, str]], workdir: Path) -> list[tuple[str, str, str]]:
    """Swap the wheel's libicudata for one without ICU_UNUSED (the same soname and data symbol)."""
    if not CUTTING or not sys.platform.startswith("linux"):
        return binaries
    out = []
    for dest, src, kind in binaries:
        if Path(dest).name.startswith("libicudata.so."):
            src = str(build_icu_data(Path(src), workdir))
        out.append((dest, src, kind))
    return out


def build_icu_data(lib: Path, workdir: Path) -> Path:
    import re
    import shutil
    import subprocess

    if not (shutil.which("icupkg") and shutil.which("gcc") and shutil.which("readelf")):
        raise BuildConfigError(f"Slimming ICU's data needs icupkg, gcc and readelf. {ICU_TOOLS_HOW}")
    workdir.mkdir(parents=True, exist_ok=True)
    symbols = subprocess.run(["readelf", "-W", "--dyn-syms", str(lib)], capture_output=True, text=True, check=True)
    found = re.search(
        r":\s*([0-9a-f]+)\s+(\d+|0x[0-9a-f]+)\s+OBJECT\s+GLOBAL\s+\w+\s+(\d+)\s+(icudt\d+_dat)", symbols.stdout
    )
    if found is None:
        raise BuildConfigError(f"{lib.name} has no icudtNN_dat symbol; is it ICU's data library?")
    value, size, index, symbol = int(found[1], 16), int(found[2], 0), found[3], found[4]
    sections = subprocess.run(["readelf", "-W", "-S", str(lib)], capture_output=True, text=True, check=True)
    section = re.search(rf"\[\s*{index}\]\s+\S+\s+\S+\s+([0-9a-f]+)\s+([0-9a-f]+)", sections.stdout)
    assert section is not None
    offset = value - int(section[1], 16) + int(section[2], 16)
    with lib.open("rb") as fh:
        fh.seek(offset)
        whole = workdir / f"{symbol.removesuffix('_dat')}l.dat"  # icupkg names items after the file
        whole.write_bytes(fh.read(size))
    items = subprocess.run(["icupkg", "-l", str(whole)], capture_output=True, text=True, check=True).stdout.split()
    unused = [i for i in items if i.startswith(ICU_UNUSED) or i.endswith(ICU_UNUSED)]
    (workdir / "remove.txt").write_text("\n".join(unused) + "\n", encoding="utf-8")
    slim = workdir / "slim" / whole.name
    slim.parent.mkdir(exist_ok=True)
    subprocess.run(["icupkg", "-r", str(workdir / "remove.txt"), str(whole), str(slim)], check=True)
    asm = workdir / "icudata.S"
    asm.write_text(
        f".section .rodata\n.globl {symbol}\n.type {symbol}, @object\n.balign 16\n"
        f'{symbol}:\n.incbin "{slim}"\n.size {symbol}, . - {symbol}\n'
        '.section .note.GNU-stack,"",@progbits\n',
        encoding="utf-8",
    )
    out = workdir / lib.name
    subprocess.run(["gcc", "-shared", "-nostdlib", f"-Wl,-soname,{lib.name}", "-o", str(out), str(asm)], check=True)
    return out


def version() -> str:
    with (ROOT / "pyproject.toml").open("rb") as fh:
        return str(tomllib.load(fh)["project"]["version"])


def keep_binary(dest: str) -> bool:
    name = dest.replace("\\", "/").rsplit("/", 1)[-1]
    return not any(part in name for part in DROP_BINARY_PARTS)


def strip_host_gtk(entries: Iterable[tuple[str, str, str]]) -> list[tuple[str, str, str]]:
    return [e for e in entries if keep_binary(e[0])]


class BuildConfigError(Exception):
    """A build setting that cannot be used; the message says which and how to fix it."""


def oauth_client_datas(env: dict[str, str] | None = None) -> list[tuple[str, str, str]]:
    """The OAuth client JSON as a PyInstaller DATA entry, or nothing for a development build.

    Checked here so a release build never ships a web client or a service-account key by mistake.
    The file's contents are never printed.
    """
    env = dict(os.environ) if env is None else env
    raw = env.get(OAUTH_CLIENT_VAR, "").strip()
    if not raw:
        return []
    path = Path(raw).expanduser()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise BuildConfigError(f"{OAUTH_CLIENT_VAR} names a file that cannot be read ({exc.strerror}).") from None
    except ValueError:
        raise BuildConfigError(f"{OAUTH_CLIENT_VAR} names a file that is not JSON.") from None
    installed = data.get("installed") if isinstance(data, dict) else None
    if not isinstance(installed, dict) or not installed.get("client_id"):
        raise BuildConfigError(
            f"{OAUTH_CLIENT_VAR} must name an OAuth client of type 'Desktop app' (a JSON file with an "
            "'installed' section), as downloaded from Google Cloud > APIs & Services > Credentials."
        )
    return [(OAUTH_CLIENT_DEST, str(path.resolve()), "DATA")]


def update_key_datas(env: dict[str, str] | None = None, workdir: Path | None = None) -> list[tuple[str, str, str]]:
    """The update check's release key as a PyInstaller DATA entry, or nothing for a build without one.

    Checked here so a release never ships an app that holds something other than a key (it would
    believe nothing and say it checks). Written to build/, never into the source tree."""
    env = dict(os.environ) if env is None else env
    key = env.get(UPDATE_KEY_VAR, "").strip()
    if not key:
        return []
    try:
        raw = base64.b64decode(key, validate=True)
    except (ValueError, binascii.Error):
        raw = b""
    if len(raw) != 32:
        raise BuildConfigError(
            f"{UPDATE_KEY_VAR} must be the release key's public half as `sign_manifest.py keygen` prints it "
            "(44 characters of base64)."
        )
    path = (workdir or ROOT / "build") / "update_public_key.txt"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(key + "\n", encoding="ascii")
    return [(UPDATE_KEY_DEST, str(path.resolve()), "DATA")]


#: The oldest macOS the app runs on, and the one the pages promise: Info.plist's LSMinimumSystemVersion and
#: MACOSX_DEPLOYMENT_TARGET for anything compiled during the build. PySide6 6.11.3's and shiboken6's wheels
#: are tagged macosx_13_0 (their binaries need 13.0); google-re2's come tagged 13.0, 14.0 and 15.0, and
#: packaging/lock.py keeps only the hashes of wheels for this version or older in the release lock, so pip
#: on a newer runner cannot choose the others; every other macOS wheel there needs 11.0 or less (checked
#: with `pip download --platform macosx_<n>_0_arm64 --only-binary=:all:`). Apple silicon only.
MACOS_MINIMUM = "13.0"


def info_plist() -> dict[str, object]:
    """Info.plist keys beyond PyInstaller's defaults.

    LSUIElement: a menu-bar (agent) app with no Dock icon or app menu.
    https://developer.apple.com/documentation/bundleresources/information-property-list/lsuielement
    LSMinimumSystemVersion: macOS refuses to open the app on an older system, with its own message.
    https://developer.apple.com/documentation/bundleresources/information-property-list/lsminimumsystemversion
    """
    return {
        "LSMinimumSystemVersion": MACOS_MINIMUM,
        "CFBundleDisplayName": APP_NAME,
        "CFBundleShortVersionString": version(),
        "CFBundleVersion": version(),
        "LSUIElement": True,
        "NSHighResolutionCapable": True,
        "NSHumanReadableCopyright": "Apache-2.0",
    }


def icon(kind: str) -> str | None:
    """The icon file PyInstaller embeds: .ico on Windows, .icns for the macOS bundle, none on Linux."""
    path = ASSETS / f"searchdesk.{kind}"
    return str(path) if path.is_file() else None
