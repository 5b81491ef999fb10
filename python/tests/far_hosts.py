"""Far hosts for the ``--hosts`` tests: what a robot's board is to mwperf, built on this machine.

A *lab* is network namespaces joined by a bridge: ``lab`` (where the controller
runs, with the bridge) and a namespace per host. Each host's sshd runs in a
mount and PID namespace of its own, chrooted in a Debian userland of the
host's architecture (sshd, sftp-server, dash, coreutils, tar, gzip, findutils,
procps and their libraries: amd64 or arm64 packages fetched with ``apt-get
download`` and unpacked with ``dpkg-deb -x``, cached in
``~/.cache/mwperf/test-hosts/``), seen through an overlay so that each lab
writes its own files. Neither the Debian middleware packages nor this checkout
are visible there: only a self-contained bundle runs. The aarch64 host's
sshd, shell and every program run under qemu-user-static through a binfmt_misc
entry (flag F: the interpreter is opened at registration, so it works in the
chroot); ``uname -m`` there says aarch64.

Users on every host: ``root`` and ``robot`` (uid 1000, an ordinary user); on
the x86_64 host also ``full`` (its home a 64 KiB tmpfs: a full disk) and
``ro`` (its home bind-mounted read-only), and a second address whose sshd runs
under ``setarch i686`` (a host whose architecture no bundle has).

Everything is named after the pid of the process that made it (namespaces
``mwh<pid>-*``, directories ``mwperf-hosts-<pid>-*``, binfmt entry
``mwperf-test-aarch64-<pid>``): what a crashed run left is removed by the next
(:func:`remove_leftovers`), what a live one uses is left alone.
Rule 2: the namespaces have no route out; nothing touches the machine's interfaces.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "mwperf" / "test-hosts"
DEB_ARCH = {"x86_64": "amd64", "aarch64": "arm64"}
PACKAGES = (
    "openssh-server openssh-sftp-server dash coreutils libc6 libc-bin tar gzip findutils sed grep mawk procps "
    "libacl1 libattr1 libaudit1 libaudit-common libcap-ng0 libcap2 libcom-err2 libcrypt1 libgcrypt20 "
    "libgpg-error0 libgssapi-krb5-2 libk5crypto3 libkeyutils1 libkrb5-3 libkrb5support0 liblz4-1 liblzma5 "
    "libnsl2 libpam0g libpcre2-8-0 libproc2-0 libselinux1 libssl3 libsystemd0 libtirpc3 libtirpc-common "
    "libwrap0 libzstd1 zlib1g libgmp10 libmd0 libbz2-1.0").split()
SUBNET = "10.251.7"
PREFIX = "mwh"
DIR_PREFIX = "mwperf-hosts-"
BINFMT = Path("/proc/sys/fs/binfmt_misc")
BINFMT_NAME = "mwperf-test-aarch64-"
QEMU = "/usr/bin/qemu-aarch64-static"
# the ELF header of an aarch64 executable, as Debian's qemu-user-static registers it
AARCH64_MAGIC = r"\x7f\x45\x4c\x46\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\xb7\x00"
AARCH64_MASK = r"\xff\xff\xff\xff\xff\xff\xff\x00\xff\xff\xff\xff\xff\xff\xff\xff\xfe\xff\xff\xff"
USERS = {"robot": 1000, "full": 1001, "ro": 1002}


def possible() -> str | None:
    """Why a lab cannot be built here (None: it can)."""
    if os.geteuid() != 0:
        return "needs root"
    for tool in ("ip", "unshare", "nsenter", "chroot", "apt-get", "dpkg-deb", "ssh", "ssh-keygen", "setarch"):
        if shutil.which(tool) is None:
            return f"needs {tool}"
    return None


def _run(argv: list[str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run(argv, check=True, capture_output=True, text=True, **kw)


def userland(arch: str) -> Path:
    """The cached userland of ``arch`` (made once: downloaded, unpacked, ldconfig'd)."""
    deb = DEB_ARCH[arch]
    dest = CACHE / f"userland-{deb}"
    if (dest / ".complete").exists():
        return dest
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (dest / ".complete").exists():
            return dest
        apt, debs = CACHE / f"apt-{deb}", CACHE / f"debs-{deb}"
        for d in (apt / "lists" / "partial", apt / "cache" / "archives" / "partial", debs):
            d.mkdir(parents=True, exist_ok=True)
        conf = ["-q", "-o", f"Dir::State::Lists={apt}/lists", "-o", f"Dir::Cache={apt}/cache",
                "-o", "Dir::State::status=/dev/null", "-o", f"APT::Architecture={deb}",
                "-o", f"APT::Architectures::={deb}", "-o", "Debug::NoLocking=1"]
        if not list(debs.glob("*.deb")):
            _run(["apt-get", *conf, "update"])
            _run(["apt-get", *conf, "download", *PACKAGES], cwd=debs)
        work = Path(tempfile.mkdtemp(prefix=f".userland-{deb}-", dir=CACHE))
        for pkg in sorted(debs.glob("*.deb")):
            _run(["dpkg-deb", "-x", str(pkg), str(work)])
        (work / "bin" / "sh").unlink(missing_ok=True)
        (work / "bin" / "sh").symlink_to("dash")
        for d in ("proc", "sys", "dev", "tmp", "run/sshd", "home", "root", "etc/ssh", "var/log"):
            (work / d).mkdir(parents=True, exist_ok=True)
        (work / "etc" / "nsswitch.conf").write_text("passwd: files\ngroup: files\nshadow: files\nhosts: files\n")
        (work / "etc" / "hosts").write_text("127.0.0.1 localhost\n")
        shutil.rmtree(dest, ignore_errors=True)
        work.rename(dest)
        (dest / ".complete").write_text(" ".join(PACKAGES) + "\n")
    return dest


# -- binfmt_misc: aarch64 programs run under qemu ------------------------------------------

@dataclass
class Binfmt:
    """The aarch64 entry this lab added (none when one was there before) and the mount it made."""

    entry: Path | None = None
    mounted: bool = False

    @classmethod
    def ensure(cls) -> "Binfmt":
        made = cls()
        if not (BINFMT / "register").exists():
            _run(["mount", "-t", "binfmt_misc", "binfmt_misc", str(BINFMT)])
            made.mounted = True
        for entry in BINFMT.iterdir():
            if entry.name not in ("register", "status") and "enabled" in _read(entry) \
                    and "magic 7f454c460201010000000000000000000200b700" in _read(entry):
                return made  # the machine's own (or a live lab's): used, never removed
        if not os.path.exists(QEMU):
            raise RuntimeError(f"{QEMU} is missing (apt-get install qemu-user-static)")
        name = f"{BINFMT_NAME}{os.getpid()}"
        (BINFMT / "register").write_text(f":{name}:M::{AARCH64_MAGIC}:{AARCH64_MASK}:{QEMU}:F")
        made.entry = BINFMT / name
        return made

    def remove(self) -> None:
        if self.entry is not None and self.entry.exists():
            self.entry.write_text("-1")
        if self.mounted and not any(e.name.startswith(BINFMT_NAME) for e in BINFMT.iterdir()):
            subprocess.run(["umount", str(BINFMT)], capture_output=True)


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


# -- a host -------------------------------------------------------------------------------

_INIT = r"""set -e
R="$1"; L="$2"; U="$3"; W="$4"; ADDR2="$5"
mount -t overlay overlay -o "lowerdir=$L,upperdir=$U,workdir=$W" "$R"
mount -t proc proc "$R/proc"
mount -t sysfs sysfs "$R/sys"
mount -t tmpfs -o size=1m,mode=755 tmpfs "$R/dev"
mknod -m 666 "$R/dev/null" c 1 3; mknod -m 666 "$R/dev/zero" c 1 5; mknod -m 666 "$R/dev/tty" c 5 0
mknod -m 666 "$R/dev/random" c 1 8; mknod -m 666 "$R/dev/urandom" c 1 9
mkdir "$R/dev/pts" "$R/dev/shm"
mount -t devpts -o newinstance,ptmxmode=0666 devpts "$R/dev/pts"; ln -s pts/ptmx "$R/dev/ptmx"
mount -t tmpfs -o mode=1777 tmpfs "$R/dev/shm"
mount -t tmpfs -o mode=1777 tmpfs "$R/tmp"
if [ -d "$R/home/full" ]; then
  mount -t tmpfs -o size=64k,mode=755,uid=1001,gid=1001 tmpfs "$R/home/full"
  mount --bind "$R/home/ro" "$R/home/ro"; mount -o remount,bind,ro "$R/home/ro"
fi
if [ -n "$ADDR2" ]; then
  setarch i686 chroot "$R" /usr/sbin/sshd -D -e -f /etc/ssh/sshd_config_i686 &
fi
exec chroot "$R" /usr/sbin/sshd -D -e -f /etc/ssh/sshd_config
"""


@dataclass
class Host:
    """One far host: its namespace, address, root (as the host sees /) and init process."""

    name: str
    arch: str
    netns: str
    addr: str
    dir: Path
    proc: subprocess.Popen | None = None
    i686_addr: str | None = None

    @property
    def root(self) -> Path:
        return self.dir / "root"

    @property
    def upper(self) -> Path:
        return self.dir / "upper"

    def target(self, user: str = "robot") -> str:
        return f"{user}@{self.addr}"

    def init_pid(self) -> int:
        """The pid (as this machine sees it) of the host's PID 1."""
        assert self.proc is not None
        children = Path(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children").read_text().split()
        return int(children[0])

    def run(self, script: str, user: str = "root", check: bool = True, timeout: float = 60,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
        """``sh -c script`` inside the host (its namespaces and root), as ``user``, without ssh (``env``: added
        to the environment)."""
        pid = self.init_pid()
        argv = ["nsenter", "-t", str(pid), "-m", "-n", "-p", "-r", "-w", "--", "/bin/sh", "-c", script]
        if user != "root":
            argv = ["nsenter", "-t", str(pid), "-m", "-n", "-p", "-r", "-w",
                    f"-S{USERS[user]}", f"-G{USERS[user]}", "--", "/bin/sh", "-c", script]
        return subprocess.run(argv, capture_output=True, text=True, check=check, timeout=timeout,
                              env=dict(os.environ, HOME=f"/home/{user}" if user != "root" else "/root", **(env or {})))

    def path(self, inside: str) -> Path:
        """A path of the host's (files written there by its processes, through the overlay)."""
        return self.upper / inside.lstrip("/")


@dataclass
class Lab:
    """The lab's namespaces and hosts; :meth:`close` takes all of it down."""

    key: Path
    dir: Path
    netns: str
    hosts: dict[str, Host] = field(default_factory=dict)
    binfmt: Binfmt | None = None

    def ssh_options(self) -> str:
        return (f"-i {self.key} -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR")

    def env(self, **extra: str) -> dict[str, str]:
        return dict(os.environ, MWPERF_SSH_OPTIONS=self.ssh_options(), **extra)

    def controller(self, argv: list[str]) -> list[str]:
        """``argv`` run in the controller's namespace (the lab's)."""
        return ["ip", "netns", "exec", self.netns, *argv]

    def close(self) -> None:
        inits = []
        for host in self.hosts.values():
            if host.proc is not None and host.proc.poll() is None:
                try:
                    inits.append(host.init_pid())
                except (OSError, IndexError, ValueError):
                    pass
                host.proc.kill()  # unshare --kill-child: the host's PID 1, and so all of its processes, go too
                host.proc.wait(timeout=10)
        for ns in [h.netns for h in self.hosts.values()] + [self.netns]:
            _kill_netns(ns)
        deadline = time.monotonic() + 10
        while any(Path(f"/proc/{pid}").exists() for pid in inits) and time.monotonic() < deadline:
            time.sleep(0.05)  # killed: gone once its parent (this machine's init) has reaped it
        if self.binfmt is not None:
            self.binfmt.remove()
        shutil.rmtree(self.dir, ignore_errors=True)


def _kill_netns(ns: str) -> None:
    pids = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True).stdout.split()
    for pid in pids:
        try:
            os.kill(int(pid), 9)
        except (OSError, ValueError):
            pass
    subprocess.run(["ip", "netns", "del", ns], capture_output=True)


def remove_leftovers() -> list[str]:
    """What crashed runs' labs left (their pid gone): namespaces, directories, binfmt entries."""
    removed = []
    names = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout.split("\n")
    for line in names:
        ns = line.split(" ")[0]
        if ns.startswith(PREFIX) and "-" in ns and not _alive(ns[len(PREFIX):].split("-")[0]):
            _kill_netns(ns)
            removed.append(ns)
    for d in Path(tempfile.gettempdir()).glob(f"{DIR_PREFIX}*"):
        if not _alive(d.name[len(DIR_PREFIX):].split("-")[0]):
            shutil.rmtree(d, ignore_errors=True)
            removed.append(str(d))
    if BINFMT.joinpath("register").exists():
        for entry in BINFMT.glob(f"{BINFMT_NAME}*"):
            if not _alive(entry.name[len(BINFMT_NAME):]):
                entry.write_text("-1")
                removed.append(entry.name)
    return removed


def _alive(pid: str) -> bool:
    return pid.isdigit() and Path(f"/proc/{pid}").exists()


def build(archs: tuple[str, ...] = ("x86_64", "aarch64"), tag: str = "") -> Lab:
    """A lab with a host of each of ``archs`` (named after the architecture); the first one
    has the users full and ro and the i686 address. ``tag``: a second lab of this process's (a letter)."""
    remove_leftovers()
    lands = {arch: userland(arch) for arch in archs}
    prefix = f"{PREFIX}{os.getpid()}"
    lab_dir = Path(tempfile.mkdtemp(prefix=f"{DIR_PREFIX}{os.getpid()}-"))
    lab = Lab(key=lab_dir / "id", dir=lab_dir, netns=f"{prefix}-{tag}lab")
    try:
        _run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(lab.key)])
        _run(["ip", "netns", "add", lab.netns])
        inside = ["ip", "netns", "exec", lab.netns]
        _run(inside + ["ip", "link", "set", "lo", "up"])
        _run(inside + ["ip", "link", "add", "br0", "type", "bridge"])
        _run(inside + ["ip", "addr", "add", f"{SUBNET}.1/24", "dev", "br0"])
        _run(inside + ["ip", "link", "set", "br0", "up"])
        if "aarch64" in archs:
            lab.binfmt = Binfmt.ensure()
        for n, arch in enumerate(archs):
            host = Host(arch, arch, f"{prefix}-{tag}{n}", f"{SUBNET}.{10 + 10 * n}", lab_dir / arch,
                        i686_addr=f"{SUBNET}.{11 + 10 * n}" if n == 0 else None)
            lab.hosts[arch] = host
            _start(lab, host, lands[arch], extra_users=n == 0)
        _wait_for_sshd(lab)
    except BaseException:
        lab.close()
        raise
    return lab


