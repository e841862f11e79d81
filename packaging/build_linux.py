"""Linux: a tarball of the frozen app with a .desktop file, icons and a per-user install script; and
with --deb, a Debian package of the same app for the whole computer.

No AppImage: its tool is not on our package registries. The tarball unpacks anywhere; its
install.sh copies the app under ~/.local/share/searchdesk, registers the menu entry and icons in
the user's XDG directories, and links both programs into ~/.local/bin. uninstall.sh asks the app
to sign out (revoking the Google token and clearing the keyring entry and its autostart entry),
then removes what install.sh added.

The .deb (`--deb`, built with dpkg-deb) installs the app in /opt/searchdesk, links `searchdesk` and
`searchdesk-server` into /usr/bin, and adds the same .desktop file and icons under /usr/share. It
depends on the libraries Qt's window system needs, the `run` list of scripts/system-packages.sh (read
from there, so there is one list). Removing it removes the files; each person's sign-in stays in their
keyring until they sign out in the app (a package script runs as root and cannot reach it).

Platform documentation followed:
- Desktop Entry Specification: https://specifications.freedesktop.org/desktop-entry-spec/latest/
- Icon Theme Specification (hicolor sizes, scalable/): https://specifications.freedesktop.org/icon-theme-spec/latest/
- XDG Base Directory Specification: https://specifications.freedesktop.org/basedir-spec/latest/
- Debian Policy, binary control files: https://www.debian.org/doc/debian-policy/ch-controlfields.html
- dpkg-deb(1): --root-owner-group, -Z
Build on the oldest distribution you support: the bundle carries the build host's glibc baseline.
"""

from __future__ import annotations

import argparse
import gzip
import io
import os
import shutil
import subprocess
import tarfile
from pathlib import Path

from buildlib import ASSETS, BUILD, DIST, ROOT, BuildError, Runner, machine, main_wrapper, require_dir, version

HICOLOR_SIZES = (16, 22, 24, 32, 48, 64, 128, 256, 512)

DESKTOP_ENTRY = """\
[Desktop Entry]
Type=Application
Version=1.5
Name=SearchDesk
GenericName=Search Console assistant
Comment=Google sign-in and approvals for Claude's Search Console tools
Exec=searchdesk
Icon=searchdesk
Terminal=false
Categories=Network;Utility;
Keywords=Google;Search Console;SEO;Claude;MCP;
StartupNotify=false
StartupWMClass=searchdesk
X-GNOME-UsesNotifications=true
"""

INSTALL_SH = r"""#!/bin/sh
# Install SearchDesk for this user only (no root): copies the app, adds the menu entry and icons.
set -eu
here=$(CDPATH= cd -- "$(dirname -- "$0")" && pwd)
data=${XDG_DATA_HOME:-$HOME/.local/share}
app="$data/searchdesk/app"
bin="$HOME/.local/bin"
mkdir -p "$data/searchdesk" "$data/applications" "$bin"
rm -rf "$app.new"
cp -a "$here/app" "$app.new"
rm -rf "$app"
mv "$app.new" "$app"
for f in "$here"/share/icons/hicolor/*/apps/searchdesk.*; do
  rel=${f#"$here/share/"}
  mkdir -p "$data/$(dirname -- "$rel")"
  cp "$f" "$data/$rel"
done
# Exec with an absolute, quoted path (Desktop Entry spec: quote with "", escape \ " ` $, double %).
q=$(printf '%s' "$app/searchdesk" | sed -e 's/[\\"`$]/\\&/g' -e 's/%/%%/g')
{ grep -v '^Exec=' "$here/share/applications/searchdesk.desktop"; printf 'Exec="%s"\n' "$q"; } \
  > "$data/applications/searchdesk.desktop"
ln -sf "$app/searchdesk" "$bin/searchdesk"
ln -sf "$app/searchdesk-server" "$bin/searchdesk-server"
command -v update-desktop-database >/dev/null 2>&1 && update-desktop-database -q "$data/applications" || true
command -v gtk-update-icon-cache >/dev/null 2>&1 && gtk-update-icon-cache -q -t "$data/icons/hicolor" || true
echo "SearchDesk installed in $app. Start it from your applications menu, or run: $bin/searchdesk"
"""

UNINSTALL_SH = r"""#!/bin/sh
# Remove SearchDesk for this user: sign out first (revokes the Google token, clears the keyring
# entry and the autostart entry), then remove the files install.sh added.
set -eu
data=${XDG_DATA_HOME:-$HOME/.local/share}
app="$data/searchdesk/app"
if [ -x "$app/searchdesk" ]; then
  "$app/searchdesk" --uninstall-cleanup ||
    echo "SearchDesk could not sign out; revoke its access at https://myaccount.google.com/permissions" >&2
fi
rm -rf "$app"
rmdir "$data/searchdesk" 2>/dev/null || true
rm -f "$data/applications/searchdesk.desktop" "$HOME/.local/bin/searchdesk" "$HOME/.local/bin/searchdesk-server"
rm -f "$data"/icons/hicolor/*/apps/searchdesk.png "$data/icons/hicolor/scalable/apps/searchdesk.svg"
echo "SearchDesk removed. Your settings remain in ${XDG_CONFIG_HOME:-$HOME/.config}/searchdesk."
"""


