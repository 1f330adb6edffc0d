#!/usr/bin/env bash
# Installs the Debian packages a node needs for test/e2e/node, when missing:
# containerd and runc run the Pods, containernetworking-plugins gives them a
# bridge network, iptables is what kube-proxy and the bridge plugin program,
# and busybox-static is the shell of the chart's `helm test` image
# (hack/image). Needs root (apt-get); as another user it only says what is
# missing and how to install it.
#
# Usage: hack/tools/node-packages.sh
set -euo pipefail

packages=(containerd runc containernetworking-plugins iptables busybox-static)

log() { printf '[node-packages] %s\n' "$*" >&2; }

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f '${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
if [[ ${#missing[@]} -eq 0 ]]; then
  log "installed: ${packages[*]}"
  exit 0
fi
if [[ $(id -u) -ne 0 ]]; then
  log "missing Debian packages: ${missing[*]}"
  log "a node needs root: run as root, or install them with"
  log "  sudo apt-get install -y --no-install-recommends ${missing[*]}"
  exit 1
fi
log "installing ${missing[*]}"
start=$SECONDS
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >&2
apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
log "installed in $((SECONDS - start))s"
