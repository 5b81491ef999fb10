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
the record names each kind (:meth:`Keystore.protection`) and the rule it
read them from (:meth:`Keystore.rule`).

A user's keystore is read as its middleware reads it (the documents as XML,
:mod:`mwperf.execute.governance`): the governance rule that applies to the
point's domain and topics gives the level, and a point is refused (one line
naming the file, the rule and the kinds, exit 2) unless it is the level asked
for: ``sign`` needs SIGN (or ENCRYPT) on the RTPS message, the submessage or
the payload, ``encrypt`` ENCRYPT, and a stronger level than the one asked
for is refused too (the record would say sign of what measured encryption).
Each enclave is checked as its side's agent reads it: its governance.p7s
gives the same rule, its CAs are the keystore's, its permissions.p7s
(signed by its permissions CA) grants its certificate's subject, now, the
publish and subscribe of the point's topics.
"""

from __future__ import annotations

import errno
import os
import shutil
import tempfile
import threading
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

from mwperf.errors import UsageError
from mwperf.execute import governance, pki
from mwperf.execute.governance import LEVEL_KIND, TOPICS, DocumentError, governance_xml, level_of, permissions_xml
from mwperf.plan.options import RunOptions, TestPoint
from mwperf.table import snapshot

__all__ = ["LEVELS", "Keystore", "open_keystore", "made_keystore", "remove_made", "clean_stale", "enclave_name",
           "governance_xml", "permissions_xml", "level_of", "ENCLAVE_FILES", "PREFIX", "secured", "for_point",
           "enclave_args", "section", "check_keystore", "read_rule", "point_domain", "GOVERNANCE"]

LEVELS = ("none", "auth", "sign", "encrypt")
#: What an enclave's folder holds (SROS2's names), every one of them needed.
ENCLAVE_FILES = ("identity_ca.cert.pem", "cert.pem", "key.pem", "permissions_ca.cert.pem", "governance.p7s",
                 "permissions.p7s")
#: The made keystores' folder: PREFIX<pid>- in the temporary directory.
PREFIX = "mwperf-keys-"
VALID_DAYS = 30
#: The keystore's governance, as SROS2 lays it out (each enclave's governance.p7s is a link to it).
GOVERNANCE = "enclaves/governance.p7s"
#: What a level needs of the kinds on the data's path, said in a refusal.
_NEEDS = {"sign": "sign needs SIGN or ENCRYPT (or their _WITH_ORIGIN_AUTHENTICATION) on the RTPS message (rtps), "
                  "the submessage (metadata) or the payload (data)",
          "encrypt": "encrypt needs ENCRYPT (or ENCRYPT_WITH_ORIGIN_AUTHENTICATION) on the RTPS message (rtps), "
                     "the submessage (metadata) or the payload (data)"}
_RANK = {level: i for i, level in enumerate(LEVELS)}


def point_domain() -> int:
    """The DDS domain of a topic point: the agent's --domain default (its option table), which mwperf keeps."""
    return int(snapshot()["domain"].default)


def enclave_name(role: str, index: int = 0) -> str:
    """The enclave of one side: ``/mwperf/pub``, ``/mwperf/sub``, ``/mwperf/sub2``."""
    return "/mwperf/pub" if role == "pub" else "/mwperf/sub" if index == 0 else f"/mwperf/sub{index}"


def read_rule(document: bytes, domain: int) -> governance.Rule:
    """The rule of a governance document that applies to a point's topics in ``domain`` (its data topic's;
    its echo topic's gives the same kinds, or DocumentError)."""
    root = governance.parse(document)
    data = governance.rule_for(root, domain, TOPICS["data"])
    echo = governance.rule_for(root, domain, TOPICS["echo"])
    if echo.kinds != data.kinds:
        raise DocumentError(f"{TOPICS['data']} has {data} ({_said(data.kinds)}), {TOPICS['echo']} {echo} "
                            f"({_said(echo.kinds)}): a point's two topics protected alike, or not measured")
    return data


def _said(kinds: dict[str, str]) -> str:
    return ", ".join(f"{k} {v}" for k, v in kinds.items())


def _needs(role: str) -> list[tuple[str, governance.Topic]]:
    """What a side's agent does with the point's topics (each writes one and reads the other)."""
    out, back = ("data", "echo") if role == "pub" else ("echo", "data")
    return [("publish", TOPICS[out]), ("subscribe", TOPICS[back])]


