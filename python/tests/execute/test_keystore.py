"""Keystores (execute/keystore.py): mwperf's own in SROS2's layout with a
governance per level, read back by an XML parser (not by the module's own
reading); what the record says of them (certificates, never a key); the
user's keystore refused with the reason when it is not one; what a killed
run left removed by the next."""

import json
import os
import shutil
import subprocess
import xml.etree.ElementTree as ET

import pytest

from mwperf.errors import UsageError
from mwperf.execute import keystore, pki


@pytest.fixture
def made():
    yield keystore.made_keystore
    keystore.remove_made()


def _governance(store) -> ET.Element:
    text = pki.smime_text(store.enclaves / "governance.p7s", store.path / "public" / "permissions_ca.cert.pem")
    return ET.fromstring(text[text.index("<dds"):])


@pytest.mark.parametrize("level,kind", [("auth", "NONE"), ("sign", "SIGN"), ("encrypt", "ENCRYPT")])
def test_a_made_keystore_has_sros2s_layout_and_the_levels_governance(made, level, kind):
    store = made(level)
    pub = store.enclave("/mwperf/pub")
    assert pub == store.path / "enclaves" / "mwperf" / "pub"
    for name in keystore.ENCLAVE_FILES + ("permissions.xml",):
        assert (pub / name).is_file(), name
    for name in ("ca.cert.pem", "identity_ca.cert.pem", "permissions_ca.cert.pem"):
        assert (store.path / "public" / name).is_file()
    assert (store.path / "private" / "ca.key.pem").stat().st_mode & 0o077 == 0
    assert (pub / "key.pem").stat().st_mode & 0o077 == 0
    assert store.path.parent.stat().st_mode & 0o077 == 0  # the run's folder is private
    rule = _governance(store).find("domain_access_rules/domain_rule")
    topic = rule.find("topic_access_rules/topic_rule")
    assert rule.findtext("allow_unauthenticated_participants") == "false"
    assert rule.findtext("discovery_protection_kind") == kind
    assert rule.findtext("rtps_protection_kind") == "NONE"
    assert topic.findtext("metadata_protection_kind") == kind
    assert topic.findtext("data_protection_kind") == "NONE"
    assert topic.findtext("enable_read_access_control") == "true"
    assert store.level == level
    # the identity is certified by the keystore's identity CA, its permissions name it and are signed
    assert subprocess.run(["openssl", "verify", "-CAfile", str(pub / "identity_ca.cert.pem"), str(pub / "cert.pem")],
                          capture_output=True).returncode == 0
    permissions = pki.smime_text(pub / "permissions.p7s", pub / "permissions_ca.cert.pem")
    grant = ET.fromstring(permissions[permissions.index("<dds"):]).find("permissions/grant")
    assert grant.findtext("subject_name") == pki.subject(pub / "cert.pem") == "CN=/mwperf/pub"


def test_one_ca_for_every_level_and_one_identity_per_enclave(made):
    sign, encrypt = made("sign"), made("encrypt")
    assert pki.fingerprint(sign.path / "public" / "ca.cert.pem") == \
        pki.fingerprint(encrypt.path / "public" / "ca.cert.pem")
    pub, sub = sign.enclave("/mwperf/pub"), sign.enclave("/mwperf/sub")
    assert pki.fingerprint(pub / "cert.pem") != pki.fingerprint(sub / "cert.pem")
    assert sign.enclave("/mwperf/pub") == pub and pki.fingerprint(pub / "cert.pem") == \
        pki.fingerprint(sign.enclave("/mwperf/pub") / "cert.pem")  # made once


def test_the_record_names_certificates_and_never_a_key(made):
    store = made("encrypt")
    names = ["/mwperf/pub", "/mwperf/sub"]
    for name in names:
        store.enclave(name)
    section = store.describe(names)
    text = json.dumps(section)
    assert section["level"] == "encrypt" and section["keys"].startswith("made by mwperf")
    assert section["protection"] == {"discovery": "ENCRYPT", "liveliness": "ENCRYPT", "rtps": "NONE",
                                     "metadata": "ENCRYPT", "data": "NONE"}
    printed = subprocess.run(["openssl", "x509", "-noout", "-fingerprint", "-sha256", "-in",
                              str(store.enclaves / "mwperf" / "sub" / "cert.pem")], capture_output=True, text=True)
    assert section["identities"]["/mwperf/sub"]["sha256"] == printed.stdout.strip().split("=", 1)[1]
    for key in [store.path / "private" / "ca.key.pem"] + [store.enclaves / n.lstrip("/") / "key.pem" for n in names]:
        body = "".join(key.read_text().splitlines()[1:-1])
        assert body[:40] not in text
    assert "PRIVATE" not in text


