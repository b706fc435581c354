"""The import graph: no cycles anywhere, and the layers point one way.

A cycle (the table's resolver once imported the table that imported it) means two modules
can only be read, tested and changed together.  The layering is the design's
(``cli → p2p → (engine, crypto)``; engine and crypto import nothing above them nor each
other; bench may use anything below cli).  Both are read from the source with :mod:`ast`,
so nothing is imported to check them.  Imports under ``if TYPE_CHECKING:`` are for type
hints only: they do not count for the layers, but they may not close a cycle either.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("engine", "crypto", "p2p", "cli", "bench")
MAY_IMPORT = {
    "engine": {"engine"},
    "crypto": {"crypto"},
    "p2p": {"p2p", "engine", "crypto"},
    "cli": {"cli", "p2p", "engine", "crypto", "bench"},
    "bench": {"bench", "p2p", "engine", "crypto"},
}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _runtime_imports(tree: ast.AST, module: str, is_package: bool,
                     hints: bool = False) -> list[str]:
    """Absolute names of every module imported at run time (relative imports resolved);
    with ``hints``, also those imported for type hints only."""
    out: list[str] = []
    package = module if is_package else module.rpartition(".")[0]

    def visit(node: ast.AST) -> None:
        if not hints and isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            out.extend(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                prefix = ".".join(base)
                target = f"{prefix}.{node.module}" if node.module else prefix
            else:
                target = node.module or ""
            out.append(target)
            # "from pkg import mod" imports the submodule pkg.mod when there is one
            out.extend(f"{target}.{a.name}" for a in node.names)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return out


def _graph(hints: bool = False) -> dict[str, list[str]]:
    files = [p for pkg in PACKAGES for p in sorted((ROOT / pkg).rglob("*.py"))]
    modules = {_module_name(p): p for p in files}
    graph: dict[str, list[str]] = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        deps = _runtime_imports(tree, name, path.name == "__init__.py", hints)
        graph[name] = sorted({d for d in deps if d in modules and d != name})
    return graph


def _cycles(graph: dict[str, list[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            node, i = work.pop()
            if i == 0:
                index[node] = low[node] = counter
                counter += 1
                stack.append(node)
                on_stack.add(node)
            deps = graph[node]
            if i < len(deps):
                work.append((node, i + 1))
                nxt = deps[i]
                if nxt not in index:
                    work.append((nxt, 0))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            if low[node] == index[node]:
                comp = []
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    comp.append(top)
                    if top == node:
                        break
                if len(comp) > 1:
                    found.append(sorted(comp))
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    return found


def test_no_import_cycles() -> None:
    assert _cycles(_graph()) == []


def test_no_cycles_even_through_type_hints() -> None:
    """A module imported only for a type hint is still read together with its importer: no
    cycle there either (an interface the lower module needs is declared in it, as an
    abstract method or a protocol, instead)."""
    assert _cycles(_graph(hints=True)) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    """The check above can fail: a made-up graph with a cycle is reported."""
    assert _cycles({"a": ["b"], "b": ["c"], "c": ["a"], "d": ["a"]}) == [["a", "b", "c"]]


def test_layers_point_one_way() -> None:
    wrong = [f"{mod} imports {dep}" for mod, deps in _graph().items() for dep in deps
             if dep.split(".")[0] not in MAY_IMPORT[mod.split(".")[0]]]
    assert wrong == []


def test_type_checking_imports_do_not_count() -> None:
    tree = ast.parse("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                     "    from p2p.table import Table\nimport p2p.store\n")
    assert _runtime_imports(tree, "cli.x", False) == ["typing", "typing.TYPE_CHECKING",
                                                      "p2p.store"]
