#!/usr/bin/env bash
# The system packages SearchDesk's commands need on Linux, in one list (Debian names), for `make run`,
# `make test`, `make bundle` and .ci/run. Usage: scripts/system-packages.sh [--print] venv|run|test|bundle
# (--print: list the names, one a line, and install nothing; the .deb's Depends are the `run` list.)
#
# Installs what is missing when it can (root, or sudo without a password, and apt-get); otherwise stops
# at once with the one command to run. Elsewhere (macOS, Windows) there is nothing to install: the
# system's own keyring, notifications and windowing are used.
set -euo pipefail

print_only=0
if [ "${1:-}" = --print ]; then print_only=1; shift; fi

# Qt's window system on Linux: the xcb platform plugin and what it links against.
run=(
  libegl1 libgl1 libfontconfig1 libxkbcommon0 libglib2.0-0 libdbus-1-3
  libxcb1 libx11-xcb1 libxcb-icccm4 libxcb-keysyms1 libxcb-cursor0 libxkbcommon-x11-0 libxcb-shape0
  libxcb-xkb1 libxcb-image0 libxcb-render-util0 libxcb-randr0 libxcb-xfixes0 libxcb-sync1 libxcb-shm0
  libxcb-util1
)
# The suite: a real Secret Service keyring on a private bus, a real X display with a window manager and
# real input (the approval dialog's focus tests), and make itself.
test=(
  "${run[@]}" make
  dbus-daemon gnome-keyring
  xvfb xauth
  openbox xdotool
)
# Python's venv module (Debian ships it apart from python3), for the first `make` on a fresh machine.
venv=(python3-venv)
# Freezing the programs: makensis, ICU's tools and a C compiler to slim ICU's data, the .mcpb CLI; the
# Python shared library PyInstaller puts in the app (Debian ships it apart from python3); and the `run`
# list, for the smoke test that starts the frozen app (a clean Debian 12 has none of Qt's libraries).
bundle=("${run[@]}" nsis icu-devtools gcc)
if command -v python3 >/dev/null 2>&1; then
  bundle+=("libpython$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')")
fi

case "${1:-}" in
  venv) wanted=("${venv[@]}") ;;
  run) wanted=("${run[@]}") ;;
  test) wanted=("${test[@]}") ;;
  bundle)
    wanted=("${bundle[@]}")
    command -v npm >/dev/null 2>&1 || wanted+=(nodejs npm)
    ;;
  *) echo "usage: $0 [--print] venv|run|test|bundle" >&2; exit 2 ;;
esac
if [ "$print_only" = 1 ]; then printf '%s\n' "${wanted[@]}"; exit 0; fi

[ "$(uname -s)" = Linux ] || exit 0

if ! command -v dpkg >/dev/null 2>&1; then
  echo "SearchDesk needs these system packages (Debian's names; your system's may differ):" >&2
  echo "  ${wanted[*]}" >&2
  echo "Install them with your package manager, then run make again." >&2
  exit 1
fi

missing=()
for p in "${wanted[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ "${#missing[@]}" -eq 0 ] && exit 0

if [ "$(id -u)" -eq 0 ]; then
  sudo=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  sudo=(sudo)
else
  echo "SearchDesk needs these system packages, which are not installed: ${missing[*]}" >&2
  echo "Install them with this one command, then run make again:" >&2
  echo "  sudo apt-get install -y --no-install-recommends ${missing[*]}" >&2
  exit 1
fi

echo "Installing the system packages SearchDesk needs: ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
