#!/usr/bin/env bash
# What cross-building the aarch64 agent bundle needs (make bundle-aarch64; not
# part of make setup: ~100 MB of Debian packages): Debian's cross toolchain,
# qemu-user-static (the bundled agent's `list` runs under it), patchelf, and
# Debian's arm64 package lists (dpkg --add-architecture arm64), from which the
# bundle builder fetches the middlewares' arm64 packages with `apt-get download`
# into a sysroot of its own (~/.cache/mwperf/sysroot-aarch64-<key>): nothing of
# arm64 is installed into the system. Idempotent: apt is only called when
# something is missing. Needs root for that (or sudo).
set -euo pipefail

pkgs=(crossbuild-essential-arm64 qemu-user-static patchelf)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
foreign=$(dpkg --print-foreign-architectures)
has_arm64=0
grep -qx arm64 <<<"$foreign" && has_arm64=1
[ ${#missing[@]} -eq 0 ] && [ $has_arm64 -eq 1 ] && [ -n "$(ls /var/lib/apt/lists/*_binary-arm64_Packages* 2>/dev/null)" ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null; then SUDO=sudo; else
    echo "install-cross-arm64: needs root to install ${missing[*]:-} and add the arm64 package lists" >&2; exit 1
  fi
fi
if [ $has_arm64 -eq 0 ]; then
  echo "install-cross-arm64: dpkg --add-architecture arm64 (Debian's arm64 package lists, for apt-get download)"
  ${SUDO:-} dpkg --add-architecture arm64
fi
${SUDO:-} apt-get update -q
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-cross-arm64: installing ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive ${SUDO:-} apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
