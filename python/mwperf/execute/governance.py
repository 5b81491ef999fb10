"""DDS Security's governance and permissions documents (OMG DDS Security
1.1, sections 9.4.1.2 and 9.4.1.3): mwperf's own, one governance per level
(:func:`governance_xml`) and one permissions document per identity
(:func:`permissions_xml`), and a keystore's, read as XML: which protection
its governance gives the point's domain and topics (:func:`rule_for`), and
what its permissions let an identity do (:func:`check_grant`).

Every document is read by the standard library's expat parser, namespaces
honoured, under limits no document of the specification comes near: a
document type declaration is refused (and with it every entity but XML's
five: nothing is expanded, nothing fetched), so is a document over
``MAX_BYTES`` or nested deeper than ``MAX_DEPTH``. A comment or a processing
instruction is no element, a CDATA section is text. An element is the
specification's when it is in no namespace or in one of the OMG's DDS
Security namespaces (``http://www.omg.org/spec/DDS-SECURITY/...``); another
namespace's element is not read (``<x:rtps_protection_kind>`` of
``xmlns:x="urn:other"`` protects nothing).

What applies, as the specification says it:

* governance: the first ``<domain_rule>`` whose ``<domains>`` hold the
  point's domain id (an ``<id>``, or an ``<id_range>`` of a ``<min>`` and/or
  a ``<max>``), in it the first ``<topic_rule>`` whose ``<topic_expression>``
  matches the topic; the domain rule gives the discovery, liveliness and rtps
  (the RTPS message) protection kinds, the topic rule the metadata (the
  submessage) and data (the payload) kinds (:func:`rule_for`);
* permissions: the ``<grant>`` whose ``<subject_name>`` is the identity's
  certificate subject, valid now; in it the first ``<allow_rule>`` or
  ``<deny_rule>`` whose domains hold the domain id and which has a
  ``<publish>`` (``<subscribe>``) criterion naming the topic in the default
  partition decides, else its ``<default>`` (:func:`check_grant`).

A topic expression is matched against every run id of mwperf's topics at
once (:mod:`mwperf.execute.topic_match`): one that matches some run ids only
is refused (what applies would depend on the draw).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from datetime import datetime, timezone
from xml.parsers import expat

from mwperf.execute.topic_match import TOPICS, DocumentError, Topic, any_verdict, verdict

__all__ = ["DocumentError", "governance_xml", "permissions_xml", "level_of", "parse", "Topic", "TOPICS", "Rule",
           "rule_for", "verdict", "check_grant", "KINDS", "DOMAINS", "MAX_BYTES", "MAX_DEPTH"]

#: A governance or permissions document larger than this is refused (SROS2's are ~2 KiB).
MAX_BYTES = 1 << 20
#: Elements nested deeper than this are refused (the specification's documents: 8).
MAX_DEPTH = 32
#: The protection kinds of each element (data_protection_kind has no origin authentication).
_WITH_ORIGIN = ("NONE", "SIGN", "ENCRYPT", "SIGN_WITH_ORIGIN_AUTHENTICATION", "ENCRYPT_WITH_ORIGIN_AUTHENTICATION")
KINDS = {"discovery": _WITH_ORIGIN, "liveliness": _WITH_ORIGIN, "rtps": _WITH_ORIGIN, "metadata": _WITH_ORIGIN,
         "data": ("NONE", "SIGN", "ENCRYPT")}
#: The DDS domains every document of mwperf's covers (the specification's, which Cyclone DDS checks: 0 to 230).
DOMAINS = (0, 230)
LEVEL_KIND = {"auth": "NONE", "sign": "SIGN", "encrypt": "ENCRYPT"}
_DOMAIN_KINDS = ("discovery", "liveliness", "rtps")
_TOPIC_KINDS = ("metadata", "data")
_OMG = re.compile(r"^https?://www\.omg\.org/spec/DDS-SECURITY/", re.I)
_SEP = "\x1f"  # expat's separator of a namespace and a local name (in neither)


# --- mwperf's documents -------------------------------------------------------------------------

def governance_xml(level: str) -> str:
    """mwperf's domain governance for ``level`` (the OMG DDS Security 1.1 format, section 9.4.1.2)."""
    kind = LEVEL_KIND[level]
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


