#!/usr/bin/env bash
# What the debian:12 image lacks before .ci/run or `make` can start: Python (with venv) and make. The
# workflows' Linux jobs run in that container so the bundle needs no newer glibc than Debian 12's; everything
# else (the suite's and the bundle's system packages) is installed by scripts/system-packages.sh as usual.
set -euo pipefail
[ "$(id -u)" -eq 0 ] || { echo "container_base.sh: run as root (inside the CI container)" >&2; exit 1; }
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends python3 python3-venv make ca-certificates >/dev/null
