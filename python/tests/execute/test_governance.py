"""DDS Security documents read as XML (execute/governance.py): the rule that
applies is the first domain rule holding the domain and in it the first
topic rule matching the topics, whatever a comment, a CDATA section or a
foreign namespace says; a hostile document (entities, a DOCTYPE, a huge or
deep one) is refused in one line, never expanded; permissions decide by
their first matching rule, else their default. Each document here is
written by the test, its answer known."""

import time
from datetime import datetime, timezone

import pytest

from mwperf.execute import governance
from mwperf.execute.governance import TOPICS, DocumentError, check_grant, parse, rule_for

DATA, ECHO = TOPICS["data"], TOPICS["echo"]


def topic_rule(expr: str, metadata: str = "ENCRYPT", data: str = "NONE", extra: str = "") -> str:
    return (f"<topic_rule><topic_expression>{expr}</topic_expression>{extra}"
            f"<metadata_protection_kind>{metadata}</metadata_protection_kind>"
            f"<data_protection_kind>{data}</data_protection_kind></topic_rule>")


def domain_rule(domains: str, *topics: str, rtps: str = "NONE", kind: str = "ENCRYPT", extra: str = "") -> str:
    return (f"<domain_rule><domains>{domains}</domains>{extra}"
            f"<discovery_protection_kind>{kind}</discovery_protection_kind>"
            f"<liveliness_protection_kind>{kind}</liveliness_protection_kind>"
            f"<rtps_protection_kind>{rtps}</rtps_protection_kind>"
            f"<topic_access_rules>{''.join(topics)}</topic_access_rules></domain_rule>")


def document(*rules: str, head: str = "", root: str = "<dds>") -> bytes:
    return f"{head}{root}<domain_access_rules>{''.join(rules)}</domain_access_rules></dds>".encode()


def kinds_of(doc: bytes, domain: int = 0, topic=DATA) -> dict:
    return rule_for(parse(doc), domain, topic).kinds


ALL_RANGE = "<id_range><min>0</min><max>230</max></id_range>"


def test_mwperfs_own_governance_gives_its_level():
    for level, kind in (("auth", "NONE"), ("sign", "SIGN"), ("encrypt", "ENCRYPT")):
        rule = rule_for(parse(governance.governance_xml(level).encode()), 0, DATA)
        assert rule.kinds == {"discovery": kind, "liveliness": kind, "rtps": "NONE", "metadata": kind, "data": "NONE"}
        assert governance.level_of(rule.kinds) == level
        assert str(rule) == "domain_rule 1 (domains 0-230), topic_rule 1 (topic_expression '*')"


def test_a_comment_or_a_cdata_section_is_no_element():
    # the document: every kind NONE, ENCRYPT in a comment before them
    comment = "<!-- <rtps_protection_kind>ENCRYPT</rtps_protection_kind><metadata_protection_kind>ENCRYPT" \
              "</metadata_protection_kind> -->"
    doc = document(domain_rule(ALL_RANGE, topic_rule("*", metadata="NONE"), kind="NONE", extra=comment))
    assert set(kinds_of(doc).values()) == {"NONE"}
    cdata = "<![CDATA[<data_protection_kind>ENCRYPT</data_protection_kind>]]>"
    doc = document(domain_rule(ALL_RANGE, topic_rule("*", metadata="NONE", extra=cdata), kind="NONE"))
    assert set(kinds_of(doc).values()) == {"NONE"}
    # CDATA inside a value is its text
    doc = document(domain_rule(ALL_RANGE, topic_rule("*", metadata="<![CDATA[SIGN]]>")))
    assert kinds_of(doc)["metadata"] == "SIGN"


def test_namespaces_are_honoured():
    omg = 'xmlns="http://www.omg.org/spec/DDS-Security/20170801/omg_shared_ca_governance.xsd"'
    assert kinds_of(document(domain_rule(ALL_RANGE, topic_rule("*")), root=f"<dds {omg}>"))["metadata"] == "ENCRYPT"
    # another namespace's element is not the specification's: the rule lacks its kind
    foreign = ('<x:data_protection_kind xmlns:x="urn:other">ENCRYPT</x:data_protection_kind>'
               '<data_protection_kind>NONE</data_protection_kind>')
    rule = domain_rule(ALL_RANGE, f"<topic_rule><topic_expression>*</topic_expression><metadata_protection_kind>NONE"
                                  f"</metadata_protection_kind>{foreign}</topic_rule>")
    assert kinds_of(document(rule))["data"] == "NONE"
    with pytest.raises(DocumentError, match="its root is <{urn:evil}dds>, not <dds>"):
        kinds_of(document(domain_rule(ALL_RANGE, topic_rule("*")), root='<dds xmlns="urn:evil">'))
    with pytest.raises(DocumentError, match="not XML .*unbound prefix"):
        parse(b"<dds><y:a/></dds>")


