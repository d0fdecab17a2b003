"""catui's modules import each other without cycles, and its folders keep the documented layer order.

The graph is read from the source with :mod:`ast`, not from ``sys.modules``,
so an import hidden inside a function counts like one at the top of a module:
a cycle only "broken" by moving an import into a function still fails here.
Imports under ``if TYPE_CHECKING:`` count too: they never run, but a type the
checker needs from a higher layer is a dependency all the same, and a cycle
through it is one a reader has to hold in mind.

``from catui.x import y`` is an edge to the submodule ``catui.x.y`` when that
module exists, else to ``catui.x`` (the name is an attribute of it).
Relative imports are resolved against the importing module's package. The
parent packages Python runs on the way to a module (``catui.x/__init__.py``
for ``catui.x.y``) are not edges: the import system handles a package that is
still initialising, and counting them would make every re-exporting
``__init__.py`` look like a cycle with its own submodules.
"""

from __future__ import annotations

import ast
import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

SOURCE_ROOT = Path(__file__).resolve().parent.parent / "src"
PACKAGE_ROOT = SOURCE_ROOT / "catui"
# Sample code the demo copies into a temporary repository; data, not part of catui.
NOT_CATUI_CODE = ("catui.demo_project",)

# docs/architecture.md, "Dependency order": each folder (or top-level module)
# may import only from its own layer or lower ones.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("catui", "catui.errors", "catui.paths", "catui.messages", "catui.lazy"),
    ("catui.config",),
    ("catui.permissions",),
    ("catui.agents",),
    ("catui.state",),
    ("catui.tasks", "catui.worktree", "catui.bgsessions"),
    ("catui.sandbox",),
    ("catui.models",),
    ("catui.safety",),
    ("catui.telemetry",),
    ("catui.tools",),
    ("catui.hooks", "catui.mcp", "catui.skills", "catui.commands", "catui.styles"),
    ("catui.session",),
    ("catui.subagents",),
    # commands.prompt runs a typed command against an app and yields its session events: app-level glue.
    ("catui.app", "catui.commands.prompt", "catui.workflows"),
    ("catui.cli", "catui.sdk", "catui.bgsessions.worker", "catui.bgsessions.side_requests", "catui.__main__"),
)


@dataclass(frozen=True)
class ImportEdge:
    """One import of a catui module by another, with where it is written."""

    importer: str
    imported: str
    line: int


