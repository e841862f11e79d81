"""Render the SVG sources in assets/ into every icon file the three platforms ask for.

Why Qt and hand-written containers: Qt (already a dependency of the desktop app) rasterises SVG and
writes PNG; ICO and ICNS are small, documented containers of images, so they are assembled here
byte by byte instead of adding Pillow or a platform tool (iconutil exists only on macOS).

Run it after changing an SVG, and commit what it writes:

    QT_QPA_PLATFORM=offscreen .venv/bin/python assets/render_icons.py           # write
    QT_QPA_PLATFORM=offscreen .venv/bin/python assets/render_icons.py --check   # compare only

Sizes follow each platform's guidance:
- Windows ICO: 16, 20, 24, 32, 40, 48, 64, 256
  https://learn.microsoft.com/en-us/windows/apps/design/style/iconography/app-icon-construction
  Entries below 256 px are 32-bit DIBs (BMP without the file header), 256 px is PNG, as the ICO
  format allows since Windows Vista: https://learn.microsoft.com/en-us/previous-versions/ms997538(v=msdn.10)
- macOS ICNS: 16, 32, 64, 128, 256, 512, 1024 px as the 1x/2x pairs of an .iconset
  https://developer.apple.com/library/archive/documentation/GraphicsAnimation/Conceptual/HighResolutionOSX/Optimizing/Optimizing.html
  (element types as written by Apple's iconutil: icp4 icp5 ic11 ic12 ic07 ic13 ic08 ic14 ic09 ic10).
  The menu-bar icon is a "template image" (black + alpha, name ending in Template) at 18 pt, 1x and 2x:
  https://developer.apple.com/design/human-interface-guidelines/the-menu-bar
- Linux hicolor theme: 16, 22, 24, 32, 48, 64, 128, 256, 512 and the SVG itself
  https://specifications.freedesktop.org/icon-theme-spec/latest/
"""

from __future__ import annotations

import argparse
import os
import struct
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from PySide6.QtGui import QImage

HERE = Path(__file__).resolve().parent
APP_SVG = HERE / "searchdesk.svg"
TRAY_SVGS = {"light": HERE / "tray-light.svg", "dark": HERE / "tray-dark.svg"}
#: The desktop app carries copies of the SVGs inside its package (so pip and PyInstaller builds have them).
DESKTOP_COPIES = HERE.parent / "desktop" / "searchdesk_desktop" / "resources"

APP_PNG_SIZES = (16, 20, 22, 24, 32, 40, 48, 64, 128, 256, 512, 1024)
TRAY_PNG_SIZES = (16, 22, 24, 32, 44, 48, 64)
ICO_SIZES = (16, 20, 24, 32, 40, 48, 64, 256)
#: (ICNS element type, pixel size), in the order iconutil writes them.
ICNS_ELEMENTS = (
    (b"icp4", 16),
    (b"icp5", 32),
    (b"ic11", 32),
    (b"ic12", 64),
    (b"ic07", 128),
    (b"ic13", 256),
    (b"ic08", 256),
    (b"ic14", 512),
    (b"ic09", 512),
    (b"ic10", 1024),
)
MAC_TEMPLATE = (("trayTemplate.png", 18), ("trayTemplate@2x.png", 36))

_app: object | None = None  # the QGuiApplication, kept alive while rendering


class RenderError(Exception):
    """An SVG that Qt cannot read, or an image that cannot be encoded."""