def _start(lab: Lab, host: Host, lower: Path, extra_users: bool) -> None:
    for d in ("root", "upper", "work"):
        (host.dir / d).mkdir(parents=True)
    up = host.upper
    users = {"robot": 1000, **({"full": 1001, "ro": 1002} if extra_users else {})}
    (up / "etc" / "ssh").mkdir(parents=True)
    passwd = ["root:x:0:0:root:/root:/bin/sh", "sshd:x:100:65534::/run/sshd:/usr/sbin/nologin"]
    passwd += [f"{u}:x:{uid}:{uid}::/home/{u}:/bin/sh" for u, uid in users.items()]
    (up / "etc" / "passwd").write_text("\n".join(passwd) + "\n")
    (up / "etc" / "group").write_text("root:x:0:\nnogroup:x:65534:\n"
                                      + "".join(f"{u}:x:{uid}:\n" for u, uid in users.items()))
    (up / "etc" / "shadow").write_text("".join(f"{line.split(':')[0]}:*:19000:0:99999:7:::\n" for line in passwd))
    os.chmod(up / "etc" / "shadow", 0o640)
    for u, uid in users.items():
        home = up / "home" / u
        home.mkdir(parents=True)
        os.chown(home, uid, uid)
    key = up / "etc" / "ssh" / "ssh_host_ed25519_key"
    _run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)])
    shutil.copy(f"{lab.key}.pub", up / "etc" / "ssh" / "authorized_keys")
    os.chmod(up / "etc" / "ssh" / "authorized_keys", 0o644)
    common = ("Port 22\nHostKey /etc/ssh/ssh_host_ed25519_key\nAuthorizedKeysFile /etc/ssh/authorized_keys\n"
              "PermitRootLogin prohibit-password\nPasswordAuthentication no\nStrictModes no\nUsePAM no\n"
              "PidFile none\nSubsystem sftp /usr/lib/openssh/sftp-server\n")
    (up / "etc" / "ssh" / "sshd_config").write_text(f"ListenAddress {host.addr}\n{common}")
    if host.i686_addr:
        (up / "etc" / "ssh" / "sshd_config_i686").write_text(f"ListenAddress {host.i686_addr}\n{common}")
    inside = ["ip", "netns", "exec", host.netns]
    _run(["ip", "netns", "add", host.netns])
    veth = f"v{host.netns[len(PREFIX):]}"[-15:]
    _run(["ip", "-n", lab.netns, "link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", host.netns])
    _run(["ip", "-n", lab.netns, "link", "set", veth, "master", "br0", "up"])
    _run(inside + ["ip", "link", "set", "lo", "up"])
    _run(inside + ["ip", "addr", "add", f"{host.addr}/24", "dev", "eth0"])
    if host.i686_addr:
        _run(inside + ["ip", "addr", "add", f"{host.i686_addr}/24", "dev", "eth0"])
    _run(inside + ["ip", "link", "set", "eth0", "up"])
    log = open(host.dir / "sshd.log", "w")
    host.proc = subprocess.Popen(
        inside + ["unshare", "--mount", "--pid", "--fork", "--kill-child", "--propagation", "private",
                  "/bin/sh", "-c", _INIT, "init", str(host.root), str(lower), str(up), str(host.dir / "work"),
                  host.i686_addr or ""],
        stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)


def _wait_for_sshd(lab: Lab, seconds: float = 30.0) -> None:
    """Until every host's sshd accepts a login (a cold qemu start takes a second)."""
    deadline = time.monotonic() + seconds
    for host in lab.hosts.values():
        for addr in filter(None, (host.addr, host.i686_addr)):
            while True:
                if host.proc.poll() is not None:
                    raise RuntimeError(f"host {host.name} ended: {(host.dir / 'sshd.log').read_text()[-2000:]}")
                done = subprocess.run(lab.controller(["ssh", *lab.ssh_options().split(), "-o", "BatchMode=yes",
                                                      "-o", "ConnectTimeout=5", f"robot@{addr}", "true"]),
                                      capture_output=True, text=True)
                if done.returncode == 0:
                    break
                if time.monotonic() > deadline:
                    raise RuntimeError(f"host {host.name} ({addr}): no login within {seconds:.0f} s: "
                                       f"{done.stderr.strip()[-300:]}; "
                                       f"{(host.dir / 'sshd.log').read_text()[-1000:]}")
                time.sleep(0.2)