def module_name(path: Path) -> str:
    """``src/catui/x/y.py`` → ``catui.x.y``; a package's ``__init__.py`` → the package."""
    parts = list(path.relative_to(SOURCE_ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def catui_modules() -> dict[str, Path]:
    """Every catui module (name → file), the demo's sample code left out."""
    modules = {}
    for path in sorted(PACKAGE_ROOT.rglob("*.py")):
        name = module_name(path)
        if not name.startswith(NOT_CATUI_CODE):
            modules[name] = path
    return modules


def import_nodes(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """All import statements, at any depth, ``if TYPE_CHECKING:`` bodies included."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node


def absolute_base(importer: str, is_package: bool, node: ast.ImportFrom) -> str:
    """The module a ``from … import`` statement names, relative levels resolved."""
    if node.level == 0:
        return node.module or ""
    package_parts = importer.split(".") if is_package else importer.split(".")[:-1]
    if node.level > 1:
        package_parts = package_parts[: len(package_parts) - (node.level - 1)]
    return ".".join([*package_parts, node.module] if node.module else package_parts)


def imported_modules(
    importer: str, path: Path, known: dict[str, Path]
) -> Iterator[tuple[str, int]]:
    """The catui modules one module imports (for the checker too), with the line of each import."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    is_package = path.name == "__init__.py"
    for node in import_nodes(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in known:
                    yield alias.name, node.lineno
            continue
        base = absolute_base(importer, is_package, node)
        if base != "catui" and not base.startswith("catui."):
            continue
        for alias in node.names:
            submodule = f"{base}.{alias.name}"
            if submodule in known:
                yield submodule, node.lineno
            elif base in known:
                yield base, node.lineno


def import_edges() -> list[ImportEdge]:
    """Every import of a catui module by a catui module (self-imports left out)."""
    known = catui_modules()
    edges = []
    for importer, path in known.items():
        for imported, line in imported_modules(importer, path, known):
            if imported != importer:
                edges.append(ImportEdge(importer, imported, line))
    return edges


def strongly_connected_groups(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm (iterative): the groups of modules that reach each other, larger than one."""
    index_of: dict[str, int] = {}
    low_link: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    groups: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index_of:
            continue
        work: list[tuple[str, Iterator[str]]] = [(root, iter(sorted(graph[root])))]
        index_of[root] = low_link[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, successors = work[-1]
            advanced = False
            for successor in successors:
                if successor not in index_of:
                    index_of[successor] = low_link[successor] = counter
                    counter += 1
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(sorted(graph.get(successor, ())))))
                    advanced = True
                    break
                if successor in on_stack:
                    low_link[node] = min(low_link[node], index_of[successor])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low_link[parent] = min(low_link[parent], low_link[node])
            if low_link[node] == index_of[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    groups.append(sorted(group))
    return groups


def cycle_through(start: str, graph: dict[str, set[str]], group: set[str]) -> list[str]:
    """A shortest import path from ``start`` back to itself inside one strongly connected group."""
    came_from: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for successor in sorted(graph.get(node, ())):
                if successor not in group:
                    continue
                if successor == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(came_from[path[-1]])
                    return [start, *reversed(path[:-1]), start]
                if successor not in came_from:
                    came_from[successor] = node
                    following.append(successor)
        frontier = following
    raise AssertionError(f"{start} is in a cycle group but no cycle was found through it")


def describe_cycle(cycle: list[str], edges: list[ImportEdge]) -> str:
    """``catui.a (line 12) → catui.b (line 40) → catui.a``: each module with the line of its import of the next."""
    line_of = {}
    for edge in edges:
        line_of.setdefault((edge.importer, edge.imported), edge.line)
    steps = [f"{importer} (line {line_of[(importer, imported)]})" for importer, imported in itertools.pairwise(cycle)]
    return " → ".join([*steps, cycle[-1]])


def layer_of(module: str) -> int:
    """The index in LAYERS of the folder or top-level module a module belongs to."""
    best_index, best_length = -1, -1
    for index, members in enumerate(LAYERS):
        for member in members:
            if (module == member or module.startswith(member + ".")) and len(member) > best_length:
                best_index, best_length = index, len(member)
    if best_index < 0:
        raise AssertionError(f"{module} belongs to no layer of docs/architecture.md; add its folder to LAYERS")
    return best_index


def test_the_graph_holds_catuis_real_imports() -> None:
    edges = {(edge.importer, edge.imported) for edge in import_edges()}
    assert ("catui.__main__", "catui.cli.entry") in edges  # at the top of __main__.py
    assert ("catui.cli.entry", "catui.cli.main") in edges  # inside entry's main(), after the quick commands
    assert ("catui.cli.main", "catui.cli.run") in edges  # inside cli.main's root(), on purpose
    assert len(edges) > 300


def test_cycle_finding_on_a_small_graph() -> None:
    graph = {"a": {"b"}, "b": {"c", "d"}, "c": {"a"}, "d": set(), "e": {"a", "f"}, "f": {"e"}}
    assert sorted(strongly_connected_groups(graph)) == [["a", "b", "c"], ["e", "f"]]
    assert cycle_through("a", graph, {"a", "b", "c"}) == ["a", "b", "c", "a"]
    edges = [ImportEdge("a", "b", 3), ImportEdge("b", "c", 7), ImportEdge("c", "a", 9)]
    assert describe_cycle(["a", "b", "c", "a"], edges) == "a (line 3) → b (line 7) → c (line 9) → a"


def test_relative_and_from_package_imports_resolve_to_submodules(tmp_path: Path) -> None:
    source = (
        "from typing import TYPE_CHECKING\n"
        "from . import sibling\n"
        "from .. import errors\n"
        "from catui.pkg import other, NAME\n"
        "if TYPE_CHECKING:\n"
        "    from catui import hidden\n"
        "else:\n"
        "    import catui.shown\n"
        "def later():\n"
        "    from .sibling import thing\n"
    )
    module_file = tmp_path / "mod.py"
    module_file.write_text(source, encoding="utf-8")
    known = {name: tmp_path for name in ("catui", "catui.errors", "catui.pkg", "catui.pkg.sibling",
                                          "catui.pkg.other", "catui.hidden", "catui.shown")}
    found = sorted({name for name, _ in imported_modules("catui.pkg.mod", module_file, known)})
    assert found == ["catui.errors", "catui.hidden", "catui.pkg", "catui.pkg.other", "catui.pkg.sibling",
                     "catui.shown"]


def test_no_import_cycles_between_modules() -> None:
    edges = import_edges()
    graph: dict[str, set[str]] = {}
    for edge in edges:
        graph.setdefault(edge.importer, set()).add(edge.imported)
    groups = strongly_connected_groups(graph)
    reports = []
    for group in groups:
        cycle = cycle_through(group[0], graph, set(group))
        reports.append(f"  {len(group)} modules ({', '.join(group)}); e.g. {describe_cycle(cycle, edges)}")
    assert not groups, "import cycles between catui modules:\n" + "\n".join(reports)


def test_lower_layers_never_import_higher_ones() -> None:
    upward = sorted(
        f"  {edge.importer} (line {edge.line}) imports {edge.imported}"
        for edge in import_edges()
        if layer_of(edge.imported) > layer_of(edge.importer)
    )
    assert not upward, (
        "imports against the dependency order of docs/architecture.md "
        "(a lower layer importing a higher one):\n" + "\n".join(upward)
    )


FRONT_ENDS = ("catui.sdk", "catui.cli")


def front_end_of(module: str) -> str | None:
    return next((end for end in FRONT_ENDS if module == end or module.startswith(end + ".")), None)


def test_the_two_front_ends_never_import_each_other() -> None:
    crossing = sorted(
        f"  {edge.importer} (line {edge.line}) imports {edge.imported}"
        for edge in import_edges()
        if front_end_of(edge.importer) and front_end_of(edge.imported)
        and front_end_of(edge.importer) != front_end_of(edge.imported)
    )
    assert not crossing, "catui.sdk and catui.cli are two front ends over catui.app:\n" + "\n".join(crossing)


def test_type_checking_imports_count_as_edges() -> None:
    edges = {(edge.importer, edge.imported) for edge in import_edges()}
    # sdk/client.py imports the @tool names for the checker only (they load pydantic); an edge all the same.
    assert ("catui.sdk.client", "catui.sdk.tools") in edges