@dataclass
class Keystore:
    """A keystore in SROS2's layout; ``made``: mwperf's own (it makes the enclaves it is asked for)."""

    path: Path
    made: bool = False
    ca: pki.Authority | None = None  # a made keystore's CA (its key stays in private/)
    given: str | None = None  # a user's keystore: as --keystore named it
    _rule: governance.Rule | None = field(default=None, repr=False)
    _checked: set[str] = field(default_factory=set, repr=False)  # a user's enclaves checked
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def enclaves(self) -> Path:
        return self.path / "enclaves"

    def _signed(self, document: Path, ca: Path) -> bytes:
        """A signed document of the keystore, verified against ``ca`` (UsageError naming it when not)."""
        try:
            size = document.stat().st_size
            if size > 4 * governance.MAX_BYTES:  # S/MIME of a document the parser would refuse anyway
                raise self._refused(f"{self._name(document)}: {size} bytes, more than a signed document of at "
                                    f"most {governance.MAX_BYTES} bytes")
            return pki.smime_content(document, ca)
        except OSError as exc:
            raise self._refused(f"{self._name(document)}: {exc.strerror or exc}") from None
        except pki.PkiError as exc:
            raise self._refused(f"{self._name(document)} does not verify against {self._name(ca)} ({exc})") \
                from None

    def _rule_of(self, document: Path, ca: Path) -> governance.Rule:
        try:
            return read_rule(self._signed(document, ca), point_domain())
        except DocumentError as exc:
            raise self._refused(f"{self._name(document)}: {exc}") from None

    def _name(self, path: Path) -> str:
        """A file of the keystore as a refusal names it: its path in the keystore."""
        return os.path.relpath(path, self.path) if path.is_relative_to(self.path) else str(path)

    def _refused(self, reason: str) -> UsageError:
        return UsageError("--keystore", self.given or str(self.path), reason)

    def rule(self) -> governance.Rule:
        """The governance's rule for the point's topics in its domain, and the kinds it gives (UsageError
        naming the rule or the element when the document cannot be read or says nothing for them)."""
        if self._rule is None:
            self._rule = self._rule_of(self.path / GOVERNANCE, self.path / "public" / "permissions_ca.cert.pem")
        return self._rule

    def protection(self) -> dict[str, str]:
        """Each protection kind the governance's rule sets: discovery, liveliness, rtps (the RTPS message),
        metadata (the submessage), data (the payload)."""
        return dict(self.rule().kinds)

    @property
    def level(self) -> str:
        return level_of(self.protection())

    def check(self, level: str) -> None:
        """UsageError (``--security LEVEL``: the file, the rule and its kinds) unless the governance's
        rule gives exactly ``level``: a weaker one would measure less than it says, a stronger one more."""
        got = self.level
        if got == level:
            return
        rule = self.rule()
        said = f"{self.path / GOVERNANCE} {rule}: {_said(rule.kinds)}"
        if _RANK[got] < _RANK[level]:
            raise UsageError("--security", level, f"{said}: {_NEEDS[level]}; this rule is the {got} level")
        raise UsageError("--security", level, f"{said}: is the {got} level, more than {level}: --security {got} "
                                              f"with --keystore {self.given or self.path}")

    def enclave(self, name: str) -> Path:
        """The folder of enclave ``name`` (made first in a made keystore); UsageError when a user's lacks it."""
        folder = self.enclaves / name.lstrip("/")
        with self._lock:
            if self.made and not (folder / "permissions.p7s").exists():
                self._make_enclave(name, folder)
        wrong = [_wrong(f, why) for f in ENCLAVE_FILES if (why := _not_a_file(folder / f)) is not None]
        if wrong:
            raise UsageError("--keystore", self.given or str(self.path),
                             f"no enclave {name} ({', '.join(wrong)} in {folder}; "
                             f"`ros2 security create_enclave {self.path} {name}` makes one)")
        if not self.made:
            with self._lock:
                if name not in self._checked:
                    self._check_enclave(name, folder)
                    self._checked.add(name)
        return folder

    def _check_enclave(self, name: str, folder: Path) -> None:
        """A user's enclave as its side's agent reads it (see the module)."""
        public = self.path / "public"
        for trusted in ("identity_ca.cert.pem", "permissions_ca.cert.pem"):
            try:
                same = pki.fingerprint(folder / trusted) == pki.fingerprint(public / trusted)
            except pki.PkiError as exc:
                raise self._refused(str(exc)) from None
            if not same:
                raise self._refused(f"enclave {name}'s {trusted} is not public/{trusted} (the record names the "
                                    f"keystore's)")
        ca = folder / "permissions_ca.cert.pem"
        own = self._rule_of(folder / "governance.p7s", ca)
        if own != self.rule():
            raise self._refused(f"enclave {name}'s governance.p7s has {own} ({_said(own.kinds)}), {GOVERNANCE} "
                                f"{self.rule()} ({_said(self.rule().kinds)}): its agent would run by another")
        document = folder / "permissions.p7s"
        try:
            root = governance.parse(self._signed(document, ca))
            governance.check_grant(root, pki.subject(folder / "cert.pem"), point_domain(),
                                   _needs("pub" if name == enclave_name("pub") else "sub"))
        except (DocumentError, pki.PkiError) as exc:
            raise self._refused(f"{self._name(document)}: {exc}") from None

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
            "governance": {"document": GOVERNANCE, **self.rule().as_dict()},
            "identity_ca": cert(public / "identity_ca.cert.pem"),
            "permissions_ca": cert(public / "permissions_ca.cert.pem"),
            "identities": {name: cert(self.enclaves / name.lstrip("/") / "cert.pem") for name in names},
        }


