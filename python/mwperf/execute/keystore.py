"""DDS Security keystores in SROS2's layout, and the point's enclaves in them.

A keystore (``ros2 security create_keystore``'s layout)::

    public/   ca.cert.pem, identity_ca.cert.pem, permissions_ca.cert.pem
    private/  ca.key.pem, identity_ca.key.pem, permissions_ca.key.pem
    enclaves/ governance.xml, governance.p7s
    enclaves/mwperf/pub/  cert.pem, key.pem, identity_ca.cert.pem, permissions_ca.cert.pem,
                          governance.p7s, permissions.xml, permissions.p7s

An agent of a secured point is given its enclave's folder (``--enclave``):
the publisher ``/mwperf/pub``, subscriber i ``/mwperf/sub`` (i = 0) or
``/mwperf/sub<i>``. Either mwperf makes the keystore (one per protection
level, all of one run's CA, in a private temporary folder removed at the end
of the run, :func:`remove_made`, or by the next run after a crash,
:func:`clean_stale`), or the user gives one (``--keystore DIR``,
:func:`open_keystore`), whose governance then decides the level.

The levels (``--security``), as mwperf's governance documents say them:

* ``auth``: authentication and access control (join, read and write), nothing protected;
* ``sign``: discovery, liveliness and every submessage of the point's endpoints signed (AES-GMAC);
* ``encrypt``: the same encrypted and signed (AES-GCM).

mwperf protects at the submessage level (``metadata_protection_kind``),
which every secured middleware here applies, and leaves the RTPS message and
the payload alone (``rtps_protection_kind``, ``data_protection_kind`` NONE);
the record names each kind (:meth:`Keystore.protection`).
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import threading
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

from mwperf.errors import UsageError
from mwperf.execute import pki
from mwperf.plan.options import RunOptions, TestPoint

__all__ = ["LEVELS", "Keystore", "open_keystore", "made_keystore", "remove_made", "clean_stale", "enclave_name",
           "governance_xml", "permissions_xml", "level_of", "ENCLAVE_FILES", "PREFIX", "secured", "for_point",
           "enclave_args", "section", "check_keystore"]

LEVELS = ("none", "auth", "sign", "encrypt")
#: What an enclave's folder holds (SROS2's names), every one of them needed.
ENCLAVE_FILES = ("identity_ca.cert.pem", "cert.pem", "key.pem", "permissions_ca.cert.pem", "governance.p7s",
                 "permissions.p7s")
#: The made keystores' folder: PREFIX<pid>- in the temporary directory.
PREFIX = "mwperf-keys-"
#: The DDS domains every document covers (the specification's, which Cyclone DDS checks: 0 to 230).
DOMAINS = (0, 230)
VALID_DAYS = 30
_KINDS = ("discovery", "liveliness", "rtps", "metadata", "data")
_LEVEL_KIND = {"auth": "NONE", "sign": "SIGN", "encrypt": "ENCRYPT"}


def enclave_name(role: str, index: int = 0) -> str:
    """The enclave of one side: ``/mwperf/pub``, ``/mwperf/sub``, ``/mwperf/sub2``."""
    return "/mwperf/pub" if role == "pub" else "/mwperf/sub" if index == 0 else f"/mwperf/sub{index}"


def governance_xml(level: str) -> str:
    """mwperf's domain governance for ``level`` (the OMG DDS Security 1.1 format, section 9.4.1.2)."""
    kind = _LEVEL_KIND[level]
    protected = "false" if level == "auth" else "true"
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<dds xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
     xsi:noNamespaceSchemaLocation="http://www.omg.org/spec/DDS-SECURITY/20170901/omg_shared_ca_governance.xsd">
  <domain_access_rules>
    <domain_rule>
      <domains><id_range><min>{DOMAINS[0]}</min><max>{DOMAINS[1]}</max></id_range></domains>
      <allow_unauthenticated_participants>false</allow_unauthenticated_participants>
      <enable_join_access_control>true</enable_join_access_control>
      <discovery_protection_kind>{kind}</discovery_protection_kind>
      <liveliness_protection_kind>{kind}</liveliness_protection_kind>
      <rtps_protection_kind>NONE</rtps_protection_kind>
      <topic_access_rules>
        <topic_rule>
          <topic_expression>*</topic_expression>
          <enable_discovery_protection>{protected}</enable_discovery_protection>
          <enable_liveliness_protection>{protected}</enable_liveliness_protection>
          <enable_read_access_control>true</enable_read_access_control>
          <enable_write_access_control>true</enable_write_access_control>
          <metadata_protection_kind>{kind}</metadata_protection_kind>
          <data_protection_kind>NONE</data_protection_kind>
        </topic_rule>
      </topic_access_rules>
    </domain_rule>
  </domain_access_rules>
