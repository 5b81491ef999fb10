"""What a far host is, asked in one ssh session before the first point.

The host runs :data:`SCRIPT` (POSIX sh and what every Linux userland has:
uname, getconf, df, cat, mkdir; no Python, no mwperf): it prints ``key=value``
lines, which :func:`parse` reads into :class:`HostFacts`. It asks: the
architecture, glibc, kernel, CPU model and count; the cache directory (made if
missing: a read-only home says so here) and the free space where it is; which
bundles are installed there (their manifest's sha256); the network interfaces
(MTU, link speed, driver) and the addresses they carry (``ip`` where the host
has it, else its routing table), the socket-buffer and fragment sysctls, and
which clock-synchronisation daemons run (chrony's own offset where ``chronyc``
answers). Everything is read on that host, none of it on the controller.
"""

from __future__ import annotations

import ipaddress
import re
import socket
import struct
from dataclasses import dataclass, field

__all__ = ["SCRIPT", "SYSCTLS", "SYNC_DAEMONS", "HostFacts", "Nic", "parse", "nic_of"]

#: The sysctls middlewares depend on for large samples (their /proc/sys paths use / for .).
SYSCTLS = ("net.core.rmem_max", "net.core.wmem_max", "net.core.rmem_default", "net.core.wmem_default",
           "net.ipv4.ipfrag_high_thresh", "net.ipv4.ipfrag_low_thresh", "net.ipv4.ipfrag_time",
           "net.ipv4.udp_mem")
SYNC_DAEMONS = ("ptp4l", "phc2sys", "chronyd", "ntpd", "systemd-timesyncd")

#: $1: the cache directory ('' for ~/.cache/mwperf/bundles; a relative one is in the user's home).
SCRIPT = r"""
d=${1:-$HOME/.cache/mwperf/bundles}
case $d in /*) ;; *) d=$HOME/$d;; esac
echo "arch=$(uname -m)"
echo "kernel=$(uname -r)"
echo "glibc=$(getconf GNU_LIBC_VERSION 2>/dev/null || ldd --version 2>&1 | head -n 1)"
echo "cpus=$(getconf _NPROCESSORS_ONLN 2>/dev/null || nproc 2>/dev/null)"
c=/proc/cpuinfo
echo "cpu_model=$( (grep -m 1 '^model name' $c || grep -m 1 '^Model' $c || grep -m 1 '^Hardware' $c || grep -m 1 '^cpu model' $c) 2>/dev/null | cut -d: -f2-)"
echo "home=$HOME"
echo "dir=$d"
if e=$(mkdir -p "$d" 2>&1) && t=$(mktemp "$d/.probe-XXXXXX" 2>&1) && rm -f "$t"; then echo "writable=1"
else echo "writable=0"; echo "write_error=$e$t" | tr '\n' ' '; echo; fi
p=$d; while [ ! -d "$p" ]; do p=$(dirname "$p"); done
echo "df=$(df -Pk "$p" 2>/dev/null | tail -n 1)"
for m in "$d"/*/manifest.json; do [ -f "$m" ] && echo "installed=$(sha256sum "$m")"; done
for k in net/core/rmem_max net/core/wmem_max net/core/rmem_default net/core/wmem_default \
         net/ipv4/ipfrag_high_thresh net/ipv4/ipfrag_low_thresh net/ipv4/ipfrag_time net/ipv4/udp_mem; do
  echo "sysctl.$k=$(cat /proc/sys/$k 2>/dev/null | tr '\t' ' ')"
done
for i in /sys/class/net/*; do n=${i##*/}
  drv=$(readlink "$i/device/driver" 2>/dev/null); drv=${drv##*/}
  [ -z "$drv" ] && command -v ethtool >/dev/null 2>&1 && drv=$(ethtool -i "$n" 2>/dev/null | sed -n 's/^driver: //p')
  echo "nic=$n $(cat "$i/mtu" 2>/dev/null || echo -) $(cat "$i/speed" 2>/dev/null || echo -) ${drv:--}"
done
if command -v ip >/dev/null 2>&1; then ip -o -4 addr show 2>/dev/null | while read -r _ n _ a _; do echo "addr=$n ${a%/*}"; done
else tail -n +2 /proc/net/route 2>/dev/null | while read -r n dst _ _ _ _ _ mask _; do echo "route=$n $dst $mask"; done; fi
for c in /proc/[0-9]*/comm; do cat "$c" 2>/dev/null; done | sort -u | grep -x -E 'ptp4l|phc2sys|chronyd|ntpd|systemd-timesyncd' | sed 's/^/daemon=/'
command -v chronyc >/dev/null 2>&1 && echo "chrony=$(chronyc -c tracking 2>/dev/null | head -n 1)"
echo "end=1"
"""


@dataclass(frozen=True)
class Nic:
    name: str
    mtu: int | None
    speed_mbit: int | None  # None: the interface does not say (a virtual one, a link down)
    driver: str | None

    def as_dict(self) -> dict:
        return {"name": self.name, "driver": self.driver, "speed_mbit": self.speed_mbit, "mtu": self.mtu}


