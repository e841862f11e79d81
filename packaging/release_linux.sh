#!/usr/bin/env bash
# The Linux release job, step for step, in a clean Debian 12 root. Two modes:
#   packaging/release_linux.sh --in-container   inside the release job's own debian:12 container (the
#                                               container is the clean root; release.yml runs this)
#   packaging/release_linux.sh --host           on a Debian host as root (.ci/run): makes a clean Debian 12
#                                               root with mmdebstrap, copies the working tree in and runs
#                                               --in-container there, then copies dist/release/linux back
set -euo pipefail
cd "$(dirname "$0")/.."

# release.yml's Linux job runs these two after checkout; its next step signs the update manifest.
job_steps() {
  bash packaging/container_base.sh
  python3 packaging/release_build.py linux
}

# The job's signing step, with a throwaway key made here (the real key is a secret only GitHub holds):
# packaging/sign_manifest.py's own command line, run by the container's python3 with nothing installed.
# Until the signer needs only the standard library and takes its key, version and address as arguments
# (issue 35), it cannot run there: the rehearsal then says NOT REHEARSED and goes on.
rehearse_signing() {
  local key
  key=$(mktemp -u /tmp/rehearsal-update-key.XXXXXX)
  if python3 packaging/sign_manifest.py keygen --private-key-file "$key" >/dev/null &&
    python3 packaging/sign_manifest.py sign --private-key-file "$key" --out dist/release/linux/update.json; then
    echo "release_linux: update.json signed with a throwaway key" >&2
  else
    echo "release_linux: NOT REHEARSED: the update manifest's signer did not run here (above)" >&2
  fi
  rm -f "$key"
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
    job_steps
    [ "${2:-}" != --rehearse-signing ] || rehearse_signing
    ;;
  --host) host ;;
  *) echo "usage: $0 --in-container | --host" >&2; exit 2 ;;
esac