def level_of(kinds: dict[str, str]) -> str:
    """The level a governance's kinds amount to for the data: encrypt when the RTPS message, the submessage or
    the payload is encrypted, sign when one is signed (and none encrypted), else auth (discovery and
    liveliness protect no sample)."""
    data = [kinds.get(k, "NONE") for k in ("rtps", "metadata", "data")]
    if any(k in ("ENCRYPT", "ENCRYPT_WITH_ORIGIN_AUTHENTICATION") for k in data):
        return "encrypt"
    return "sign" if any(k in ("SIGN", "SIGN_WITH_ORIGIN_AUTHENTICATION") for k in data) else "auth"



# --- the parser ----------------------------------------------------------------------------------

def _refuse(what: str):
    def handler(*_args: object) -> None:
        raise DocumentError(f"{what}: refused (a DDS Security document needs none)")
    return handler


def parse(data: bytes) -> ET.Element:
    """The document's root element; element names are local names, a foreign namespace's ``{uri}name``.
    DocumentError naming what is wrong (not XML, a DOCTYPE, an entity, too large, too deep)."""
    if len(data) > MAX_BYTES:
        raise DocumentError(f"{len(data)} bytes, more than the {MAX_BYTES} read at most")
    builder = ET.TreeBuilder()
    depth = [0]
    parser = expat.ParserCreate(namespace_separator=_SEP)
    parser.buffer_text = True
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    parser.StartDoctypeDeclHandler = _refuse("a document type declaration (<!DOCTYPE>)")
    parser.EntityDeclHandler = _refuse("an entity declaration")
    parser.ExternalEntityRefHandler = _refuse("an external entity")

    def name(raw: str) -> str:
        uri, sep, local = raw.rpartition(_SEP)
        return local if not sep or _OMG.match(uri) else f"{{{uri}}}{local}"

    def start(raw: str, attrs: dict) -> None:
        depth[0] += 1
        if depth[0] > MAX_DEPTH:
            raise DocumentError(f"elements nested deeper than {MAX_DEPTH}")
        builder.start(name(raw), {name(k): v for k, v in attrs.items()})

    def end(raw: str) -> None:
        depth[0] -= 1
        builder.end(name(raw))

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = builder.data
    try:
        parser.Parse(data, True)
    except expat.ExpatError as exc:
        raise DocumentError(f"not XML ({expat.ErrorString(exc.code)}, line {exc.lineno})") from None
    except RecursionError:
        raise DocumentError(f"elements nested deeper than {MAX_DEPTH}") from None
    return builder.close()


def _text(element: ET.Element, where: str) -> str:
    if len(element):
        raise DocumentError(f"{where}: <{element.tag}> holds elements, not a value")
    return (element.text or "").strip()


def _one(parent: ET.Element, tag: str, where: str, *, needed: bool = True) -> ET.Element | None:
    found = parent.findall(tag)
    if len(found) > 1:
        raise DocumentError(f"{where}: {len(found)} <{tag}> (one is read)")
    if not found and needed:
        raise DocumentError(f"{where}: no <{tag}>")
    return found[0] if found else None


def _root(root: ET.Element, body: str) -> ET.Element:
    if root.tag != "dds":
        raise DocumentError(f"its root is <{root.tag}>, not <dds>")
    return _one(root, body, "<dds>")  # type: ignore[return-value]


# --- domains -------------------------------------------------------------------------------------

def _number(element: ET.Element, where: str) -> int:
    text = _text(element, where)
    if not text.isdigit() or len(text) > 9:
        raise DocumentError(f"{where}: <{element.tag}>{text[:40]}</{element.tag}> is not a domain id")
    return int(text)


