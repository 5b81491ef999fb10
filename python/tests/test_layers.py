"""The house rules a reader can check without running anything: the
controller's packages point one way (a package imports only from the floors
below its own, never from a sibling or a floor above, counting the imports
inside functions), no import cycle among its modules, and no source file
over 450 lines."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "python" / "mwperf"
MAX_LINES = 450

#: The controller's floors, top first. A module may import its own package
#: (or module) and any floor below its own; a floor above, or a sibling of its
#: own floor, is a back-edge. Every package and top-level module is placed:
#: a new one says where it stands (docs/development/controller.md).
LAYERS: tuple[tuple[str, ...], ...] = (
    ("mwperf", "mwperf.__main__"),                            # the package's face: mwperf.load, python -m mwperf
    ("mwperf.cli", "mwperf.loader"),                          # the commands; mwperf.load
    ("mwperf.lab",),                                          # a lab of hosts: Ansible's inventory and playbook
    ("mwperf.hosts",),                                        # far hosts: asked what they are, given their bundle
    ("mwperf.execute", "mwperf.store", "mwperf.imports", "mwperf.bundle"),  # measuring; the store; other tools'
                                                              # output; the agent bundled for a far host
    ("mwperf.export",),                                       # every output format
    ("mwperf.analysis",),                                     # runs compared, history, budgets
    ("mwperf.results",),                                      # the run directory: its files, read and written
    ("mwperf.model",),                                        # the record: its type, schema, loader, views
    ("mwperf.plan",),                                         # what to measure
    ("mwperf.description",),                                  # the agent's description of itself
    ("mwperf.table",),                                        # the agent's option table
    ("mwperf.units", "mwperf.display", "mwperf.interrupts", "mwperf.extras"),  # units; text; signals; extras
    ("mwperf.errors", "mwperf.version"),
)

#: Edges the floors allow that the house does not: the run loop measures and is
#: given its outputs (cli makes them), it never picks an output format itself.
FORBIDDEN = {("mwperf.execute", "mwperf.export")}


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def import_graph() -> dict[str, set[str]]:
    """Module -> the package's modules it imports, anywhere in it."""
    modules = _modules()
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                graph[name] |= {a.name for a in node.names if a.name in modules}
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[:len(package.split(".")) - node.level + 1]
                    base = ".".join(up + ([base] if base else []))
                graph[name] |= {m for m in [base, *(f"{base}.{a.name}" for a in node.names)] if m in modules}
        graph[name].discard(name)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def unit_of(module: str, layers=LAYERS) -> tuple[str, int] | None:
    """(the package or top-level module ``module`` belongs to, its floor); None when it is not placed."""
    best: tuple[str, int] | None = None
    for floor, units in enumerate(layers):
        for unit in units:
            inside = module == unit or (unit != "mwperf" and module.startswith(unit + "."))
            if inside and (best is None or len(unit) > len(best[0])):
                best = (unit, floor)
    return best


def back_edges(graph: dict[str, set[str]], layers=LAYERS, forbidden=FORBIDDEN) -> list[str]:
    """Every import of a module from a sibling package of its floor, a floor
    above its own, or along a forbidden edge: ``a -> b (floor i -> floor j)``."""
    out = []
    for a in sorted(graph):
        for b in sorted(graph[a]):
            ua, ub = unit_of(a, layers), unit_of(b, layers)
            if ua is None or ub is None or ua[0] == ub[0]:
                continue
            if ub[1] <= ua[1] or (ua[0], ub[0]) in forbidden:
                out.append(f"{a} -> {b} ({ua[0]} on floor {ua[1]} -> {ub[0]} on floor {ub[1]})")
    return out


def test_the_check_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_the_check_finds_a_back_edge():
    layers = (("p.top",), ("p.mid", "p.side"), ("p.low",))
    graph = {"p.top.x": {"p.mid.y", "p.low.z"}, "p.mid.y": {"p.low.z", "p.side.w"}, "p.low.z": {"p.mid.y"},
             "p.side.w": {"p.low.z"}}
    assert back_edges(graph, layers, set()) == [
        "p.low.z -> p.mid.y (p.low on floor 2 -> p.mid on floor 1)",
        "p.mid.y -> p.side.w (p.mid on floor 1 -> p.side on floor 1)"]
    assert back_edges({"p.top.x": {"p.low.z"}, "p.low.z": set()}, layers, {("p.top", "p.low")}) == [
        "p.top.x -> p.low.z (p.top on floor 0 -> p.low on floor 2)"]


def test_every_package_and_module_has_a_floor():
    assert sorted(m for m in _modules() if unit_of(m) is None) == []


def test_packages_point_one_way():
    assert back_edges(import_graph()) == []


def test_no_import_cycle_not_even_behind_a_local_import():
    assert cycles(import_graph()) == []


def test_no_source_file_over_450_lines():
    sources = [p for p in (ROOT / "python").rglob("*.py") if ".venv" not in p.parts]
    sources += [p for ext in ("cpp", "h", "rs") for p in (ROOT / "agent").rglob(f"*.{ext}") if "build" not in p.parts]
    long = {str(p.relative_to(ROOT)): n for p in sources
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert long == {}