def _qt() -> None:
    """Qt needs a QGuiApplication for painting; offscreen keeps this working without a display."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtGui import QGuiApplication

    global _app
    if QGuiApplication.instance() is None:
        _app = QGuiApplication([sys.argv[0]])


def render(svg: Path, size: int, recolour: str | None = None) -> QImage:
    """A size x size ARGB32 QImage of `svg`; `recolour` paints every opaque pixel in that colour."""
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QColor, QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    renderer = QSvgRenderer(str(svg))
    if not renderer.isValid():
        raise RenderError(f"Qt could not read {svg.name}; check that it is well-formed SVG.")
    image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
    renderer.render(painter)
    if recolour is not None:
        painter.setCompositionMode(QPainter.CompositionMode.CompositionMode_SourceIn)
        painter.fillRect(image.rect(), QColor(recolour))
    painter.end()
    return image.convertToFormat(QImage.Format.Format_ARGB32)


def png_bytes(image: QImage) -> bytes:
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice
    from PySide6.QtGui import QImageWriter

    data = QByteArray()
    buf = QBuffer(data)
    buf.open(QIODevice.OpenModeFlag.WriteOnly)
    writer = QImageWriter(buf, QByteArray(b"PNG"))
    if not writer.write(image):
        raise RenderError(f"Qt could not encode a PNG ({writer.errorString()}).")
    buf.close()
    return bytes(data.data())


def dib_bytes(image: QImage) -> bytes:
    """A 32-bit BITMAPINFOHEADER DIB with its (all-zero) AND mask, as an ICO entry stores it."""
    w, h, stride = image.width(), image.height(), image.bytesPerLine()
    bits = bytes(image.constBits())
    # Format_ARGB32 is 0xAARRGGBB per pixel, i.e. B, G, R, A bytes on little-endian machines.
    rows = []
    for y in range(h - 1, -1, -1):  # DIB rows are stored bottom-up
        raw = bits[y * stride : y * stride + w * 4]
        if sys.byteorder == "big":
            raw = b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4))
        rows.append(raw)
    mask_stride = ((w + 31) // 32) * 4
    header = struct.pack("<IiiHHIIiiII", 40, w, h * 2, 1, 32, 0, w * h * 4, 0, 0, 0, 0)
    return header + b"".join(rows) + bytes(mask_stride * h)


def ico_bytes(images: dict[int, QImage]) -> bytes:
    """An ICO file (ICONDIR + ICONDIRENTRY per size + image data)."""
    sizes = sorted(images)
    blobs = [png_bytes(images[s]) if s >= 256 else dib_bytes(images[s]) for s in sizes]
    out = [struct.pack("<HHH", 0, 1, len(sizes))]
    offset = 6 + 16 * len(sizes)
    for size, blob in zip(sizes, blobs, strict=True):
        dim = 0 if size >= 256 else size  # 0 means 256
        out.append(struct.pack("<BBBBHHII", dim, dim, 0, 0, 1, 32, len(blob), offset))
        offset += len(blob)
    return b"".join(out + blobs)


def icns_bytes(pngs: dict[int, bytes]) -> bytes:
    """An ICNS file: 'icns' + total length, then (type, length incl. 8-byte header, PNG data)."""
    body = b"".join(kind + struct.pack(">I", len(pngs[size]) + 8) + pngs[size] for kind, size in ICNS_ELEMENTS)
    return b"icns" + struct.pack(">I", len(body) + 8) + body


def outputs() -> dict[Path, bytes]:
    """Every generated file and its bytes."""
    _qt()
    files: dict[Path, bytes] = {}
    app_pngs = {s: png_bytes(render(APP_SVG, s)) for s in APP_PNG_SIZES}
    for s in APP_PNG_SIZES:
        files[HERE / "png" / f"searchdesk-{s}.png"] = app_pngs[s]
    for theme, svg in TRAY_SVGS.items():
        for s in TRAY_PNG_SIZES:
            files[HERE / "png" / f"tray-{theme}-{s}.png"] = png_bytes(render(svg, s))
    for name, s in MAC_TEMPLATE:
        files[HERE / "png" / name] = png_bytes(render(TRAY_SVGS["light"], s, recolour="#000000"))
    files[HERE / "searchdesk.ico"] = ico_bytes({s: render(APP_SVG, s) for s in ICO_SIZES})
    files[HERE / "searchdesk.icns"] = icns_bytes({s: app_pngs[s] for _, s in ICNS_ELEMENTS})
    return files


#: Qt's rasteriser picks CPU-specific code paths, so two machines can differ by one step of
#: anti-aliasing in a few pixels; a drawing change moves far more than this.
PIXEL_TOLERANCE = 2


def _pixels(png: bytes) -> tuple[int, int, bytes] | None:
    from PySide6.QtGui import QImage

    image = QImage()
    if not image.loadFromData(png):
        return None
    image = image.convertToFormat(QImage.Format.Format_RGBA8888)
    return image.width(), image.height(), bytes(image.constBits())


def _close(a: bytes, b: bytes) -> bool:
    return len(a) == len(b) and all(abs(x - y) <= PIXEL_TOLERANCE for x, y in zip(a, b, strict=True))


def _same_png(old: bytes, new: bytes) -> bool:
    a, b = _pixels(old), _pixels(new)
    return a is not None and b is not None and a[:2] == b[:2] and _close(a[2], b[2])


def _ico_entries(data: bytes) -> list[tuple[bytes, bytes]]:
    """(directory entry without size/offset, image blob) per ICO entry."""
    _, _, count = struct.unpack_from("<HHH", data)
    entries = []
    for i in range(count):
        head = data[6 + 16 * i : 6 + 16 * i + 8]
        size, offset = struct.unpack_from("<II", data, 6 + 16 * i + 8)
        entries.append((head, data[offset : offset + size]))
    return entries


def _icns_entries(data: bytes) -> list[tuple[bytes, bytes]]:
    entries, pos = [], 8
    while pos + 8 <= len(data):
        kind, length = data[pos : pos + 4], struct.unpack_from(">I", data, pos + 4)[0]
        entries.append((kind, data[pos + 8 : pos + length]))
        pos += max(length, 8)
    return entries


def _same_blob(old: bytes, new: bytes) -> bool:
    if old.startswith(b"\x89PNG") and new.startswith(b"\x89PNG"):
        return _same_png(old, new)
    return old[:40] == new[:40] and _close(old[40:], new[40:])  # a DIB: header, then raw pixels


def same_picture(suffix: str, old: bytes, new: bytes) -> bool:
    """Whether a committed file shows what a fresh render shows, within PIXEL_TOLERANCE per channel."""
    if old == new:
        return True
    try:
        if suffix == ".png":
            return _same_png(old, new)
        parse = {".ico": _ico_entries, ".icns": _icns_entries}[suffix]
        a, b = parse(old), parse(new)
    except (struct.error, KeyError):
        return False
    return len(a) == len(b) and all(ha == hb and _same_blob(x, y) for (ha, x), (hb, y) in zip(a, b, strict=True))


def stale_copies() -> list[Path]:
    """The desktop package's SVG copies that no longer match their source here."""
    if not DESKTOP_COPIES.is_dir():
        return []
    # The PNG is the system notification's icon: D-Bus servers and Windows' AppUserModelID take a file, not an SVG.
    sources = [APP_SVG, *TRAY_SVGS.values(), HERE / "png" / "searchdesk-128.png"]
    copies = [(DESKTOP_COPIES / s.name, s) for s in sources]
    return [copy for copy, src in copies if copy.is_file() and copy.read_bytes() != src.read_bytes()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--check", action="store_true", help="fail if a committed file differs; write nothing")
    args = parser.parse_args(argv)
    try:
        files = outputs()
    except RenderError as exc:
        print(f"render_icons: {exc}", file=sys.stderr)
        return 1
    stale = [p for p, data in files.items() if not p.is_file() or not same_picture(p.suffix, p.read_bytes(), data)]
    drifted = stale_copies()
    for copy in drifted:
        print(f"render_icons: {copy} differs from its source in assets/; copy it over", file=sys.stderr)
    if args.check:
        for p in stale:
            print(f"render_icons: {p.relative_to(HERE)} is out of date; run assets/render_icons.py", file=sys.stderr)
        return 1 if stale or drifted else 0
    for p in stale:
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(files[p])
    print(f"render_icons: {len(files)} files, {len(stale)} written")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
