"""The import graph of the project's packages, imports inside functions included: each top-level folder imports
only the folders below it, no module imports itself back through others, and no node imports another node. The
lab (cragraph_lab/, not in the wheel) is the top layer: it imports the product, and nothing shipped imports it."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# Top to bottom, one top-level folder a layer (models/ and prompts/ share the bottom and import neither each other
# nor anything of ours). Inside a folder, modules import each other freely, without cycles.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("cragraph_lab",),  # the lab: benchmarks, training, `python -m cragraph_lab ...`
    ("cragraph",),  # the application: cli/, evaluation/ (`eval folder`), auth.py, `python -m cragraph`
    ("graph",),  # wiring: the compiled graph, the planning subgraph, the edges
    ("nodes",),  # one module per stage
    ("rag",),  # context and state, settings, retrieval, planning, reader, knowledge, answering
    ("evaluators",),  # relevance evaluators and the CRAG grade
    ("stores",),  # the on-disk index and text analysis
    ("models", "prompts"),  # embedders and chat models; one prompt per LLM stage
)
TOP_LEVEL = tuple(folder for layer in LAYERS for folder in layer)
NOT_A_LAYER = {"tests", "data", "samples", "docs", "runs", "build"}  # not packages the product or the lab imports


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
    folder = module.split(".")[0]
    for index, folders in enumerate(LAYERS):
        if folder in folders:
            return index
    raise AssertionError(f"{module} is in no layer: add its folder to LAYERS")


def upward_imports(edges: dict[str, set[str]]) -> list[str]:
    """Imports between folders that do not go down a layer (a folder's modules import each other freely)."""
    upward = []
    for module, targets in edges.items():
        for target in targets:
            if module.split(".")[0] != target.split(".")[0] and layer_of(target) <= layer_of(module):
                upward.append(f"{module} -> {target}")
    return sorted(upward)


def test_every_top_level_package_is_a_layer():
    packages = {p.parent.name for p in ROOT.glob("*/__init__.py")} - NOT_A_LAYER
    assert packages == set(TOP_LEVEL), f"top-level packages not in LAYERS: {sorted(packages - set(TOP_LEVEL))}; " \
                                       f"in LAYERS but gone: {sorted(set(TOP_LEVEL) - packages)}"


def test_every_module_imports_only_downward_between_folders():
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
        "models/__init__.py": "",
        "models/chat.py": "import prompts.answer\n",
        "prompts/__init__.py": "",
        "prompts/answer.py": "",
    }.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(source, encoding="utf-8")
    edges = import_graph(tmp_path)
    assert edges["stores.bundle"] == {"graph.builder"} and edges["graph.builder"] == {"stores.bundle"}
    assert upward_imports(edges) == ["models.chat -> prompts.answer", "stores.bundle -> graph.builder"]


def test_nothing_shipped_imports_the_lab():
    """The wheel leaves cragraph_lab out, so a shipped module that imported it would fail on a user's install; the
    lab runs as `python -m cragraph_lab`, and no shipped module looks it up by name either."""
    shipped = [f"{module} -> {target}" for module, targets in import_graph().items()
               if not module.startswith("cragraph_lab") for target in targets if target.startswith("cragraph_lab")]
    assert not shipped, "shipped modules importing the lab:\n" + "\n".join(shipped)
    by_name = []
    for top in TOP_LEVEL:
        if top == "cragraph_lab":
            continue
        for path in sorted((ROOT / top).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Constant) and isinstance(node.value, str) and \
                        node.value.split(".")[0] == "cragraph_lab" and "." in node.value:
                    by_name.append(f"{path.relative_to(ROOT).as_posix()}:{node.lineno} {node.value!r}")
    assert not by_name, "shipped modules naming a lab module:\n" + "\n".join(by_name)
