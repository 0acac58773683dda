#!/usr/bin/env bash
# Installs the Debian packages the local cluster and the image build use, when any is missing:
# buildah (builds ./Dockerfile without a Docker engine), mmdebstrap (the Debian base image), runc
# (the OCI runtime under containerd), the CNI bridge/host-local/loopback plugins, iptables (the
# pod guard, kube-proxy), umoci (packs the pause image) and a static libc to compile pause.c.
# Packages named as arguments are installed too (test/kind adds the Docker engine, docker.io).
# Needs root; runs `apt-get update` once, only when something must be installed.
set -euo pipefail
packages=(buildah mmdebstrap runc containernetworking-plugins iptables umoci gcc libc6-dev conntrack "$@")
missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$package")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "installing Debian packages: ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
