#!/usr/bin/env bash
# Installs the Debian 12 packages mwperf builds and tests with. Idempotent: apt is
# only called when something is missing. Needs root for that (or sudo).
set -euo pipefail

pkgs=(
  build-essential cmake ninja-build pkg-config libgtest-dev   # the agent and its unit tests
  ccache                                                      # a new clone's agent from what another compiled
  patchelf                                                    # the agent bundles' RUNPATHs (mwperf bundle)
  clang-format                                                # the agent's C++ style, checked by make test
  python3 python3-venv python3-pip                            # the controller
  cyclonedds-dev cyclonedds-tools                             # Cyclone DDS adapter (idlc), ddsperf baseline
  libssl-dev                                                  # Cyclone DDS 11's security plugins (install-cyclone11.sh)
  libfastrtps-dev fastdds-tools                               # Fast DDS adapter, `fastdds shm clean`
  iceoryx libiceoryx-posh-dev                                 # iceoryx adapter and its daemon (iox-roudi)
  libroscpp-dev libstd-msgs-dev python3-rosmaster             # ROS 1 adapter and its master
  sockperf iperf3                                             # the baselines in bench/
  iproute2 nftables util-linux procps git                     # placement, namespaces, provenance
  tcpdump                                                     # the DDS Security tests read the wire
  openssh-client openssh-server                               # --hosts over ssh, and its test
  qemu-user-static                                            # the --hosts tests' aarch64 host, emulated
  chromium                                                    # the report's browser test; draws the SVG/PNG figure files (kaleido)
  postgresql                                                  # the results store's tests start a throw-away server
)

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null; then SUDO=sudo; else
    echo "install-deps: missing packages (${missing[*]}); run as root" >&2; exit 1
  fi
fi
echo "install-deps: installing ${missing[*]}"
${SUDO:-} apt-get update -q
DEBIAN_FRONTEND=noninteractive ${SUDO:-} apt-get install -y -q --no-install-recommends "${missing[@]}"
