"""The PKI (execute/pki.py) against openssl's own checks: a certificate
verifies against the CA that issued it and not against another, a signed
document verifies and its text comes back, a changed byte does not verify,
and the fingerprint is the one ``openssl x509 -fingerprint -sha256`` prints."""

import subprocess

import pytest

from mwperf.execute import pki


@pytest.fixture(scope="module")
def two_cas(tmp_path_factory):
    a, b = tmp_path_factory.mktemp("a"), tmp_path_factory.mktemp("b")
    return pki.make_authority(a, "CA one", 1), pki.make_authority(b, "CA two", 1)


def _openssl(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["openssl", *args], capture_output=True, text=True, check=False)


def test_a_certificate_verifies_against_its_ca_only(tmp_path, two_cas):
    one, two = two_cas
    pki.issue(one, "/mwperf/pub", tmp_path / "key.pem", tmp_path / "cert.pem", 1)
    assert _openssl("verify", "-CAfile", str(one.cert), str(tmp_path / "cert.pem")).returncode == 0
    assert _openssl("verify", "-CAfile", str(two.cert), str(tmp_path / "cert.pem")).returncode != 0
    assert pki.subject(tmp_path / "cert.pem") == "CN=/mwperf/pub"  # the slashes of an enclave's name kept
    assert (tmp_path / "key.pem").stat().st_mode & 0o077 == 0
    assert pki.key_algorithm(tmp_path / "cert.pem") == "id-ecPublicKey prime256v1, ecdsa-with-SHA256"


def test_the_fingerprint_is_openssls(two_cas):
    one, _ = two_cas
    printed = _openssl("x509", "-noout", "-fingerprint", "-sha256", "-in", str(one.cert)).stdout
    assert printed.strip().split("=", 1)[1] == pki.fingerprint(one.cert)


def test_a_signed_document_verifies_and_a_changed_one_does_not(tmp_path, two_cas):
    one, two = two_cas
    doc = tmp_path / "governance.xml"
    doc.write_text("<dds><domain_access_rules/></dds>\n")
    pki.smime_sign(one, doc, tmp_path / "governance.p7s")
    signed = (tmp_path / "governance.p7s").read_text()
    assert "multipart/signed" in signed and "application/x-pkcs7-signature" in signed
    assert "<domain_access_rules/>" in pki.smime_text(tmp_path / "governance.p7s", one.cert)
    assert _openssl("smime", "-verify", "-in", str(tmp_path / "governance.p7s"), "-CAfile", str(one.cert),
                    "-out", "/dev/null").returncode == 0
    with pytest.raises(pki.PkiError, match="Verification failure"):
        pki.smime_text(tmp_path / "governance.p7s", two.cert)
    (tmp_path / "changed.p7s").write_text(signed.replace("domain_access_rules", "domain_access_rulez"))
    with pytest.raises(pki.PkiError):
        pki.smime_text(tmp_path / "changed.p7s", one.cert)


def test_a_file_that_is_no_certificate_is_named(tmp_path):
    (tmp_path / "cert.pem").write_text("hello\n")
    with pytest.raises(pki.PkiError, match="cert.pem: not a PEM certificate"):
        pki.fingerprint(tmp_path / "cert.pem")