def test_the_first_matching_domain_rule_and_topic_rule_win():
    doc = document(domain_rule("<id>7</id>", topic_rule("*", metadata="SIGN")),
                   domain_rule("<id_range><min>0</min><max>5</max></id_range>",
                               topic_rule("rt/other_*", metadata="NONE"),
                               topic_rule("rt/mwperf_*", metadata="ENCRYPT"),
                               topic_rule("*", metadata="NONE")),
                   domain_rule(ALL_RANGE, topic_rule("*", metadata="SIGN")))
    rule = rule_for(parse(doc), 0, DATA)
    assert (rule.domain_rule, rule.topic_rule, rule.kinds["metadata"]) == (2, 2, "ENCRYPT")
    assert rule_for(parse(doc), 7, DATA).kinds["metadata"] == "SIGN"
    assert rule_for(parse(doc), 6, DATA).domain_rule == 3
    assert rule_for(parse(doc), 12, ECHO).domains == "0-230"
    open_ended = document(domain_rule("<id_range><min>3</min></id_range><id>1</id>", topic_rule("*")))
    assert rule_for(parse(open_ended), 200, DATA).domains == "3-,1"
    with pytest.raises(DocumentError, match="no domain_rule holds domain 2"):
        rule_for(parse(open_ended), 2, DATA)


@pytest.mark.parametrize("doc,says", [
    (document(domain_rule(ALL_RANGE, topic_rule("rt/other"))), "no topic_rule matches rt/mwperf_data_<run id>"),
    (document(domain_rule(ALL_RANGE, topic_rule("rt/mwperf_data_1*"), topic_rule("*"))),
     "topic_rule 1: topic_expression 'rt/mwperf_data_1\\*' matches rt/mwperf_data_<run id> of some run ids only"),
    (document(domain_rule(ALL_RANGE, topic_rule("*", metadata="encrypt"))), "'encrypt' is not one of NONE, SIGN"),
    (document(domain_rule(ALL_RANGE, topic_rule("*", data="ENCRYPT_WITH_ORIGIN_AUTHENTICATION"))),
     "data_protection_kind 'ENCRYPT_WITH_ORIGIN_AUTHENTICATION' is not one of NONE, SIGN, ENCRYPT$"),
    (document(domain_rule(ALL_RANGE, topic_rule("*"), extra="<rtps_protection_kind>SIGN</rtps_protection_kind>")),
     "2 <rtps_protection_kind> \\(one is read\\)"),
    (document(domain_rule(ALL_RANGE, "<topic_rule><topic_expression>*</topic_expression>"
                                     "<data_protection_kind>NONE</data_protection_kind></topic_rule>")),
     "topic_rule 1: no <metadata_protection_kind>"),
    (document(domain_rule("<id>x1</id>", topic_rule("*"))), "<id>x1</id> is not a domain id"),
    (document(domain_rule("", topic_rule("*"))), "<domains> hold no <id>"),
    (b"<dds><permissions/></dds>", "<dds>: no <domain_access_rules>"),
    (b"not xml", "not XML \\(syntax error, line 1\\)"),
])
def test_what_a_governance_cannot_say_is_refused_naming_the_rule(doc, says):
    with pytest.raises(DocumentError, match=says):
        rule_for(parse(doc), 0, DATA)


LAUGHS = b"""<?xml version="1.0"?>
<!DOCTYPE dds [<!ENTITY a "ENCRYPT"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">
<!ENTITY d "&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;"><!ENTITY e "&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;"><!ENTITY f "&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;">
<!ENTITY g "&f;&f;&f;&f;&f;&f;&f;&f;&f;&f;"><!ENTITY h "&g;&g;&g;&g;&g;&g;&g;&g;&g;&g;"><!ENTITY i "&h;&h;&h;&h;&h;&h;&h;&h;&h;&h;">]>
<dds><domain_access_rules>&i;</domain_access_rules></dds>"""


