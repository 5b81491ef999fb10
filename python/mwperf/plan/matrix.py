"""A plan's matrices: each a mapping of ``mwperf run`` options (each a value or
a list, expanded to their product) and its ``exclude`` rules.

A plan is one matrix (its top-level keys) and, under ``also:``, a list of
more, each standing alone (nothing is inherited from the main one), e.g. the
quick plan's secured points next to its main sweep::

    mw: built
    mode: [latency, throughput]
    also:
      - mw: built          # every middleware built here that honours security
        security: encrypt
        mode: latency

``mw: built`` is every middleware the agent is built with that honours every
option of its matrix (a middleware not built here is not in it, as one that
cannot be secured is not in a secured matrix); a matrix no built middleware
can run is refused. An error in the ``also`` list names the matrix
(``also[0].security``). An ``also`` entry with ``mode: discovery`` is a
discovery matrix (:mod:`mwperf.plan.discovery_plan`: participants, not a pair).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from mwperf.errors import PlanError, UnitError
from mwperf.plan.discovery_plan import DiscoveryMatrix, discovery_options, is_discovery_matrix
from mwperf.table import snapshot
from mwperf.units import parse_list, parse_rate_hz, parse_size

__all__ = ["Matrix", "parse_matrix", "option_keys", "key_name", "normal", "excluded", "settings_of",
           "CONTROLLER_KEYS", "RULE_BOUNDS", "BUILT", "ALSO"]

#: The controller's own plan keys (each a value or a list, as the options of the table).
CONTROLLER_KEYS = ("cpu", "link", "point_timeout", "keyed", "reuse_agents")
#: ``mw: built``: every middleware the agent is built with that honours the matrix's options.
BUILT = "built"
#: The plan key of the matrices after the main one.
ALSO = "also"
#: One value even when it has a comma (``cpu: 0,1`` is one placement).
NO_COMMA_SPLIT = {"cpu", "link"}
RULE_BOUNDS = {"size_over", "size_under", "rate_over", "rate_under", "offered_gbps_over"}


@dataclass(frozen=True)
class Matrix:
    options: Mapping[str, tuple]  # key -> values (each a str, or a bool for flags)
    exclude: tuple[Mapping[str, Any], ...]
    where: str = ""  # "" for the plan's main matrix, "also[i]" for the others

    def key(self, key: str | None) -> str | None:
        """``key`` as an error names it: inside ``also[i]`` for the matrices after the main one."""
        if not self.where:
            return key
        return self.where if key is None else f"{self.where}.{key}"


def option_keys() -> tuple[str, ...]:
    """Every key a matrix may set: the table's options of ``mwperf run``, then the controller's."""
    return tuple(r.key for r in snapshot().user_rows) + CONTROLLER_KEYS


def key_name(key: str) -> str:
    return key.strip().replace("-", "_")


def _flag(key: str) -> bool:
    row = snapshot().by_key(key)
    return key == "keyed" or (row is not None and row.kind == "flag")


def _values(source: str, key: str, raw: Any) -> tuple:
    """A plan value or list as a tuple of option strings (bools for flags)."""
    items = raw if isinstance(raw, list) else [raw]
    if not items:
        raise PlanError(source, key, None, "empty list")
    flag = _flag(key_name(key.rpartition(".")[2]))
    out: list = []
    for item in items:
        if isinstance(item, bool):
            if not flag:
                raise PlanError(source, key, None, f"{str(item).lower()} is not a value of {key}")
            out.append(item)
        elif isinstance(item, (int, float, str)):
            text = str(item).strip()
            if flag:
                raise PlanError(source, key, text, "expected true or false")
            if key_name(key.rpartition(".")[2]) in NO_COMMA_SPLIT:
                out.append(text)
            else:
                try:
                    out.extend(parse_list(text))
                except UnitError as exc:
                    raise PlanError(source, key, text, str(exc)) from None
        else:
            raise PlanError(source, key, None, f"{item!r} is not a single value")
    return tuple(dict.fromkeys(out))


def normal(key: str, value: Any) -> Any:
    """A value in the form rules and points compare: machine values for the table's options."""
    row = snapshot().by_key(key)
    if isinstance(value, bool) or row is None:
        return value if isinstance(value, bool) else str(value).strip().lower()
    try:
        return row.parse(value)
    except ValueError:
        return str(value).strip().lower()


def _rule(source: str, where: str, raw: Any) -> dict:
    if not isinstance(raw, dict) or not raw:
        raise PlanError(source, where, None, "expected a mapping of conditions, e.g. {offered_gbps_over: 8}")
    rule: dict[str, Any] = {}
    for key, value in raw.items():
        name = key_name(str(key))
        if name not in RULE_BOUNDS and name not in option_keys():
            raise PlanError(source, f"{where}.{key}", None, f"unknown condition (use an option name, "
                                                            f"{', '.join(sorted(RULE_BOUNDS))})")
        try:
            if name in ("size_over", "size_under"):
                rule[name] = parse_size(str(value))
            elif name in ("rate_over", "rate_under"):
                rule[name] = parse_rate_hz(str(value))
            elif name == "offered_gbps_over":
                rule[name] = float(value)
                if rule[name] < 0:
                    raise ValueError
            else:
                rule[name] = {normal(name, v) for v in _values(source, name, value)}
        except (UnitError, ValueError, TypeError) as exc:
            detail = f": {exc}" if isinstance(exc, UnitError) else ""
            raise PlanError(source, f"{where}.{key}", str(value), f"not a valid bound{detail}") from None
    return rule