def members(app_dir: Path, top: str) -> list[tuple[str, Path | bytes, int]]:
    """(archive name, source file or bytes, mode) for every file, in a stable order."""
    out: list[tuple[str, Path | bytes, int]] = []
    for path in sorted(app_dir.rglob("*")):
        if path.is_file() or path.is_symlink():
            rel = path.relative_to(app_dir).as_posix()
            mode = 0o755 if os.access(path, os.X_OK) and not path.is_symlink() else 0o644
            out.append((f"{top}/app/{rel}", path, mode))
    out.append((f"{top}/share/applications/searchdesk.desktop", DESKTOP_ENTRY.encode(), 0o644))
    for size in HICOLOR_SIZES:
        png = ASSETS / "png" / f"searchdesk-{size}.png"
        out.append((f"{top}/share/icons/hicolor/{size}x{size}/apps/searchdesk.png", png, 0o644))
    out.append((f"{top}/share/icons/hicolor/scalable/apps/searchdesk.svg", ASSETS / "searchdesk.svg", 0o644))
    out.append((f"{top}/install.sh", INSTALL_SH.encode(), 0o755))
    out.append((f"{top}/uninstall.sh", UNINSTALL_SH.encode(), 0o755))
    return out


def write_tar(entries: list[tuple[str, Path | bytes, int]], out: Path, mtime: int) -> None:
    """A gzip tarball with fixed owners and times, so two builds of the same tree are identical."""
    tmp = out.with_suffix(".partial")
    with (
        tmp.open("wb") as raw,
        gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=6, mtime=mtime) as gz,
        tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar,
    ):
        for name, src, mode in entries:
            info = tarfile.TarInfo(name)
            info.mode, info.mtime, info.uid, info.gid, info.uname, info.gname = mode, mtime, 0, 0, "", ""
            if isinstance(src, Path) and src.is_symlink():
                info.type, info.linkname = tarfile.SYMTYPE, os.readlink(src)
                tar.addfile(info)
                continue
            data = src if isinstance(src, bytes) else src.read_bytes()
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    tmp.replace(out)


def check_desktop_entry(run: Runner) -> None:
    """desktop-file-validate when it is installed (Debian: desktop-file-utils); optional."""
    tool = shutil.which("desktop-file-validate")
    if tool is None:
        run.say("desktop-file-validate not installed; skipping the .desktop lint")
        return
    probe = DIST / "searchdesk.desktop"
    if not run.dry_run:
        probe.write_text(DESKTOP_ENTRY, encoding="utf-8")
    try:
        run.run([tool, probe])
    finally:
        probe.unlink(missing_ok=True)


def build(app_dir: Path, run: Runner, out: Path | None = None) -> Path:
    require_dir(app_dir, "build it first: make bundle (or pyinstaller packaging/searchdesk.spec).", dry_run=run.dry_run)
    for name in ("searchdesk", "searchdesk-server"):
        if not run.dry_run and not (app_dir / name).is_file():
            raise BuildError(f"{app_dir / name} is missing; this does not look like a Linux build of SearchDesk.")
    top = f"searchdesk-{version()}-linux-{machine()}"
    out = out or DIST / f"{top}.tar.gz"
    check_desktop_entry(run)
    run.say(
        "notifications: sent as app 'SearchDesk' (the .desktop Name; windows carry desktop file name "
        "'searchdesk'), X-GNOME-UsesNotifications=true lists SearchDesk in the desktop's notification settings"
    )
    run.say(f"tar {app_dir} + .desktop + icons + install.sh/uninstall.sh -> {out}")
    if not run.dry_run:
        mtime = int(os.environ.get("SOURCE_DATE_EPOCH", "0") or 0)
        write_tar(members(app_dir, top), out, mtime)
    return out


DEB_PREFIX = "/opt/searchdesk"
DEB_CONTROL = """\
Package: searchdesk
Version: {version}
Architecture: {arch}
Maintainer: SearchDesk maintainers <{homepage}/issues>
Installed-Size: {size_kib}
Depends: {depends}
Section: net
Priority: optional
Homepage: {homepage}
Description: Google sign-in and approvals for Claude's Search Console tools
 SearchDesk lets Claude read your Google Search Console data and asks you
 before anything that cannot be undone. Two programs: the tray app
 (searchdesk) and the server Claude Desktop starts (searchdesk-server).
"""


