"""The layer rule of the developers' guide, checked over the import graph of every module.

storage -> format -> blobs -> analysis -> render -> api -> cli: a module imports only modules of its
own layer or of the layers before it (the package root, which holds the version, and the error
family ``errors.py`` are below every layer). spark is the last layer, imported only by
the commands that need it (``stats``, ``scan``), and only inside the command function, so no
other command (nor ``--help``) loads it; pyspark itself is imported only in spark. click is
for cli; the layers before render never import rich.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "puffin_cli"
LAYERS = {"storage": 0, "format": 1, "blobs": 2, "analysis": 3, "render": 4, "api": 5, "cli": 6,
          "spark": 7}
SPARK_IMPORTERS = {"puffin_cli.cli.stats", "puffin_cli.cli.scan"}
# The one error family every layer raises, storage included, sits below the layers.
BELOW_ALL = {"puffin_cli.errors"}


@dataclass(frozen=True)
class Import:
    module: str  # the importing module
    target: str  # the imported module (or package) name
    line: int
    top_level: bool  # at module level (not in a function; TYPE_CHECKING blocks count as not)


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _type_checking(node: ast.If) -> bool:
    return isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"


def imports_of(path: Path) -> list[Import]:
    module = module_name(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: list[Import] = []

    def visit(node: ast.AST, top: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import):
                found.extend(Import(module, a.name, child.lineno, top) for a in child.names)
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    anchor = package.split(".")
                    anchor = anchor[:len(anchor) - child.level + 1]
                    base = ".".join([*anchor, base] if base else anchor)
                submodules = [f"{base}.{a.name}" for a in child.names
                              if f"{base}.{a.name}" in MODULES]
                if len(submodules) < len(child.names):  # a name defined in ``base`` itself
                    found.append(Import(module, base, child.lineno, top))
                found.extend(Import(module, name, child.lineno, top) for name in submodules)
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) or (
                    isinstance(child, ast.If) and _type_checking(child)):
                visit(child, False)
            else:
                visit(child, top)

    visit(ast.parse(path.read_text(encoding="utf-8")), True)
    return found


FILES = sorted(PACKAGE.rglob("*.py"))
MODULES = {module_name(p) for p in FILES}
GRAPH = [i for p in FILES for i in imports_of(p)]


def layer(module: str) -> int | None:
    """The layer of a puffin_cli module; ``None`` for the package root, ``__main__`` and the
    error family (below every layer)."""
    parts = module.split(".")
    if parts[0] != "puffin_cli" or len(parts) < 2 or parts[1] == "__main__" \
            or module in BELOW_ALL:
        return None
    return LAYERS[parts[1]]


def test_every_subpackage_has_a_layer() -> None:
    assert {m.split(".")[1] for m in MODULES if m.count(".") >= 1 and m not in BELOW_ALL} \
        - {"__main__"} <= set(LAYERS)


def test_imports_go_only_to_earlier_layers() -> None:
    wrong = []
    for i in GRAPH:
        if not i.target.startswith("puffin_cli.") or i.target.split(".")[1] == "__main__":
            continue
        own, other = layer(i.module), layer(i.target)
        if i.target in BELOW_ALL or other == LAYERS["spark"]:
            continue  # the last layer: its own test below
        if own is not None and other is not None and other > own:
            wrong.append(f"{i.module}:{i.line} imports {i.target}")
    assert wrong == []


def test_spark_only_from_the_commands_that_need_it_and_only_when_they_run() -> None:
    wrong = []
    for i in GRAPH:
        if not i.target.startswith("puffin_cli.spark") or i.module.startswith("puffin_cli.spark"):
            continue
        if i.module not in SPARK_IMPORTERS or i.top_level:
            wrong.append(f"{i.module}:{i.line} imports {i.target}")
    assert wrong == []


def test_pyspark_only_in_spark_click_only_in_cli_no_rich_before_render() -> None:
    wrong = []
    for i in GRAPH:
        top = i.target.split(".")[0]
        own = layer(i.module)
        if top == "pyspark" and not i.module.startswith("puffin_cli.spark"):
            wrong.append(f"{i.module}:{i.line} imports pyspark")
        if top == "click" and own != LAYERS["cli"]:
            wrong.append(f"{i.module}:{i.line} imports click")
        if top == "rich" and own is not None and own < LAYERS["render"]:
            wrong.append(f"{i.module}:{i.line} imports rich")
    assert wrong == []


def test_spark_holds_only_spark_jobs() -> None:
    """spark/ holds the Spark jobs and their session, nothing of the pipeline around them
    (issue 28): no spark module names a step of the stats pipeline (decide, sketch
    refresh, kept blobs, write, commit), and nothing under analysis/ imports spark/."""
    pipeline = {"decide_refresh", "refresh_sketches", "write_statistics", "commit_statistics",
                "kept_blobs", "check_committable", "compute_loaded", "compute_tables"}
    wrong = []
    for path in FILES:
        module = module_name(path)
        if not module.startswith("puffin_cli.spark"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Name) and node.id in pipeline:
                wrong.append(f"{module}:{node.lineno} uses {node.id}")
            if isinstance(node, ast.Attribute) and node.attr in pipeline:
                wrong.append(f"{module}:{node.lineno} uses {node.attr}")
            if isinstance(node, ast.alias) and node.name in pipeline:
                wrong.append(f"{module}:{node.lineno} imports {node.name}")
    assert wrong == []
    # the pipeline itself runs without Spark: nothing under analysis/ imports spark/
    assert not [i for i in GRAPH if i.module.startswith("puffin_cli.analysis")
                and i.target.startswith("puffin_cli.spark")]


def test_the_graph_holds_known_edges_at_their_level() -> None:
    """The graph is real: known edges are found, lazy ones as lazy."""
    edges = {(i.module, i.target, i.top_level) for i in GRAPH}
    assert ("puffin_cli.cli.stats", "puffin_cli.spark.stats", False) in edges
    assert ("puffin_cli.format.reader", "puffin_cli.errors", True) in edges


def circles(edges: set[tuple[str, str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm, iterative)."""
    successors: dict[str, list[str]] = {}
    for source, target in sorted(edges):
        successors.setdefault(source, []).append(target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(successors):
        if root in index:
            continue
        work = [(root, iter(successors.get(root, [])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, rest = work[-1]
            step = next(rest, None)
            if step is not None:
                if step not in index:
                    index[step] = low[step] = len(index)
                    stack.append(step)
                    on_stack.add(step)
                    work.append((step, iter(successors.get(step, []))))
                elif step in on_stack:
                    low[node] = min(low[node], index[step])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    found.append(sorted(group))
    return sorted(found)


def test_circles_are_found() -> None:
    """The circle finder is real: it finds a circle through a lazy import and not a chain."""
    assert circles({("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")}) == [["a", "b", "c"]]
    assert circles({("a", "b"), ("b", "c")}) == []


def test_no_circle_between_files() -> None:
    """No module imports, even lazily or only for type checking, a module that imports it back
    through any chain: each file can be read (and loaded) after the files it names."""
    edges = {(i.module, i.target) for i in GRAPH
             if i.target in MODULES and i.target != i.module}
    assert circles(edges) == []


def test_only_the_cli_uses_the_process_wide_fileio() -> None:
    """``--io`` is the CLI's: below it, a FileIO is passed in (a table carries its own), so
    that tables read in one process with different credentials are each read with theirs."""
    wrong = []
    for path in FILES:
        module = module_name(path)
        if module.startswith(("puffin_cli.cli", "puffin_cli.storage")):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
                    "puffin_cli.storage"):
                used = {a.name for a in node.names} & {"default_io", "configure"}
                if used:
                    wrong.append(f"{module}:{node.lineno} imports {', '.join(sorted(used))}")
            if isinstance(node, ast.Attribute) and node.attr in ("default_io", "configure"):
                wrong.append(f"{module}:{node.lineno} uses {node.attr}")
    assert wrong == []


def test_architecture_doc_names_every_module_and_no_other() -> None:
    """docs/architecture.md matches the tree: every module file and package is named there,
    and every ``*.py`` it names exists."""
    text = (PACKAGE.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    names = {p.name for p in FILES if p.name != "__init__.py"}
    packages = {f"{p.parent.name}/" for p in FILES if p.name == "__init__.py"}
    assert sorted(n for n in names | packages if n not in text) == [], \
        "a module docs/architecture.md does not name: add a line for it there"
    tree = text.split("```")[1]  # the tree drawing
    assert sorted(set(re.findall(r"[a-z_]+\.py", tree)) - names - {"__init__.py"}) == [], \
        "docs/architecture.md names a module that does not exist"


def test_readme_lists_the_layers_of_architecture_doc_in_order() -> None:
    """The README's numbered layer list, docs/architecture.md's layer chain and ``LAYERS``
    name the same layers in the same order, with the same numbers."""
    doc = (PACKAGE.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    chain = " → ".join(re.findall(r"\*\*([^*]+)\*\*", doc.split("\n\n")[1]))
    doc_order = [name.strip() for name in chain.split("→")]
    readme = (PACKAGE.parent / "README.md").read_text(encoding="utf-8")
    section = readme.split("## How the code is laid out", 1)[1].split("\n## ", 1)[0]
    listed = [(int(n), name) for n, name in
              re.findall(r"^(\d+)\. `puffin_cli/([a-z_]+)`", section, re.MULTILINE)]
    assert doc_order == sorted(LAYERS, key=LAYERS.__getitem__)
    assert listed == [(LAYERS[name], name) for name in doc_order]