@dataclass
class HostFacts:
    """One host as it answered :data:`SCRIPT`."""

    target: str
    arch: str = ""
    kernel: str = ""
    glibc: str | None = None  # "2.36"; None: the host did not say (no glibc: musl, or no getconf/ldd)
    cpus: int | None = None
    cpu_model: str | None = None
    home: str = ""
    dir: str = ""
    writable: bool = False
    write_error: str = ""
    free_kb: int | None = None
    free_on: str = ""  # the mount point the free space is of
    installed: dict[str, str] = field(default_factory=dict)  # bundle directory -> its manifest.json's sha256
    sysctls: dict[str, int | str | None] = field(default_factory=dict)
    nics: dict[str, Nic] = field(default_factory=dict)
    addresses: dict[str, str] = field(default_factory=dict)  # IPv4 address -> interface
    routes: list[tuple[str, int, int]] = field(default_factory=list)  # (interface, network, mask), host order
    daemons: tuple[str, ...] = ()
    chrony: dict | None = None

    def sync(self) -> dict:
        """Which synchronisation daemons run on the host, and chrony's own word where it answered."""
        out: dict = {name: name in self.daemons for name in SYNC_DAEMONS}
        if self.chrony is not None:
            out["chrony"] = self.chrony
        return out

    def record(self, data_address: str | None) -> dict:
        """The host's part of a record (``hosts.pub`` / ``hosts.sub``), its data interface that of ``data_address``."""
        nic = nic_of(self, data_address) if data_address else None
        return {"target": self.target, "arch": self.arch, "cpu_model": self.cpu_model, "cpus": self.cpus,
                "kernel": self.kernel, "glibc": self.glibc, "nic": nic.as_dict() if nic else None,
                "interfaces": sorted(self.nics),
                "sysctl": dict(self.sysctls), "sync": self.sync()}

    def describe(self) -> str:
        """One line for ``mwperf hosts check``."""
        cpu = f"{self.cpus} x {self.cpu_model}" if self.cpu_model else f"{self.cpus} CPUs"
        free = f"{self.free_kb / 1024:.0f} MiB free" if self.free_kb is not None else "free space unknown"
        return (f"{self.arch}, glibc {self.glibc or '?'}, kernel {self.kernel}, {cpu}; {self.dir}: "
                f"{'writable' if self.writable else 'not writable'}, {free}")


def _int(text: str) -> int | None:
    text = text.strip()
    return int(text) if re.fullmatch(r"-?\d+", text) else None


def _hex_addr(text: str) -> int:
    """An address of /proc/net/route (little-endian hex) in host order."""
    return struct.unpack("!I", struct.pack("<I", int(text, 16)))[0]


def parse(target: str, text: str) -> HostFacts:
    """The script's output; ValueError when it did not run to its end."""
    facts = HostFacts(target)
    done = False
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if not sep:
            continue
        if key == "arch":
            facts.arch = value.strip()
        elif key == "kernel":
            facts.kernel = value.strip()
        elif key == "glibc":
            m = re.search(r"(\d+\.\d+)\s*$", value.strip()) or re.search(r"GLIBC\s+(\d+\.\d+)", value)
            facts.glibc = m.group(1) if m else None
        elif key == "cpus":
            facts.cpus = _int(value)
        elif key == "cpu_model":
            facts.cpu_model = " ".join(value.split()) or None
        elif key in ("home", "dir", "write_error"):
            setattr(facts, key, value.strip())
        elif key == "writable":
            facts.writable = value.strip() == "1"
        elif key == "df":
            fields = value.split()
            if len(fields) >= 6 and fields[3].isdigit():
                facts.free_kb, facts.free_on = int(fields[3]), fields[5]
        elif key == "installed":
            digest, _, path = value.strip().partition("  ")
            parts = path.split("/")
            if len(parts) >= 2:
                facts.installed[parts[-2]] = digest
        elif key.startswith("sysctl."):
            name = key[len("sysctl."):].replace("/", ".")
            value = " ".join(value.split())
            facts.sysctls[name] = _int(value) if _int(value) is not None else (value or None)
        elif key == "nic":
            fields = value.split()
            if len(fields) == 4:
                speed = _int(fields[2])
                facts.nics[fields[0]] = Nic(fields[0], _int(fields[1]), speed if speed and speed > 0 else None,
                                            None if fields[3] == "-" else fields[3])
        elif key == "addr":
            fields = value.split()
            if len(fields) == 2:
                facts.addresses[fields[1]] = fields[0]
        elif key == "route":
            fields = value.split()
            try:
                facts.routes.append((fields[0], _hex_addr(fields[1]), _hex_addr(fields[2])))
            except (IndexError, ValueError):
                continue
        elif key == "daemon":
            facts.daemons += (value.strip(),)
        elif key == "chrony":
            facts.chrony = _chrony(value)
        elif key == "end":
            done = True
    if not done or not facts.arch:
        raise ValueError("the host did not answer mwperf's questions (no POSIX shell there?)")
    return facts


def _chrony(line: str) -> dict | None:
    """``chronyc -c tracking``: reference id, name, stratum, ref time, system time (s), last offset (s), rms
    offset (s), ...; the system clock's offset from chrony's estimate of true time, and the last update's."""
    fields = line.strip().split(",")
    if len(fields) < 7:
        return None
    try:
        return {"reference": fields[1] or fields[0], "stratum": int(fields[2]),
                "offset_us": round(float(fields[4]) * 1e6, 3), "last_offset_us": round(float(fields[5]) * 1e6, 3),
                "rms_offset_us": round(float(fields[6]) * 1e6, 3)}
    except ValueError:
        return None


def nic_of(facts: HostFacts, address: str) -> Nic | None:
    """The interface that carries ``address`` on that host: the one the address is on, else the most
    specific route to it; None when neither says (an address of another host: --data pointing elsewhere)."""
    name = facts.addresses.get(address)
    if name is None and facts.routes:
        try:
            value = struct.unpack("!I", socket.inet_aton(str(ipaddress.IPv4Address(address))))[0]
        except ValueError:
            return None
        best = max((r for r in facts.routes if value & r[2] == r[1] & r[2]), key=lambda r: r[2], default=None)
        name = best[0] if best else None
    if name is None:
        return None
    return facts.nics.get(name, Nic(name, None, None, None))