def _domains(parent: ET.Element, where: str) -> tuple[str, list[tuple[int, int]]]:
    """The domain ids a rule's ``<domains>`` hold: as the document says them, and as (min, max) ranges."""
    domains = _one(parent, "domains", where)
    assert domains is not None
    spans: list[tuple[int, int]] = []
    for child in domains:
        if child.tag == "id":
            value = _number(child, where)
            spans.append((value, value))
        elif child.tag == "id_range":
            low, high = _one(child, "min", where, needed=False), _one(child, "max", where, needed=False)
            if low is None and high is None:
                raise DocumentError(f"{where}: an <id_range> with neither <min> nor <max>")
            spans.append((0 if low is None else _number(low, where),
                          1 << 32 if high is None else _number(high, where)))
    if not spans:
        raise DocumentError(f"{where}: <domains> hold no <id> and no <id_range>")
    said = ",".join(str(a) if a == b else f"{a}-" if b == 1 << 32 else f"{a}-{b}" for a, b in spans)
    return said, spans


def _holds(spans: list[tuple[int, int]], domain: int) -> bool:
    return any(low <= domain <= high for low, high in spans)


# --- governance ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Rule:
    """The governance's rules that apply to a topic of a domain, and the protection kinds they give."""

    domain: int
    domain_rule: int  # 1 = the first <domain_rule>
    domains: str  # as the rule says them: "0-230", "0,5-9"
    topic_rule: int  # 1 = the domain rule's first <topic_rule>
    topic_expression: str
    kinds: dict[str, str]  # discovery, liveliness, rtps, metadata, data

    def __str__(self) -> str:
        return (f"domain_rule {self.domain_rule} (domains {self.domains}), topic_rule {self.topic_rule} "
                f"(topic_expression {self.topic_expression!r})")

    def as_dict(self) -> dict:
        """The record's ``security.governance`` (its kinds are ``security.protection``)."""
        return {"domain": self.domain, "domain_rule": self.domain_rule, "domains": self.domains,
                "topic_rule": self.topic_rule, "topic_expression": self.topic_expression}


def _kinds(rule: ET.Element, names: tuple[str, ...], where: str) -> dict[str, str]:
    out = {}
    for kind in names:
        element = _one(rule, f"{kind}_protection_kind", where)
        assert element is not None
        value = _text(element, where)
        if value not in KINDS[kind]:
            raise DocumentError(f"{where}: {kind}_protection_kind {value[:40]!r} is not one of "
                                f"{', '.join(KINDS[kind])}")
        out[kind] = value
    return out


def rule_for(root: ET.Element, domain: int, topic: Topic) -> Rule:
    """The rule of a governance document (its root) that applies to ``topic`` in ``domain``, and the
    kinds it gives; DocumentError naming the rule when none applies or what it says cannot be read."""
    rules = _root(root, "domain_access_rules").findall("domain_rule")
    for d, rule in enumerate(rules, 1):
        where = f"domain_rule {d}"
        said, spans = _domains(rule, where)
        if not _holds(spans, domain):
            continue
        where = f"{where} (domains {said})"
        access = _one(rule, "topic_access_rules", where)
        assert access is not None
        for t, topic_rule in enumerate(access.findall("topic_rule"), 1):
            expression = _one(topic_rule, "topic_expression", f"{where}, topic_rule {t}")
            assert expression is not None
            expr = _text(expression, f"{where}, topic_rule {t}")
            found = verdict(expr, topic)
            if found == "none":
                continue
            if found == "some":
                raise DocumentError(f"{where}, topic_rule {t}: topic_expression {expr!r} matches {topic} of some "
                                    f"run ids only (mwperf draws a point's run id when it starts)")
            here = f"{where}, topic_rule {t}"
            kinds = {**_kinds(rule, _DOMAIN_KINDS, where), **_kinds(topic_rule, _TOPIC_KINDS, here)}
            return Rule(domain, d, said, t, expr, {k: kinds[k] for k in KINDS})
        raise DocumentError(f"{where}: no topic_rule matches {topic} (the middleware would refuse the topic)")
    raise DocumentError(f"no domain_rule holds domain {domain} (of {len(rules)} domain_rule)")


# --- permissions ---------------------------------------------------------------------------------

_ATTRIBUTES = {"COMMONNAME": "CN", "ORGANIZATIONNAME": "O", "ORGANIZATIONALUNITNAME": "OU", "COUNTRYNAME": "C",
               "STATEORPROVINCENAME": "ST", "LOCALITYNAME": "L", "EMAILADDRESS": "EMAILADDRESS",
               "E": "EMAILADDRESS"}