def qt_depends() -> list[str]:
    """The libraries Qt's window system needs: scripts/system-packages.sh's `run` list, read from it."""
    script = ROOT / "scripts" / "system-packages.sh"
    out = subprocess.run(["bash", str(script), "--print", "run"], check=True, capture_output=True, text=True)
    names = out.stdout.split()
    if not names:
        raise BuildError(f"{script.name} listed no packages for run")
    return names


def deb_arch(run: Runner) -> str:
    """Debian's name for this machine (amd64, arm64), from dpkg itself."""
    if run.dry_run and shutil.which("dpkg") is None:
        return {"x86_64": "amd64"}.get(machine(), machine())
    return subprocess.run(["dpkg", "--print-architecture"], check=True, capture_output=True, text=True).stdout.strip()


def stage_deb(app_dir: Path, root: Path, control: str) -> None:
    """The package's tree: the app in /opt, links in /usr/bin, menu entry and icons in /usr/share."""
    if root.exists():
        shutil.rmtree(root)
    (root / "DEBIAN").mkdir(parents=True)
    shutil.copytree(app_dir, root / DEB_PREFIX.lstrip("/"), symlinks=True)
    bin_dir = root / "usr" / "bin"
    bin_dir.mkdir(parents=True)
    for name in ("searchdesk", "searchdesk-server"):
        (bin_dir / name).symlink_to(f"{DEB_PREFIX}/{name}")
    share = root / "usr" / "share"
    (share / "applications").mkdir(parents=True)
    entry = DESKTOP_ENTRY.replace("Exec=searchdesk\n", f"Exec={DEB_PREFIX}/searchdesk\n")
    (share / "applications" / "searchdesk.desktop").write_text(entry, encoding="utf-8")
    for size in HICOLOR_SIZES:
        folder = share / "icons" / "hicolor" / f"{size}x{size}" / "apps"
        folder.mkdir(parents=True)
        shutil.copyfile(ASSETS / "png" / f"searchdesk-{size}.png", folder / "searchdesk.png")
    scalable = share / "icons" / "hicolor" / "scalable" / "apps"
    scalable.mkdir(parents=True)
    shutil.copyfile(ASSETS / "searchdesk.svg", scalable / "searchdesk.svg")
    for path in root.rglob("*"):  # dpkg wants no group/other write bits; PyInstaller's files may have them
        if not path.is_symlink():
            path.chmod(path.stat().st_mode & ~0o022)
    (root / "DEBIAN" / "control").write_text(control, encoding="utf-8")


def build_deb(app_dir: Path, run: Runner, out: Path | None = None, stage: Path | None = None) -> Path:
    """dist/searchdesk_<version>_<arch>.deb from the frozen app (make bundle), staged in `stage`."""
    from searchdesk_desktop.project import REPOSITORY

    require_dir(app_dir, "build it first: make bundle (or pyinstaller packaging/searchdesk.spec).", dry_run=run.dry_run)
    for name in ("searchdesk", "searchdesk-server"):
        if not run.dry_run and not (app_dir / name).is_file():
            raise BuildError(f"{app_dir / name} is missing; this does not look like a Linux build of SearchDesk.")
    dpkg_deb = run.tool("dpkg-deb", "Debian: it comes with dpkg.")
    arch = deb_arch(run)
    out = out or DIST / f"searchdesk_{version()}_{arch}.deb"
    depends = qt_depends()
    run.say(f"Depends (scripts/system-packages.sh run): {', '.join(depends)}")
    root = stage or BUILD / "deb" / "root"
    run.say(f"stage {app_dir} -> {root}{DEB_PREFIX}, /usr/bin links, .desktop file and icons under /usr/share")
    if not run.dry_run:
        size_kib = sum(p.stat().st_size for p in app_dir.rglob("*") if p.is_file() and not p.is_symlink()) // 1024
        control = DEB_CONTROL.format(
            version=version(), arch=arch, size_kib=size_kib, depends=", ".join(depends), homepage=REPOSITORY
        )
        stage_deb(app_dir, root, control)
    # gzip, not xz: a fifth of the time for a package a tenth larger, and every dpkg reads it.
    run.run([dpkg_deb, "--root-owner-group", "-Zgzip", "-z6", "--build", root, out])
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Package dist/SearchDesk as a Linux tarball.")
    parser.add_argument("--app-dir", type=Path, default=DIST / "SearchDesk")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--deb", action="store_true", help="build the .deb (dpkg-deb) instead of the tarball")
    parser.add_argument("--dry-run", action="store_true", help="print the steps; change nothing")
    args = parser.parse_args(argv)
    run = Runner(dry_run=args.dry_run)

    def body() -> int:
        if args.deb:
            with run.step("linux .deb"):
                path = build_deb(args.app_dir, run, args.out)
        else:
            with run.step("linux tarball"):
                path = build(args.app_dir, run, args.out)
        run.say(f"-> {path}")
        run.summary()
        return 0

    return main_wrapper("build_linux", body)


if __name__ == "__main__":
    raise SystemExit(main())
