#!/usr/bin/env bash
# The Linux release job, step for step, in a clean Debian 12 root. Two modes:
#   packaging/release_linux.sh --in-container   inside the release job's own debian:12 container (the
#                                               container is the clean root; release.yml runs this)
#   packaging/release_linux.sh --host           on a Debian host as root (.ci/run): makes a clean Debian 12
#                                               root with mmdebstrap, copies the working tree in and runs
#                                               --in-container there, then copies dist/release/linux back
set -euo pipefail
cd "$(dirname "$0")/.."

job_steps() {
  bash packaging/container_base.sh
  python3 packaging/release_build.py linux
}

host() {
  [ "$(id -u)" -eq 0 ] || { echo "release_linux.sh --host: run as root (it builds and enters a chroot)" >&2; exit 2; }
  command -v mmdebstrap >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mmdebstrap >/dev/null; }
  local start root
  start=$(date +%s)
  root=$(mktemp -d /var/tmp/searchdesk-rehearsal.XXXXXX)
  cleanup() {
    local status=$?
    for m in proc dev/pts dev; do umount -l "$root/$m" 2>/dev/null || true; done
    rm -rf --one-file-system "$root"
    echo "release_linux: $(($(date +%s) - start)) s in all" >&2
    exit "$status"
  }
  trap cleanup EXIT
  local sources=/etc/apt/sources.list.d/debian.sources
  [ -f "$sources" ] || sources=http://deb.debian.org/debian
  mmdebstrap --quiet --variant=minbase bookworm "$root" "$sources"
  echo "release_linux: clean Debian 12 root in $(($(date +%s) - start)) s" >&2
  cp /etc/resolv.conf "$root/etc/resolv.conf"
  mount -t proc proc "$root/proc"
  mount --bind /dev "$root/dev"
  mount --bind /dev/pts "$root/dev/pts"
  mkdir -p "$root/src"
  git ls-files -z --cached --others --exclude-standard | xargs -0 cp --parents -t "$root/src" 2>/dev/null || true
  chroot "$root" /usr/bin/env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    LANG=C.UTF-8 bash /src/packaging/release_linux.sh --in-container
  rm -rf dist/release/linux && mkdir -p dist/release
  cp -r "$root/src/dist/release/linux" dist/release/linux
}

case "${1:-}" in
  --in-container) job_steps ;;
  --host) host ;;
  *) echo "usage: $0 --in-container | --host" >&2; exit 2 ;;
esac