def test_made_keystores_are_removed_and_a_killed_runs_by_the_next(tmp_path, made):
    root = made("auth").path.parent
    keystore.remove_made()
    assert not root.exists()
    dead = subprocess.Popen(["true"])
    dead.wait()
    (tmp_path / f"{keystore.PREFIX}{dead.pid}-x").mkdir()
    (tmp_path / f"{keystore.PREFIX}{os.getpid()}-y").mkdir()
    assert keystore.clean_stale(tmp_path) == [str(tmp_path / f"{keystore.PREFIX}{dead.pid}-x")]
    assert (tmp_path / f"{keystore.PREFIX}{os.getpid()}-y").exists()


def _copy(store, to):
    shutil.copytree(store.path, to, symlinks=True)
    return to


def test_a_users_keystore_is_read_and_its_governance_decides_the_level(tmp_path, made):
    source = made("sign")
    source.enclave("/mwperf/pub")
    users = keystore.open_keystore(str(_copy(source, tmp_path / "ks")))
    assert not users.made and users.level == "sign"
    assert users.enclave("/mwperf/pub") == tmp_path / "ks" / "enclaves" / "mwperf" / "pub"
    assert users.describe(["/mwperf/pub"])["keys"] == f"keystore {tmp_path / 'ks'}"
    with pytest.raises(UsageError, match=r"no enclave /mwperf/sub .*ros2 security create_enclave"):
        users.enclave("/mwperf/sub")


@pytest.mark.parametrize("level", ["auth", "sign", "encrypt"])
def test_mwperfs_own_keystore_passes_every_check_of_a_users(tmp_path, made, level):
    # read back as a user's keystore is: its governance's rule, each enclave's CAs, governance and permissions
    source = made(level)
    for name in ("/mwperf/pub", "/mwperf/sub", "/mwperf/sub1"):
        source.enclave(name)
    users = keystore.open_keystore(str(_copy(source, tmp_path / "ks")))
    users.check(level)
    for name in ("/mwperf/pub", "/mwperf/sub", "/mwperf/sub1"):
        users.enclave(name)
    assert str(users.rule()) == "domain_rule 1 (domains 0-230), topic_rule 1 (topic_expression '*')"
    others = [other for other in keystore.LEVELS[1:] if other != level]
    for other in others:  # a weaker level measures less than it says, a stronger one more: both refused
        with pytest.raises(UsageError, match=rf"^--security {other}: {tmp_path / 'ks'}/enclaves/governance.p7s "
                                             rf"domain_rule 1 \(domains 0-230\), topic_rule 1"):
            users.check(other)
    assert keystore.point_domain() == 0  # the agent's --domain default, which a topic point keeps


def test_the_record_says_which_rule_it_read_the_kinds_from(made):
    section = made("sign").describe([])
    assert section["governance"] == {"document": "enclaves/governance.p7s", "domain": 0, "domain_rule": 1,
                                     "domains": "0-230", "topic_rule": 1, "topic_expression": "*"}
    assert section["protection"]["metadata"] == "SIGN"


def test_sros2s_default_governance_is_the_encrypt_level():
    # SROS2's template: the message signed, discovery, liveliness, submessages and payloads encrypted
    kinds = {"discovery": "ENCRYPT", "liveliness": "ENCRYPT", "rtps": "SIGN", "metadata": "ENCRYPT",
             "data": "ENCRYPT"}
    assert keystore.level_of(kinds) == "encrypt"
    assert keystore.level_of({**kinds, "metadata": "NONE", "data": "NONE"}) == "sign"
    assert keystore.level_of({k: "NONE" for k in kinds}) == "auth"


def test_what_is_not_a_keystore_is_refused_with_the_reason(tmp_path, made):
    with pytest.raises(UsageError, match="not a directory"):
        keystore.open_keystore(str(tmp_path / "none"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(UsageError, match=r"not a keystore in SROS2's layout \(no public/identity_ca.cert.pem"):
        keystore.open_keystore(str(tmp_path / "empty"))
    # a governance another CA signed
    source = made("encrypt")
    forged = _copy(source, tmp_path / "forged")
    other = pki.make_authority(tmp_path, "another CA", 1)
    (forged / "enclaves" / "governance.p7s").unlink()
    pki.smime_sign(other, forged / "enclaves" / "governance.xml", forged / "enclaves" / "governance.p7s")
    with pytest.raises(UsageError, match="governance.p7s does not verify against public/permissions_ca.cert.pem"):
        keystore.open_keystore(str(forged))


def test_a_huge_signed_governance_is_refused_unread(tmp_path, made):
    users = _copy(made("encrypt"), tmp_path / "ks")
    huge = users / "enclaves" / "governance.p7s"
    huge.unlink()
    with huge.open("wb") as f:
        f.truncate(5 << 20)
    with pytest.raises(UsageError, match=r"enclaves/governance.p7s: 5242880 bytes, more than a signed document"):
        keystore.open_keystore(str(users))
