#!/usr/bin/env bash
# The Linux release job, step for step, in a clean Debian 12 root. Two modes:
#   packaging/release_linux.sh --in-container   inside the release job's own debian:12 container (the
#                                               container is the clean root; release.yml runs this)
#   packaging/release_linux.sh --host           on a Debian host as root (.ci/run): makes a clean Debian 12
#                                               root with mmdebstrap, copies the working tree in and runs
#                                               --in-container there, then copies dist/release/linux back
set -euo pipefail
cd "$(dirname "$0")/.."

# release.yml's Linux job after checkout: Python for the image, the update key's check, the build (this
# script's --in-container: the job's one build step), then update.json signed. The job runs the check and
# the signing as steps of their own (packaging/signer.sh: a fresh venv holding only cryptography, by hash);
# the rehearsal runs all four, with a throwaway key made here standing in for the secret and the variable,
# so the app is built carrying that key, the check passes, the manifest is signed, and the build's own
# reader believes it. A step that fails fails the rehearsal.
job_steps() {
  bash packaging/container_base.sh
  python3 packaging/release_build.py linux
}

rehearse() {
  bash packaging/container_base.sh
  local dir version
  dir=$(mktemp -d /tmp/rehearsal-signer.XXXXXX)
  export SIGNER_DIR="$dir/venv" GITHUB_REPOSITORY=searchdesk/searchdesk
  bash packaging/signer.sh check-key >/dev/null # neither key set yet: passes, and leaves the signer's venv
  "$dir/venv/bin/python" -I packaging/sign_manifest.py keygen --private-key-file "$dir/key" >"$dir/keygen.txt"
  SEARCHDESK_UPDATE_SIGNING_KEY=$(cat "$dir/key")
  SEARCHDESK_UPDATE_PUBLIC_KEY=$(tail -n 1 "$dir/keygen.txt")
  export SEARCHDESK_UPDATE_SIGNING_KEY SEARCHDESK_UPDATE_PUBLIC_KEY
  export SEARCHDESK_BUILD_UPDATE_PUBLIC_KEY=$SEARCHDESK_UPDATE_PUBLIC_KEY # release.yml: vars.UPDATE_PUBLIC_KEY
  bash packaging/signer.sh check-key
  python3 packaging/release_build.py linux
  version=$(python3 -c 'import tomllib; print(tomllib.load(open("pyproject.toml", "rb"))["project"]["version"])')
  bash packaging/signer.sh sign "v$version" dist/release/linux/update.json
  .venv/bin/python - dist/release/linux/update.json "$SEARCHDESK_UPDATE_PUBLIC_KEY" <<'PY'
import sys
from pathlib import Path

from searchdesk_desktop.updates.manifest import load_key, read_manifest

key = load_key(sys.argv[2])
assert key is not None, "the throwaway public key does not load"
release = read_manifest(Path(sys.argv[1]).read_bytes(), key)
print(f"release_linux: update.json signed for {release.version} and believed by the app's reader", file=sys.stderr)
PY
  rm -rf "$dir"
}

# This machine's extra certificate authorities (a network that inspects TLS) and the variables that point
# programs at the system bundle go into the root too; nothing else of the host does.
CA_VARS=(SSL_CERT_FILE SSL_CERT_DIR PIP_CERT REQUESTS_CA_BUNDLE NODE_EXTRA_CA_CERTS CURL_CA_BUNDLE)
root=""
start=$(date +%s)

cleanup() {
  local status=$?
  trap - EXIT
  if [ -n "$root" ]; then
    for m in var/cache/apt/archives root/.cache/pip root/.npm dev/pts dev proc; do
      if mountpoint -q "$root/$m"; then umount -l "$root/$m"; fi
    done
    # The root is a tmpfs of its own: unmounting it frees it at once. Never rm into a mount still there.
    if mountpoint -q "$root"; then umount -l "$root"; fi
    rmdir "$root" 2>/dev/null || rm -rf --one-file-system "$root"
  fi
  echo "release_linux: $(($(date +%s) - start)) s in all$([ "$status" -eq 0 ] || echo ", failed")" >&2
  exit "$status"
}

host() {
  [ "$(id -u)" -eq 0 ] || { echo "release_linux.sh --host: run as root (it builds and enters a chroot)" >&2; exit 2; }
  command -v mmdebstrap >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mmdebstrap >/dev/null; }
  trap cleanup EXIT
  root=$(mktemp -d /var/tmp/searchdesk-rehearsal.XXXXXX)
  # In memory (about 4 GB at most: the root, the venv, the build): fast to write, gone at once afterwards.
  mount -t tmpfs -o size=8G,mode=0755 searchdesk-rehearsal "$root"
  local sources=/etc/apt/sources.list.d/debian.sources
  [ -f "$sources" ] || sources=http://deb.debian.org/debian
  # dpkg without fsync in this throwaway root (written to its dpkg.cfg.d): the job's steps are unchanged.
  mmdebstrap --quiet --variant=minbase --dpkgopt=force-unsafe-io bookworm "$root" "$sources"
  echo "release_linux: clean Debian 12 root in $(($(date +%s) - start)) s" >&2
  cp /etc/resolv.conf "$root/etc/resolv.conf"
  if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
    mkdir -p "$root/usr/local/share/ca-certificates"
    cp /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/"
  fi
  mount -t proc proc "$root/proc"
  mount --bind /dev "$root/dev"
  mount --bind /dev/pts "$root/dev/pts"
  # Downloads kept between rehearsals (build/ is not committed); pip still checks every hash.
  local cache=$PWD/build/rehearsal-cache m
  for m in var/cache/apt/archives root/.cache/pip root/.npm; do
    mkdir -p "$cache/$m" "$root/$m"
    mount --bind "$cache/$m" "$root/$m"
  done
  mkdir -p "$root/src"
  # The working tree as git sees it (uncommitted changes included, ignored files not); a checkout without
  # git (actions/checkout in a container that has none) is copied whole but for what builds make.
  if command -v git >/dev/null 2>&1 && git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    git ls-files -z --cached --others --exclude-standard | while IFS= read -r -d '' f; do
      [ -e "$f" ] && printf '%s\0' "$f"
    done | xargs -0 cp --parents -a -t "$root/src"
  else
    tar --exclude=./.venv --exclude=./build --exclude=./dist --exclude=./.git -cf - . | tar -xf - -C "$root/src"
  fi
  local env=(HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8)
  local v
  for v in "${CA_VARS[@]}" SEARCHDESK_BUILD_OAUTH_CLIENT_JSON; do
    [ -n "${!v:-}" ] && env+=("$v=${!v}")
  done
  chroot "$root" /usr/bin/env -i "${env[@]}" bash /src/packaging/release_linux.sh --in-container --rehearse-signing
  # What the job would upload, and the frozen folders it was made from (for a look, or an SBOM check).
  rm -rf dist && cp -a "$root/src/dist" dist
  ls -l dist/release/linux >&2
}

case "${1:-}" in
  --in-container)
    if [ "${2:-}" = --rehearse-signing ]; then rehearse; else job_steps; fi
    ;;
  --host) host ;;
  *) echo "usage: $0 --in-container | --host" >&2; exit 2 ;;
esac