def parse_matrix(source: str, data: Mapping, where: str = "", plan_keys: tuple[str, ...] = ()) -> Matrix:
    """One matrix's options and exclude rules (``where``: ``""`` for the plan's main matrix, else
    ``also[i]``); ``plan_keys``: the plan's own keys, refused inside ``also`` (they are set once, at the top)."""
    at = Matrix({}, (), where).key
    options: dict[str, tuple] = {}
    exclude: list[dict] = []
    spelled: dict[str, str] = {}
    keys = option_keys()
    for raw_key, value in data.items():
        key = key_name(str(raw_key))
        if key in spelled:  # match-timeout and match_timeout are one key
            raise PlanError(source, at(str(raw_key)), None, f"the same key as {spelled[key]}: keep one")
        spelled[key] = str(raw_key)
        if key == "exclude":
            rules = value if isinstance(value, list) else [value]
            exclude = [_rule(source, at(f"exclude[{i}]") or "", r) for i, r in enumerate(rules)]
        elif key in keys:
            if value is None:
                raise PlanError(source, at(str(raw_key)), None, "no value")
            options[key] = _values(source, at(str(raw_key)) or "", value)
        elif where and key in plan_keys:
            raise PlanError(source, at(str(raw_key)), None, "a key of the whole plan: set it once, at its top")
        else:
            known = keys + ("exclude",) + (() if where else plan_keys)
            raise PlanError(source, at(str(raw_key)), None, f"unknown key (known: {', '.join(known)})")
    if "mw" not in options:
        raise PlanError(source, at("mw"), None, "missing (the middlewares to sweep, e.g. mw: [cyclonedds, fastdds])")
    for index, rule in enumerate(exclude):
        for cond, wanted in rule.items():
            if cond in RULE_BOUNDS:
                continue
            planned = {normal(cond, v) for v in options.get(cond, ())}
            unknown = sorted(map(str, wanted - planned)) if cond in options else []
            if cond not in options or unknown:
                have = ", ".join(map(str, options.get(cond, ()))) or "not set in this plan"
                raise PlanError(source, at(f"exclude[{index}].{cond}"), ", ".join(unknown) or "this key",
                                f"not among the plan's values ({have})")
    return Matrix(options, tuple(exclude), where)


def parse_also(source: str, raw: Any, plan_keys: tuple[str, ...]) -> tuple[tuple[Matrix, ...],
                                                                           tuple[DiscoveryMatrix, ...]]:
    """The ``also`` list: matrices after the main one, each a mapping of its own; the discovery ones apart."""
    if not isinstance(raw, list) or not raw:
        raise PlanError(source, ALSO, None, "expected a list of matrices (each a mapping of options, e.g. "
                                            "- {mw: built, security: encrypt})")
    out, discovery = [], []
    for index, item in enumerate(raw):
        where = f"{ALSO}[{index}]"
        if not isinstance(item, dict) or not item:
            raise PlanError(source, where, None, "expected a mapping of options (mw: ..., size: ...)")
        if is_discovery_matrix(item):
            discovery.append(DiscoveryMatrix(discovery_options(source, item, where), where))
        else:
            out.append(parse_matrix(source, item, where, plan_keys))
    return tuple(out), tuple(discovery)


def settings_of(point, own: Mapping[str, Any]) -> dict[str, Any]:
    """A point as exclude rules see it: plan key -> machine value (the controller's as written)."""
    settings = {"mw": point.mw, "mode": point.mode, **own}
    settings.update((name.replace("-", "_"), value) for name, value in point.values if value is not None)
    return settings


def excluded(rules: tuple[Mapping[str, Any], ...], settings: Mapping[str, Any]) -> bool:
    size, rate = settings.get("size"), settings.get("rate")
    for rule in rules:
        hit = True
        for cond, want in rule.items():
            if cond == "size_over":
                hit = size is not None and size > want
            elif cond == "size_under":
                hit = size is not None and size < want
            elif cond == "rate_over":
                hit = rate is not None and rate > want
            elif cond == "rate_under":
                hit = rate is not None and rate < want
            elif cond == "offered_gbps_over":
                hit = rate is not None and size is not None and size * 8 * rate / 1e9 > want
            else:
                hit = cond in settings and normal(cond, settings[cond]) in want if cond in CONTROLLER_KEYS \
                    else (settings[cond] if cond in settings else normal(cond, "default")) in want
                # (a point at its default has no value of its own: a rule naming `default` is about it)
            if not hit:
                break
        if hit:
            return True
    return False