def _link(link: Path, target: Path) -> None:
    if not link.exists():
        link.symlink_to(os.path.relpath(target, link.parent))


def _not_a_file(path: Path) -> str | None:
    """None for a regular file (through its links), else what it is: missing, a symlink loop, ..."""
    try:
        os.path.realpath(path, strict=True)
        return None if path.is_file() else "is not a regular file"
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return f"is in a symlink loop ({exc.filename})"
        return "is a dangling symlink" if os.path.islink(path) else "is missing"


def _wrong(name: str, why: str) -> str:
    return f"no {name}" if why == "is missing" else f"{name} {why}"


def _real(text: str) -> Path:
    """The keystore's directory, every link followed (UsageError naming a symlink loop, a missing path)."""
    try:
        path = Path(os.path.realpath(Path(text).expanduser(), strict=True))
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UsageError("--keystore", text, f"a symlink loop ({exc.filename}: {exc.strerror})") from None
        raise UsageError("--keystore", text, f"not a directory ({exc.strerror})") from None
    if not path.is_dir():
        raise UsageError("--keystore", text, "not a directory")
    return path


def open_keystore(text: str) -> Keystore:
    """The user's keystore (``--keystore DIR``), checked: SROS2's layout, a governance signed by its
    permissions CA with a rule for the point's topics. UsageError naming what is wrong (its level is
    checked against the point's, :meth:`Keystore.check`, its enclaves as a point needs them)."""
    path = _real(text)
    for need in ("public/identity_ca.cert.pem", "public/permissions_ca.cert.pem", GOVERNANCE):
        if (why := _not_a_file(path / need)) is not None:
            raise UsageError("--keystore", text, f"not a keystore in SROS2's layout ({_wrong(need, why)}; "
                                                 f"`ros2 security create_keystore {text}` makes one)")
    store = Keystore(path, given=text)
    store.rule()
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
        store = Keystore(path, made=True, ca=ca)
        store.check(level)  # read back as a user's is: its rule for the point's topics gives the level
        return store

    def remove(self) -> None:
        with self.lock:
            root, self.root, self.ca, self.stores = self.root, None, None, {}
        if root is not None:
            shutil.rmtree(root, ignore_errors=True)


_MADE = _Made()


def made_keystore(level: str) -> Keystore:
    """This run's keystore for ``level`` (auth, sign, encrypt), made at first use."""
    if level not in LEVEL_KIND:
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
    return level if level in LEVEL_KIND else None


def for_point(opts: RunOptions, point: TestPoint) -> Keystore | None:
    """The keystore of a secured point: the user's (--keystore), else this run's made one for its level."""
    level = secured(point)
    if level is None:
        return None
    if opts.keystore is None:
        return made_keystore(level)
    path = _real(str(opts.keystore))
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
            store.check(level)
            for name in _names(point):
                store.enclave(name)
