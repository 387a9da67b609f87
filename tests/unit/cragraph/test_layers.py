"""The import graph of the project's packages, imports inside functions included: layers import only what lies
below them, no module imports itself back through others, and no node imports another node. The lab
(cragraph_lab/, not in the wheel) is the top layer: it imports the product, and nothing shipped imports it."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
TOP_LEVEL = ("graph", "nodes", "evaluators", "prompts", "stores", "cragraph", "cragraph_lab")

# Top to bottom; a module belongs to the first layer one of whose prefixes names it or a package above it.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("cragraph_lab",),
    ("cragraph.__main__",),
    ("cragraph.cli",),
    ("cragraph.auth",),
    ("cragraph.evaluation",),
    ("graph",),
    ("nodes",),
    ("cragraph.policy",),
    ("cragraph.inputs",),
    ("cragraph.context", "cragraph.state"),
    ("cragraph.config",),
    ("cragraph.answering",),
    ("cragraph.knowledge",),
    ("cragraph.reader",),
    ("cragraph.retrieval",),
    ("cragraph.planning",),
    ("evaluators",),
    ("stores",),
    ("cragraph.models", "cragraph.settings", "prompts"),
)
NAMESPACE_ONLY = {"cragraph"}  # the namespace package itself: holds nothing, imports nothing


def module_name(path: Path, root: Path = ROOT) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def import_graph(root: Path = ROOT) -> dict[str, set[str]]:
    """module -> project modules it imports (`from a.b import c` counts as a.b.c when that is a module)."""
    files = {module_name(p, root): p for top in TOP_LEVEL for p in (root / top).rglob("*.py")}
    edges: dict[str, set[str]] = {}
    for name, path in files.items():
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets |= {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                targets |= {f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in files else node.module
                            for a in node.names}
        edges[name] = {t for t in targets if t.split(".")[0] in TOP_LEVEL and t in files}
    return edges


def layer_of(module: str) -> int:
    for index, prefixes in enumerate(LAYERS):
        if any(module == p or module.startswith(p + ".") for p in prefixes):
            return index
    raise AssertionError(f"{module} belongs to no layer: add it to LAYERS")


def package_of(module: str) -> str:
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[0] == "cragraph" else parts[0]


def upward_imports(edges: dict[str, set[str]]) -> list[str]:
    upward = []
    for module, targets in edges.items():
        if module in NAMESPACE_ONLY:
            assert not targets, f"the cragraph namespace package imports {targets}"
            continue
        for target in targets:
            if target in NAMESPACE_ONLY:
                continue
            mine, theirs = layer_of(module), layer_of(target)
            same_package = package_of(module) == package_of(target)
            if theirs < mine or (theirs == mine and not same_package):
                upward.append(f"{module} -> {target}")
    return sorted(upward)


def test_every_module_belongs_to_a_layer_and_imports_only_downward():
    upward = upward_imports(import_graph())
    assert not upward, "imports that do not go down a layer:\n" + "\n".join(upward)


def test_no_import_cycle_between_modules():
    edges = import_graph()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(node: str) -> None:  # Tarjan's strongly connected components
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in edges.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1 or node in edges.get(node, ()):
                cycles.append(sorted(component))

    for module in sorted(edges):
        if module not in index:
            visit(module)
    assert not cycles, "import cycles:\n" + "\n".join(" <-> ".join(c) for c in cycles)


def test_no_node_imports_another_node():
    shared = "nodes._runtime"
    offending = [f"{module} -> {target}" for module, targets in import_graph().items()
                 if module.startswith("nodes.") and module != shared
                 for target in targets if target.startswith("nodes.") and target != shared]
    assert not offending, "nodes importing nodes:\n" + "\n".join(offending)


def test_the_checker_names_an_upward_import_hidden_inside_a_function(tmp_path):
    """The rules above would pass vacuously if the parser missed function-level or from-imports."""
    for name, source in {
        "stores/__init__.py": "",
        "stores/bundle.py": "def late():\n    from graph.builder import graph\n    return graph\n",
        "graph/__init__.py": "",
        "graph/builder.py": "from stores import bundle\ngraph = bundle\n",
    }.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(source, encoding="utf-8")
    edges = import_graph(tmp_path)
    assert edges["stores.bundle"] == {"graph.builder"} and edges["graph.builder"] == {"stores.bundle"}
    assert upward_imports(edges) == ["stores.bundle -> graph.builder"]


def test_nothing_shipped_imports_the_lab():
    """The wheel leaves cragraph_lab out, so a shipped module that imported it would fail on a user's install.
    (cragraph/cli/main.py looks the lab's commands up by name, through importlib, where a checkout has them.)"""
    shipped = [f"{module} -> {target}" for module, targets in import_graph().items()
               if not module.startswith("cragraph_lab") for target in targets if target.startswith("cragraph_lab")]
    assert not shipped, "shipped modules importing the lab:\n" + "\n".join(shipped)