@pytest.mark.parametrize("doc,says", [
    (LAUGHS, r"a document type declaration \(<!DOCTYPE>\): refused"),
    (b'<!DOCTYPE dds SYSTEM "file:///etc/passwd"><dds/>', "a document type declaration"),
    (b'<?xml version="1.0"?><!DOCTYPE d [<!ENTITY x SYSTEM "file:///etc/shadow">]><dds>&x;</dds>',
     "a document type declaration"),
    (b"<dds>&x;</dds>", r"not XML \(undefined entity"),
    (b"<dds>" + b"<a>" * 40 + b"</a>" * 40 + b"</dds>", "elements nested deeper than 32"),
    (b"<dds>" + b"<a>" * 200000 + b"</a>" * 200000 + b"</dds>", "more than the 1048576 read at most"),
    (b"<dds>" + b" " * (1 << 20) + b"</dds>", "more than the 1048576 read at most"),
])
def test_a_hostile_document_is_refused_never_expanded(doc, says):
    began = time.monotonic()
    with pytest.raises(DocumentError, match=says):
        parse(doc)
    assert time.monotonic() - began < 2


# --- permissions -------------------------------------------------------------------------------

NOW = datetime(2026, 12, 7, 12, tzinfo=timezone.utc)


def grant(*rules: str, subject: str = "CN=/mwperf/pub", default: str = "DENY",
          valid: tuple[str, str] = ("2026-12-01T00:00:00", "2027-01-01T00:00:00")) -> bytes:
    return (f'<dds><permissions><grant name="g"><subject_name>{subject}</subject_name>'
            f"<validity><not_before>{valid[0]}</not_before><not_after>{valid[1]}</not_after></validity>"
            f"{''.join(rules)}<default>{default}</default></grant></permissions></dds>").encode()


def rule(kind: str, *criteria: str, domains: str = ALL_RANGE) -> str:
    return f"<{kind}><domains>{domains}</domains>{''.join(criteria)}</{kind}>"


def criterion(action: str, *topics: str, partitions: tuple[str, ...] | None = None) -> str:
    parts = "" if partitions is None else \
        "<partitions>" + "".join(f"<partition>{p}</partition>" for p in partitions) + "</partitions>"
    return f"<{action}><topics>{''.join(f'<topic>{t}</topic>' for t in topics)}</topics>{parts}</{action}>"


PUB = [("publish", DATA), ("subscribe", ECHO)]


def test_mwperfs_own_permissions_grant_both_sides():
    doc = governance.permissions_xml("CN=/mwperf/pub", datetime(2026, 12, 1), datetime(2027, 1, 1)).encode()
    assert check_grant(parse(doc), "CN=/mwperf/pub", 0, PUB, NOW) == "CN=/mwperf/pub"
    assert check_grant(parse(doc), "cn = /mwperf/pub", 0, PUB, NOW)  # the same name, spelt otherwise


@pytest.mark.parametrize("doc,says", [
    (grant(rule("allow_rule", criterion("publish", "*"), criterion("subscribe", "*")), subject="CN=other"),
     "no <grant> for subject_name CN=/mwperf/pub"),
    (grant(rule("allow_rule", criterion("publish", "*"), criterion("subscribe", "*")),
           valid=("2025-01-01T00:00:00", "2025-02-01T00:00:00")), "grant 'g' is valid from 2025-01-01"),
    (grant(rule("allow_rule", criterion("publish", "*"))),
     "grant 'g''s <default> denies subscribe of rt/mwperf_echo_<run id> in domain 0"),
    (grant(rule("deny_rule", criterion("publish", "rt/mwperf_*")), rule("allow_rule", criterion("publish", "*"),
                                                                        criterion("subscribe", "*"))),
     "grant 'g', deny_rule 1 denies publish of rt/mwperf_data_<run id>"),
    (grant(rule("allow_rule", criterion("publish", "rt/mwperf_data_2*"), criterion("subscribe", "*"))),
     "allow_rule 1: its publish topics match rt/mwperf_data_<run id> of some run ids only"),
    (grant(rule("allow_rule", criterion("publish", "*", partitions=("robots",)), criterion("subscribe", "*"))),
     "<default> denies publish"),  # the agents' endpoints are in the default partition
    (grant(rule("allow_rule", criterion("publish", "*"), criterion("subscribe", "*"), domains="<id>5</id>")),
     "<default> denies publish"),
])
def test_permissions_decide_by_their_first_matching_rule(doc, says):
    with pytest.raises(DocumentError, match=says.replace("(", r"\(").replace("*", r"\*")):
        check_grant(parse(doc), "CN=/mwperf/pub", 0, PUB, NOW)


def test_permissions_that_allow_are_read_in_order():
    allow = grant(rule("allow_rule", criterion("publish", "rt/mwperf_data_*", partitions=("*",))),
                  rule("deny_rule", criterion("publish", "*")), rule("allow_rule", criterion("subscribe", "*")))
    assert check_grant(parse(allow), "CN=/mwperf/pub", 0, PUB, NOW) == "g"
    assert check_grant(parse(grant(default="ALLOW")), "CN=/mwperf/pub", 0, PUB, NOW) == "g"