</dds>
"""


def permissions_xml(subject_name: str, not_before: datetime, not_after: datetime) -> str:
    """The permissions of one identity (section 9.4.1.3): join every domain mwperf uses, publish and
    subscribe every topic in every partition, nothing else."""
    stamp = "%Y-%m-%dT%H:%M:%S"
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<dds xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
     xsi:noNamespaceSchemaLocation="http://www.omg.org/spec/DDS-SECURITY/20170901/omg_shared_ca_permissions.xsd">
  <permissions>
    <grant name="{_xml(subject_name)}">
      <subject_name>{_xml(subject_name)}</subject_name>
      <validity><not_before>{not_before.strftime(stamp)}</not_before><not_after>{not_after.strftime(stamp)}</not_after></validity>
      <allow_rule>
        <domains><id_range><min>{DOMAINS[0]}</min><max>{DOMAINS[1]}</max></id_range></domains>
        <publish><topics><topic>*</topic></topics><partitions><partition>*</partition></partitions></publish>
        <subscribe><topics><topic>*</topic></topics><partitions><partition>*</partition></partitions></subscribe>
      </allow_rule>
      <default>DENY</default>
    </grant>
  </permissions>
</dds>
"""


def _xml(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def _kinds(governance: str) -> dict[str, str]:
    """The protection kinds of a governance document's first domain rule and its first topic rule."""
    out = {}
    for kind in _KINDS:
        found = re.search(rf"<{kind}_protection_kind>\s*([A-Z_]+)\s*<", governance)
        out[kind] = found.group(1) if found else "NONE"
    return out


def level_of(kinds: dict[str, str]) -> str:
    """The level a governance's kinds amount to for the data: encrypt when the RTPS message, the submessage or
    the payload is encrypted, sign when one is signed, else auth."""
    data = [kinds.get(k, "NONE") for k in ("rtps", "metadata", "data")]
    if any(k.startswith("ENCRYPT") for k in data):
        return "encrypt"
    return "sign" if any(k.startswith("SIGN") for k in data) else "auth"


@dataclass
class Keystore:
    """A keystore in SROS2's layout; ``made``: mwperf's own (it makes the enclaves it is asked for)."""

    path: Path
    made: bool = False
    ca: pki.Authority | None = None  # a made keystore's CA (its key stays in private/)
    _governance: str | None = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def enclaves(self) -> Path:
        return self.path / "enclaves"

    def governance(self) -> str:
        """The governance document's text, its signature checked against the keystore's permissions CA."""
        if self._governance is None:
            self._governance = pki.smime_text(self.enclaves / "governance.p7s",
                                              self.path / "public" / "permissions_ca.cert.pem")
        return self._governance

    def protection(self) -> dict[str, str]:
        """Each protection kind the governance sets: discovery, liveliness, rtps (the RTPS message),
        metadata (the submessage), data (the payload)."""
        return _kinds(self.governance())

    @property
    def level(self) -> str:
        return level_of(self.protection())

    def enclave(self, name: str) -> Path:
        """The folder of enclave ``name`` (made first in a made keystore); UsageError when a user's lacks it."""
        folder = self.enclaves / name.lstrip("/")
        with self._lock:
            if self.made and not (folder / "permissions.p7s").exists():
                self._make_enclave(name, folder)
        missing = [f for f in ENCLAVE_FILES if not (folder / f).is_file()]
        if missing:
            raise UsageError("--keystore", str(self.path),
                             f"no enclave {name} ({'no ' + ', '.join(missing)} in {folder}; "
                             f"`ros2 security create_enclave {self.path} {name}` makes one)")
        return folder

    def _make_enclave(self, name: str, folder: Path) -> None:
        assert self.ca is not None
        folder.mkdir(parents=True, exist_ok=True)
        pki.issue(self.ca, name, folder / "key.pem", folder / "cert.pem", VALID_DAYS)
        now = datetime.now(timezone.utc)
        doc = folder / "permissions.xml"
        doc.write_text(permissions_xml(pki.subject(folder / "cert.pem"), now - timedelta(days=1),
                                       now + timedelta(days=VALID_DAYS)))
        pki.smime_sign(self.ca, doc, folder / "permissions.p7s")
        for public in ("identity_ca.cert.pem", "permissions_ca.cert.pem"):
            _link(folder / public, self.path / "public" / public)
        _link(folder / "governance.p7s", self.enclaves / "governance.p7s")

    def describe(self, names: list[str]) -> dict:
        """The record's ``security`` section of a point whose sides used enclaves ``names``: where the keys
        came from, the governance's kinds, and each certificate's subject and SHA-256 fingerprint (never a
        key)."""
        public = self.path / "public"

        def cert(path: Path) -> dict:
            return {"subject": pki.subject(path), "sha256": pki.fingerprint(path), "key": pki.key_algorithm(path)}

        return {
            "level": self.level,
            "keys": "made by mwperf (removed after the run)" if self.made else f"keystore {self.path}",
            "protection": self.protection(),
            "identity_ca": cert(public / "identity_ca.cert.pem"),
            "permissions_ca": cert(public / "permissions_ca.cert.pem"),
            "identities": {name: cert(self.enclaves / name.lstrip("/") / "cert.pem") for name in names},
        }


def _link(link: Path, target: Path) -> None:
    if not link.exists():
        link.symlink_to(os.path.relpath(target, link.parent))


def open_keystore(text: str) -> Keystore:
    """The user's keystore (``--keystore DIR``), checked: SROS2's layout, a governance signed by its
    permissions CA. UsageError naming what is wrong (its enclaves are checked as a point needs them)."""
    path = Path(text).expanduser()
    if not path.is_dir():
        raise UsageError("--keystore", text, "not a directory")
    for need in ("public/identity_ca.cert.pem", "public/permissions_ca.cert.pem", "enclaves/governance.p7s"):
        if not (path / need).is_file():
            raise UsageError("--keystore", text, f"not a keystore in SROS2's layout (no {need}; "
                                                 f"`ros2 security create_keystore {text}` makes one)")
    store = Keystore(path.resolve())
    try:
        store.governance()
    except pki.PkiError as exc:
        raise UsageError("--keystore", text, f"enclaves/governance.p7s does not verify against "
                                             f"public/permissions_ca.cert.pem ({exc})") from None
    if "<domain_access_rules>" not in store.governance():
        raise UsageError("--keystore", text, "enclaves/governance.p7s holds no domain governance")
    return store


class _Made:
    """The run's made keystores: one CA, one keystore per level, in one private temporary folder."""

    def __init__(self) -> None:
        self.root: Path | None = None
        self.ca: pki.Authority | None = None
        self.stores: dict[str, Keystore] = {}
        self.lock = threading.Lock()

    def get(self, level: str) -> Keystore:
        with self.lock:
            if self.root is None:
                self.root = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-"))  # mode 0700
                (self.root / "ca").mkdir(mode=0o700)
                self.ca = pki.make_authority(self.root / "ca", "mwperf CA", VALID_DAYS)
            if level not in self.stores:
                self.stores[level] = self._keystore(level)
            return self.stores[level]

    def _keystore(self, level: str) -> Keystore:
        assert self.root is not None and self.ca is not None
        path = self.root / level
        for sub in ("public", "private", "enclaves"):
            (path / sub).mkdir(parents=True, mode=0o700)
        shutil.copyfile(self.ca.cert, path / "public" / "ca.cert.pem")
        shutil.copyfile(self.ca.key, path / "private" / "ca.key.pem")
        os.chmod(path / "private" / "ca.key.pem", 0o600)
        for role in ("identity_ca", "permissions_ca"):
            _link(path / "public" / f"{role}.cert.pem", path / "public" / "ca.cert.pem")
            _link(path / "private" / f"{role}.key.pem", path / "private" / "ca.key.pem")
        ca = pki.Authority(path / "public" / "ca.cert.pem", path / "private" / "ca.key.pem")
        (path / "enclaves" / "governance.xml").write_text(governance_xml(level))
        pki.smime_sign(ca, path / "enclaves" / "governance.xml", path / "enclaves" / "governance.p7s")
        return Keystore(path, made=True, ca=ca)

    def remove(self) -> None:
        with self.lock:
            root, self.root, self.ca, self.stores = self.root, None, None, {}
        if root is not None:
            shutil.rmtree(root, ignore_errors=True)


_MADE = _Made()


def made_keystore(level: str) -> Keystore:
    """This run's keystore for ``level`` (auth, sign, encrypt), made at first use."""
    if level not in _LEVEL_KIND:
        raise ValueError(f"no keystore for security level {level!r}")
    return _MADE.get(level)


def remove_made() -> None:
    """Remove every keystore this process made (its keys with them)."""
    _MADE.remove()


def clean_stale(tmp: Path | None = None) -> list[str]:
    """The made keystores of processes that are gone (a killed run's), removed."""
    base = Path(tmp or tempfile.gettempdir())
    removed = []
    for folder in base.glob(f"{PREFIX}*"):
        pid = folder.name[len(PREFIX):].split("-", 1)[0]
        try:
            if not pid.isdigit() or folder.lstat().st_uid != os.geteuid() or Path(f"/proc/{pid}").exists():
                continue
            shutil.rmtree(folder)
        except OSError:
            continue
        removed.append(str(folder))
    return removed


# --- a point's keys ------------------------------------------------------------------------------

_OPENED: dict[Path, Keystore] = {}


def secured(point: TestPoint) -> str | None:
    """The point's DDS Security level, None when it has none."""
    level = point.get("security")
    return level if level in _LEVEL_KIND else None


def for_point(opts: RunOptions, point: TestPoint) -> Keystore | None:
    """The keystore of a secured point: the user's (--keystore), else this run's made one for its level."""
    level = secured(point)
    if level is None:
        return None
    if opts.keystore is None:
        return made_keystore(level)
    path = opts.keystore.resolve()
    if path not in _OPENED:
        _OPENED[path] = open_keystore(str(opts.keystore))
    return _OPENED[path]


def _names(point: TestPoint) -> list[str]:
    """The enclaves of the point's sides: the publisher's, then each subscriber process's."""
    processes = 1 if point.threaded else point.subscribers
    return [enclave_name("pub")] + [enclave_name("sub", i) for i in range(processes)]


def enclave_args(opts: RunOptions, point: TestPoint, role: str, index: int = 0) -> list[str]:
    """The agent's ``--enclave DIR`` for one side of a secured point (none for another)."""
    store = for_point(opts, point)
    return [] if store is None else ["--enclave", str(store.enclave(enclave_name(role, index)))]


def section(opts: RunOptions, point: TestPoint) -> dict | None:
    """The record's ``security`` section of a secured point (None for another)."""
    store = for_point(opts, point)
    return None if store is None else store.describe(_names(point))


def check_keystore(options: list[RunOptions]) -> None:
    """Before anything runs: the user's keystore of each run's options is one, holds every enclave its points
    need, and its governance's level is the one each secured point asks for (UsageError naming the first that
    is not)."""
    for opts in options:
        if opts.keystore is None:
            continue
        for point in opts.points():
            level = secured(point)
            store = for_point(opts, point)
            if level is None or store is None:
                continue
            if store.level != level:
                kinds = ", ".join(f"{k} {v}" for k, v in store.protection().items())
                raise UsageError("--security", level,
                                 f"the keystore's governance ({kinds}) is the {store.level} level: "
                                 f"--security {store.level} with --keystore {opts.keystore}")
            for name in _names(point):
                store.enclave(name)
