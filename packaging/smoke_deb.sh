#!/usr/bin/env bash
# Install the .deb with apt, start both programs from where it installs them, install it again over itself
# (an upgrade's maintainer scripts: the old package's prerm, the new one's postinst) and start them again,
# then purge it: the
# machine is left as it was, also when a step fails (the trap purges the package and any package apt
# brought in for it, and the script then fails). Needs root (CI runs as root). Usage:
#   packaging/smoke_deb.sh dist/searchdesk_<version>_<arch>.deb
set -euo pipefail
deb=$(realpath "$1")
[ "$(id -u)" -eq 0 ] || { echo "smoke_deb: run as root (it installs and purges a package)" >&2; exit 2; }
if dpkg-query -W -f='${Status}' searchdesk 2>/dev/null | grep -q "install ok installed"; then
  echo "smoke_deb: searchdesk is already installed here; not touching it" >&2
  exit 2
fi
export DEBIAN_FRONTEND=noninteractive
installed() { dpkg-query -W -f='${db:Status-Abbrev} ${binary:Package}\n' | awk '$1 ~ /^.i/ {print $2}' | sort; }
before=$(installed)
work=$(mktemp -d)

leave_as_it_was() {
  status=$?
  trap - EXIT
  apt-get purge -y -qq searchdesk >/dev/null 2>&1 || dpkg --purge searchdesk >/dev/null 2>&1 || true
  added=$(comm -13 <(printf '%s\n' "$before") <(installed) | tr '\n' ' ')
  if [ -n "${added// /}" ]; then
    # shellcheck disable=SC2086  # one word per package name
    apt-get purge -y -qq $added >/dev/null 2>&1 || true
  fi
  rm -rf "$work"
  left=$(comm -3 <(printf '%s\n' "$before") <(installed))
  if [ -n "$left" ] || [ -e /opt/searchdesk ] || [ -e /usr/bin/searchdesk ] || [ -e /usr/bin/searchdesk-server ]; then
    echo "smoke_deb: the machine is not as it was: ${left:-files of /opt/searchdesk or /usr/bin remain}" >&2
    status=1
  fi
  echo "smoke_deb: purged ($(( $(date +%s) - start )) s in all)$([ "$status" -eq 0 ] || echo ", after a failure")" >&2
  exit "$status"
}
start=$(date +%s)
trap leave_as_it_was EXIT

# Throwaway home and XDG folders, as packaging/smoke.py gives the frozen programs.
export HOME="$work/home" XDG_CONFIG_HOME="$work/config" XDG_DATA_HOME="$work/data" XDG_CACHE_HOME="$work/cache"
export XDG_RUNTIME_DIR="$work/run" QT_QPA_PLATFORM=offscreen
mkdir -p "$HOME" "$XDG_CONFIG_HOME" "$XDG_DATA_HOME" "$XDG_CACHE_HOME" "$XDG_RUNTIME_DIR"
chmod 700 "$XDG_RUNTIME_DIR"

apt-get install -y -qq --no-install-recommends "$deb" >/dev/null
echo "smoke_deb: installed ($(( $(date +%s) - start )) s)" >&2
[ "$(readlink /usr/bin/searchdesk-server)" = /opt/searchdesk/searchdesk-server ]
[ "$(readlink /usr/bin/searchdesk)" = /opt/searchdesk/searchdesk ]
grep -q '^Exec=/opt/searchdesk/searchdesk$' /usr/share/applications/searchdesk.desktop
[ -f /usr/share/icons/hicolor/scalable/apps/searchdesk.svg ]
started() {
  (cd "$work" && /usr/bin/searchdesk-server --check --demo >"$work/check.txt") || { cat "$work/check.txt" >&2; exit 1; }
  (cd "$work" && timeout 60 /usr/bin/searchdesk --check --demo >"$work/check.txt") || { cat "$work/check.txt" >&2; exit 1; }
  (cd "$work" && timeout 60 /usr/bin/searchdesk --demo --quit-after 2)
}
started
echo "smoke_deb: both programs ran from /usr/bin ($(( $(date +%s) - start )) s)" >&2
apt-get install -y -qq --no-install-recommends --reinstall "$deb" >/dev/null
started
echo "smoke_deb: upgraded over itself and ran again ($(( $(date +%s) - start )) s)" >&2
