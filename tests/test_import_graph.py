"""The import graph of mipdp has no cycles (imports inside functions count too).

Every ``import`` / ``from ... import`` statement of every module of ``mipdp`` (and of the
backends in ``solvers/``, imported as ``mipdp.solvers``) is an edge, wherever it stands;
an edge to a package means its ``__init__``.  A strongly connected component with more
than one module is a cycle.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCES = {"mipdp": ROOT / "mipdp", "mipdp.solvers": ROOT / "solvers"}


def _modules() -> dict[str, Path]:
    mods = {}
    for prefix, base in SOURCES.items():
        for path in base.rglob("*.py"):
            rel = path.relative_to(base).with_suffix("").parts
            if rel[0] == "solvers" and prefix == "mipdp":     # the symlink to ../solvers
                continue
            if rel[-1] == "__init__":
                rel = rel[:-1]
            mods[".".join((prefix,) + rel)] = path
    return mods


def _targets(module: str, node, is_pkg: bool, mods) -> list[str]:
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if node.level:
        parts = module.split(".")
        if not is_pkg:
            parts = parts[:-1]
        parts = parts[:len(parts) - node.level + 1]
        base = ".".join(parts + ([node.module] if node.module else []))
    else:
        base = node.module
    subs = [f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in mods]
    return subs + ([base] if len(subs) < len(node.names) else [])


def import_graph() -> dict[str, set[str]]:
    """``{module: modules it imports}`` within mipdp."""
    mods = _modules()
    graph = {m: set() for m in mods}
    for m, path in mods.items():
        is_pkg = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for t in _targets(m, node, is_pkg, mods):
                    while t and t not in mods:
                        t = t.rpartition(".")[0]
                    if t and t != m:
                        graph[m].add(t)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10000))

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_the_checker_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_the_graph_covers_the_package():
    graph = import_graph()
    assert "mipdp.selection" in graph and "mipdp.solvers.highs" in graph
    assert "mipdp.accounting" in graph["mipdp.selection"]


def test_mipdp_has_no_import_cycle():
    assert cycles(import_graph()) == []
