"""The import graph: no cycles anywhere, and the layers point one way.

A cycle (the table's resolver once imported the table that imported it) means two modules
can only be read, tested and changed together.  The layering is the design's
(``cli → p2p → (engine, crypto)``; engine and crypto import nothing above them nor each
other; bench may use anything below cli).  Both are read from the source with :mod:`ast`,
so nothing is imported to check them.  Imports under ``if TYPE_CHECKING:`` are for type
hints only: they do not count for the layers, but they may not close a cycle either.

Inside p2p and cli the folders are layers too (docs/architecture.md draws them), checked
the same way, and the CLI reaches p2p only through :mod:`p2p.front_door`.
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
                     "    from p2p.table import LockstepTable\nimport p2p.store\n")
    assert _runtime_imports(tree, "cli.x", False) == ["typing", "typing.TYPE_CHECKING",
                                                      "p2p.store"]


# --- the folders inside p2p and cli ---------------------------------------------------------
def _part(module: str) -> str:
    """The part of p2p or cli a module belongs to: its subpackage, or, for a module at the
    top of the package, the group it is in (``p2p.game`` and ``p2p.store`` stand alone)."""
    parts = module.split(".")
    if len(parts) > 2 or (len(parts) == 2 and parts[1] in SUBPACKAGES.get(parts[0], ())):
        return ".".join(parts[:2])
    return TOP_GROUPS.get(module, f"{parts[0]} (entry points)")


SUBPACKAGES = {
    "p2p": ("net", "lobby", "protocol", "judge", "table", "watch"),
    "cli": ("commands", "table", "replay"),
}
TOP_GROUPS = {
    "p2p": "p2p (leaves)", "p2p.errors": "p2p (leaves)", "p2p.sanitize": "p2p (leaves)",
    "p2p.identity": "p2p (leaves)", "p2p.data": "p2p (leaves)", "p2p.heap": "p2p (leaves)",
    "p2p.game": "p2p.game", "p2p.store": "p2p.store",
    "cli": "cli (shared)", "cli.theme": "cli (shared)", "cli.screen": "cli (shared)",
    "cli.verdict": "cli (shared)", "cli.bots": "cli (shared)", "cli.lobby_app": "cli (shared)",
    "cli.main": "cli.main",
}
PART_MAY_IMPORT = {
    # shared leaves: errors, the display-text sanitizer, a peer's keys, the frozen heap
    "p2p (leaves)": set(),
    # transport knows no game, lobby, table or judge: it can be read as plain networking
    "p2p.net": {"p2p (leaves)"},
    # what signed envelopes say is pure: live play and the audit read one definition
    "p2p.protocol": {"p2p (leaves)"},
    # a game's params and words are agreed over the handshake (its version, the roster)
    "p2p.game": {"p2p (leaves)", "p2p.net"},
    "p2p.store": {"p2p (leaves)", "p2p.net", "p2p.game"},
    # getting to a table hands a roster on; it never reaches into the table or the judge
    "p2p.lobby": {"p2p (leaves)", "p2p.net", "p2p.game", "p2p.store"},
    # the audit needs nothing a running table has: the judge never imports the table
    "p2p.judge": {"p2p (leaves)", "p2p.net", "p2p.game", "p2p.store", "p2p.protocol"},
    # the live table judges a notice with the judge's own code
    "p2p.table": {"p2p (leaves)", "p2p.net", "p2p.game", "p2p.store", "p2p.protocol",
                  "p2p.judge"},
    # a watcher judges with the judge's code; the host's hub taps the live table
    "p2p.watch": {"p2p (leaves)", "p2p.net", "p2p.game", "p2p.store", "p2p.protocol",
                  "p2p.judge", "p2p.table"},
    "p2p (entry points)": {"p2p (leaves)", "p2p.net", "p2p.game", "p2p.store", "p2p.protocol",
                           "p2p.judge", "p2p.table", "p2p.lobby", "p2p.watch",
                           "p2p (entry points)"},
    # theme, screen, verdict words, bot kinds and the lobby screen serve every screen
    "cli (shared)": {"cli (shared)"},
    "cli.table": {"cli (shared)"},
    # the replay viewer is drawn with the table screen's parts
    "cli.replay": {"cli (shared)", "cli.table"},
    "cli.commands": {"cli (shared)", "cli.table", "cli.replay"},
    "cli.main": {"cli.commands"},
}


def _parts_graph(hints: bool) -> dict[str, list[str]]:
    graph: dict[str, set[str]] = {}
    for mod, deps in _graph(hints).items():
        if mod.split(".")[0] not in SUBPACKAGES:
            continue
        edges = graph.setdefault(_part(mod), set())
        edges.update(_part(d) for d in deps
                     if d.split(".")[0] == mod.split(".")[0] and _part(d) != _part(mod))
    return {part: sorted(deps) for part, deps in graph.items()}


def test_every_module_is_in_a_known_part() -> None:
    """A new folder or top-level module is placed in a layer on purpose, not by default."""
    parts = {_part(m) for m in _graph() if m.split(".")[0] in SUBPACKAGES}
    assert parts <= set(PART_MAY_IMPORT)


def _wrong_parts(graph: dict[str, list[str]]) -> list[str]:
    return [f"{mod} imports {dep}" for mod, deps in graph.items()
            if mod.split(".")[0] in SUBPACKAGES for dep in deps
            if dep.split(".")[0] == mod.split(".")[0] and _part(dep) != _part(mod)
            and _part(dep) not in PART_MAY_IMPORT[_part(mod)]]


def _around_the_door(graph: dict[str, list[str]]) -> list[str]:
    return [f"{mod} imports {dep}" for mod, deps in graph.items()
            if mod.split(".")[0] == "cli" for dep in deps
            if (dep.split(".")[0] == "p2p" and dep != "p2p.front_door")
            or dep.split(".")[0] == "crypto"]


def test_parts_of_p2p_and_cli_point_one_way() -> None:
    """Each folder imports only the parts below it (TYPE_CHECKING imports included: a type
    from a higher layer would be a dependency all the same)."""
    assert _wrong_parts(_graph(hints=True)) == []


def test_no_cycles_between_parts() -> None:
    """Folded into their folders, the modules still form no cycle, type hints included;
    nor do the allowed arrows themselves."""
    assert _cycles(_parts_graph(hints=True)) == []
    assert _cycles({p: sorted(d - {p}) for p, d in PART_MAY_IMPORT.items()}) == []


def test_cli_reaches_p2p_only_through_its_front_door() -> None:
    """Every import of p2p in cli is of :mod:`p2p.front_door`, and cli imports nothing
    from crypto: the screens and commands depend on one module's ``__all__``, so the
    inside of p2p (its folders, its module names) can change without touching the CLI,
    and a reader sees at once what the CLI uses."""
    assert _around_the_door(_graph(hints=True)) == []


def _table_reaches_the_engine(graph: dict[str, list[str]]) -> list[str]:
    return [f"{m} imports {d}" for m, deps in sorted(graph.items())
            if m == "p2p.table" or m.startswith("p2p.table.")
            for d in deps if d.split(".")[0] == "engine"]


def test_the_table_knows_its_game_only_through_the_game_interface() -> None:
    """``p2p/table/`` imports nothing from ``engine`` (type hints included): it asks the
    game (:mod:`p2p.protocol.table_game`) for rules, zones and the resolution script, so
    another game would not change the table."""
    assert _table_reaches_the_engine(_graph(hints=True)) == []
    assert _table_reaches_the_engine({"p2p.table.loop": ["engine.rules", "p2p.store"],
                                      "p2p.judge.engine_replay": ["engine.rules"]}) == \
        ["p2p.table.loop imports engine.rules"]


def test_the_part_checks_can_fail() -> None:
    """The checks above are not vacuous: made-up imports that break them are reported."""
    graph = {"p2p.judge.game_audit": ["p2p.table.loop"],
             "p2p.net.mesh": ["p2p.lobby.seating", "p2p.errors"],
             "p2p.table.loop": ["p2p.judge.evidence", "p2p.protocol.wire"],
             "cli.table.app": ["cli.commands.host"],
             "cli.commands.host": ["p2p.front_door", "p2p.game", "crypto.parallel"]}
    assert _wrong_parts(graph) == ["p2p.judge.game_audit imports p2p.table.loop",
                                   "p2p.net.mesh imports p2p.lobby.seating",
                                   "cli.table.app imports cli.commands.host"]
    assert _around_the_door(graph) == ["cli.commands.host imports p2p.game",
                                       "cli.commands.host imports crypto.parallel"]
    assert _part("p2p.front_door") == "p2p (entry points)"