def _name_parts(dn: str) -> list[tuple[str, str]] | None:
    """An RFC 2253 distinguished name's attributes, each (type, value), sorted; None when it is not one."""
    parts, current, escaped = [], "", False
    for c in dn:
        if escaped:
            current += "\\" + c
            escaped = False
        elif c == "\\":
            escaped = True
        elif c in ",+":
            parts.append(current)
            current = ""
        else:
            current += c
    parts.append(current)
    out = []
    for part in parts:
        kind, sep, value = part.partition("=")
        if not sep:
            return None
        kind = kind.strip().upper()
        out.append((_ATTRIBUTES.get(kind, kind), value.strip()))
    return sorted(out)


def _moment(element: ET.Element, where: str) -> datetime:
    text = _text(element, where)
    try:
        stamp = datetime.fromisoformat(text)
    except ValueError:
        raise DocumentError(f"{where}: <{element.tag}>{text[:40]}</{element.tag}> is not a date and time") from None
    return stamp.replace(tzinfo=timezone.utc) if stamp.tzinfo is None else stamp


def _criterion_verdict(criterion: ET.Element, topic: Topic) -> str:
    """Whether a publish/subscribe criterion names ``topic`` in the default partition (mwperf's endpoints
    have no partition and no data tags)."""
    topics = [_text(t, criterion.tag) for t in criterion.findall("topics/topic")]
    partitions = criterion.find("partitions")
    if partitions is not None and any_verdict([_text(p, "partition") for p in partitions.findall("partition")],
                                       Topic("", run_id=False)) == "none":
        return "none"
    if criterion.find("data_tags") is not None:
        return "none"
    return any_verdict(topics, topic)


def check_grant(root: ET.Element, subject: str, domain: int, needs: list[tuple[str, Topic]],
                now: datetime | None = None) -> str:
    """The name of the grant of a permissions document (its root) for the certificate subject ``subject``,
    checked: valid ``now``, and allowing each (``publish`` or ``subscribe``, topic) of ``needs`` in
    ``domain``; DocumentError naming the grant and the rule that does not."""
    now = now or datetime.now(timezone.utc)
    want = _name_parts(subject)
    grants = [g for g in _root(root, "permissions").findall("grant")
              if (s := g.find("subject_name")) is not None and want is not None
              and _name_parts(_text(s, "grant")) == want]
    if not grants:
        raise DocumentError(f"no <grant> for subject_name {subject}")
    grant = grants[0]
    name = grant.get("name") or subject
    where = f"grant {name!r}"
    validity = _one(grant, "validity", where)
    assert validity is not None
    after, before = (_one(validity, tag, where) for tag in ("not_before", "not_after"))
    start, end = _moment(after, where), _moment(before, where)  # type: ignore[arg-type]
    if not start <= now <= end:
        raise DocumentError(f"{where} is valid from {start.isoformat()} to {end.isoformat()}, not now")
    default = _one(grant, "default", where)
    assert default is not None
    fallback = _text(default, where)
    if fallback not in ("ALLOW", "DENY"):
        raise DocumentError(f"{where}: <default>{fallback[:40]}</default> is neither ALLOW nor DENY")
    for action, topic in needs:
        decided = None
        counts = {"allow_rule": 0, "deny_rule": 0}
        for rule in grant:
            if rule.tag not in counts:
                continue
            counts[rule.tag] += 1
            here = f"{where}, {rule.tag} {counts[rule.tag]}"
            _, spans = _domains(rule, here)
            if not _holds(spans, domain):
                continue
            verdicts = {_criterion_verdict(criterion, topic) for criterion in rule.findall(action)}
            found = "all" if "all" in verdicts else "some" if "some" in verdicts else "none"
            if found == "some":
                raise DocumentError(f"{here}: its {action} topics match {topic} of some run ids only")
            if found == "all":
                decided = ("ALLOW" if rule.tag == "allow_rule" else "DENY", here)
                break
        verdict_, by = decided or (fallback, f"{where}'s <default>")
        if verdict_ != "ALLOW":
            raise DocumentError(f"{by} denies {action} of {topic} in domain {domain}")
    return name
