"""A public-key infrastructure for DDS Security, made with the ``openssl``
command-line tool: a certificate authority, identities it certifies, and
documents it signs as S/MIME (what the DDS Security specification asks of
the governance and permissions documents: ``multipart/signed``, the signer's
certificate inside). Keys are ECDSA on prime256v1 (P-256), which every DDS
Security implementation here accepts (Cyclone DDS: RSA-2048 or P-256).

Nothing here knows DDS; :mod:`mwperf.execute.keystore` lays these files out
as SROS2 does. Files are written with mode 0600 into directories the caller
made private. Reading a certificate (its SHA-256 fingerprint, its subject)
never reads a private key: the record names certificates, never keys.
"""

from __future__ import annotations

import base64
import hashlib
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from mwperf.errors import MwperfError

__all__ = ["PkiError", "Authority", "make_authority", "issue", "smime_sign", "smime_content", "smime_text",
           "fingerprint", "subject", "key_algorithm", "openssl_version", "KEY_ALGORITHM"]

#: What every key made here is.
KEY_ALGORITHM = "ECDSA P-256 (prime256v1), SHA-256 signatures"
_TIMEOUT_S = 30.0
_PEM_CERT = re.compile(rb"-----BEGIN CERTIFICATE-----(.+?)-----END CERTIFICATE-----", re.S)


class PkiError(MwperfError):
    """openssl failed or a file is not what it should be; the message is one line naming it."""


@dataclass(frozen=True)
class Authority:
    """A certificate authority: its self-signed certificate and its private key."""

    cert: Path
    key: Path


def _openssl(*args: str, stdin: bytes | None = None) -> bytes:
    tool = shutil.which("openssl")
    if tool is None:
        raise PkiError("the openssl command is not installed (apt-get install openssl)")
    try:
        done = subprocess.run([tool, *args], input=stdin, capture_output=True, timeout=_TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired:
        raise PkiError(f"openssl {args[0]} took more than {_TIMEOUT_S:g} s") from None
    if done.returncode != 0:
        lines = [ln.strip() for ln in done.stderr.decode(errors="replace").splitlines() if ln.strip()]
        raise PkiError(f"openssl {args[0]}: {lines[0] if lines else f'exit code {done.returncode}'}")
    return done.stdout


def _private(path: Path) -> None:
    os.chmod(path, 0o600)


def _subj(common_name: str) -> str:
    """``-subj`` of ``CN=common_name`` (a slash of the name escaped: openssl's separator)."""
    return "/CN=" + common_name.replace("\\", "\\\\").replace("/", "\\/")


def _new_key(path: Path) -> None:
    _openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-out", str(path))
    _private(path)


def make_authority(directory: Path, name: str, days: int) -> Authority:
    """A new CA in ``directory`` (``ca.key.pem``, ``ca.cert.pem``): subject ``CN=name``, valid for ``days``."""
    key, cert = directory / "ca.key.pem", directory / "ca.cert.pem"
    _new_key(key)
    _openssl("req", "-new", "-x509", "-key", str(key), "-out", str(cert), "-subj", _subj(name),
             "-days", str(days), "-sha256", "-addext", "basicConstraints=critical,CA:TRUE",
             "-addext", "keyUsage=critical,digitalSignature,keyCertSign,cRLSign")
    return Authority(cert, key)


def issue(ca: Authority, common_name: str, key_out: Path, cert_out: Path, days: int) -> None:
    """A new key pair for ``common_name`` and its certificate signed by ``ca``."""
    _new_key(key_out)
    request = _openssl("req", "-new", "-key", str(key_out), "-subj", _subj(common_name))
    serial = "0x" + os.urandom(16).hex()
    _openssl("x509", "-req", "-CA", str(ca.cert), "-CAkey", str(ca.key), "-set_serial", serial,
             "-days", str(days), "-sha256", "-out", str(cert_out), stdin=request)


def smime_sign(ca: Authority, document: Path, out: Path) -> None:
    """``document`` signed by ``ca`` as S/MIME multipart/signed (clear text, signer's certificate included)."""
    _openssl("smime", "-sign", "-text", "-in", str(document), "-out", str(out),
             "-signer", str(ca.cert), "-inkey", str(ca.key))


def smime_content(signed: Path, ca_cert: Path) -> bytes:
    """The document an S/MIME-signed file holds, as it was signed, its signature checked against
    ``ca_cert``; PkiError when it does not verify (another signer, a changed text, not S/MIME)."""
    return _openssl("smime", "-verify", "-text", "-in", str(signed), "-CAfile", str(ca_cert))


def smime_text(signed: Path, ca_cert: Path) -> str:
    """:func:`smime_content` as text (an undecodable byte replaced)."""
    return smime_content(signed, ca_cert).decode(errors="replace")


def _der(cert: Path) -> bytes:
    try:
        text = cert.read_bytes()
    except OSError as exc:
        raise PkiError(f"{cert}: {exc.strerror or exc}") from None
    found = _PEM_CERT.search(text)
    if found is None:
        raise PkiError(f"{cert}: not a PEM certificate")
    try:
        return base64.b64decode(b"".join(found.group(1).split()), validate=True)
    except ValueError:
        raise PkiError(f"{cert}: not a PEM certificate (bad base64)") from None


def fingerprint(cert: Path) -> str:
    """The certificate's SHA-256 fingerprint (of its DER form), as ``openssl x509 -fingerprint`` writes it."""
    digest = hashlib.sha256(_der(cert)).hexdigest().upper()
    return ":".join(digest[i:i + 2] for i in range(0, len(digest), 2))


def subject(cert: Path) -> str:
    """The certificate's subject, RFC 2253 (as a permissions document's subject_name names it)."""
    text = _openssl("x509", "-noout", "-subject", "-nameopt", "RFC2253", "-in", str(cert)).decode().strip()
    return text.removeprefix("subject=").strip()


def key_algorithm(cert: Path) -> str:
    """The certificate's public key and signature algorithms, e.g. ``id-ecPublicKey prime256v1, ecdsa-with-SHA256``."""
    text = _openssl("x509", "-noout", "-text", "-in", str(cert)).decode(errors="replace")
    key = re.search(r"Public Key Algorithm:\s*(\S+)", text)
    curve = re.search(r"NIST CURVE:\s*(\S+)|ASN1 OID:\s*(\S+)", text)
    sig = re.search(r"Signature Algorithm:\s*(\S+)", text)
    parts = [key.group(1) if key else "?"]
    if curve:
        parts[0] += " " + (curve.group(2) or curve.group(1))
    return ", ".join(parts + ([sig.group(1)] if sig else []))


def openssl_version() -> str:
    return _openssl("version").decode().strip()
