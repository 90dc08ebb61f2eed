"""The layout's promises: imports run one way through the layers, with no cycle; the model imports
neither JAX nor pytest, and the strategies no JAX; and the README's layout table names what is in
the tree.

The import graph is read with ``ast`` (imports inside functions included), over every module of
the checkout: ``conftest.py``, ``conformance/``, ``strategies/``, ``reports/``, ``suites/`` and
``tests/``.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Set, Tuple

import pytest

ROOT = Path(__file__).resolve().parents[1]
TOP_LEVEL = ("conftest.py", "conformance", "strategies", "reports", "suites", "tests")

# Lowest first: a module may import from its own layer and the layers before it, never after.
LAYERS: Tuple[Tuple[str, Tuple[str, ...]], ...] = (
    ("model", ("conformance", "conformance.model")),
    ("strategies", ("strategies",)),
    ("JAX side", ("conformance.jaxside",)),
    ("checking", ("conformance.checking",)),
    ("runner", ("conformance.runner",)),
    ("reports", ("reports",)),
    ("suites", ("suites",)),
    ("plugin list", ("conftest",)),
    ("self-tests", ("tests",)),
)
# Libraries a layer must not import at all (the model stands on its own; strategies draw model
# objects, which the suites turn into JAX objects).
FORBIDDEN = {"model": ("jax", "jaxlib", "pytest", "hypothesis"), "strategies": ("jax", "jaxlib", "pytest")}


def project_modules(root: Path = ROOT) -> Dict[str, Path]:
    """Every module of the checkout by dotted name (a package by its own name)."""
    modules = {}
    for top in TOP_LEVEL:
        paths = [root / top] if top.endswith(".py") else sorted((root / top).rglob("*.py"))
        for path in paths:
            parts = path.relative_to(root).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            modules[name] = path
    return modules


def imports_of(name: str, path: Path, modules: Dict[str, Path]) -> Set[str]:
    """What ``name`` imports, anywhere in it: project modules (the deepest that exists) and, for
    other libraries, their top-level name."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[:len(package.split(".")) - (node.level - 1)]
                base = ".".join(anchor + ([node.module] if node.module else []))
            # `from package import module` runs the package's __init__ too: an edge to both
            targets = [base] + [f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in modules]
        else:
            continue
        for target in targets:
            while target and target not in modules and "." in target:
                target = target.rpartition(".")[0]
            found.add(target)
    found.discard(name)
    return found


def layer_of(name: str) -> int:
    """The index in LAYERS of the layer ``name`` belongs to (its longest matching prefix)."""
    best, best_length = None, -1
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (name == prefix or name.startswith(prefix + ".")) and len(prefix) > best_length:
                best, best_length = index, len(prefix)
    if best is None:
        raise LookupError(f"module {name} is in no layer of LAYERS")
    return best


def cycles(graph: Dict[str, Set[str]]) -> List[List[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    on_stack: Set[str] = set()
    found: List[List[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def import_graph(root: Path = ROOT) -> Tuple[Dict[str, Set[str]], Dict[str, Set[str]]]:
    """(project imports, other libraries' top-level names), by module."""
    modules = project_modules(root)
    own, others = {}, {}
    for name, path in modules.items():
        targets = imports_of(name, path, modules)
        own[name] = {t for t in targets if t in modules}
        others[name] = {t.split(".")[0] for t in targets if t not in modules}
    return own, others


def layering_violations(own: Dict[str, Set[str]], others: Dict[str, Set[str]]) -> List[str]:
    """Every import against the layer order, and every forbidden library, as a sentence."""
    found = []
    for name in sorted(own):
        layer = layer_of(name)
        for target in sorted(own[name]):
            if layer_of(target) > layer:
                found.append(f"{name} ({LAYERS[layer][0]}) imports {target} ({LAYERS[layer_of(target)][0]}), "
                             f"a layer above it")
        for library in sorted(others[name] & set(FORBIDDEN.get(LAYERS[layer][0], ()))):
            found.append(f"{name} ({LAYERS[layer][0]}) imports {library}")
    return found


def test_imports_follow_the_layer_order():
    """No module imports from a layer after its own, and the model and the strategies import none
    of the libraries they must stand without."""
    own, others = import_graph()
    assert layering_violations(own, others) == []


def test_no_import_cycle():
    """No group of modules imports each other round in a circle (lazy imports included)."""
    own, _ = import_graph()
    assert cycles(own) == []


def package_graph(own: Dict[str, Set[str]]) -> Dict[str, Set[str]]:
    """The import graph between the checkout's top-level packages (``conformance``, ``strategies``,
    ...): an edge where some module of one imports a module of the other."""
    top = lambda name: name.split(".")[0]
    graph: Dict[str, Set[str]] = {}
    for name, targets in own.items():
        graph.setdefault(top(name), set()).update(top(t) for t in targets if top(t) != top(name))
    return graph


def test_no_package_cycle():
    """No two top-level packages import each other: the strategies draw model objects from
    ``conformance.model``, so no module of ``conformance`` imports ``strategies`` (a suite passes
    what was drawn)."""
    own, _ = import_graph()
    assert cycles(package_graph(own)) == [], f"got package cycles {cycles(package_graph(own))}, but should be none"


def test_the_checks_catch_what_they_look_for(tmp_path):
    """On a planted tree: an upward import, a forbidden library in the model, cycles (one through a
    package's __init__, which `from . import module` runs) and two packages importing each other
    (no module cycle) are each found; a module in no layer is an error."""
    files = {
        "conformance/__init__.py": "",
        "conformance/model/__init__.py": "",
        "conformance/model/layout.py": "import jax\nfrom conformance.runner import plugin\n",
        "conformance/runner/__init__.py": "",
        "conformance/runner/plugin.py": "from . import devices\n",
        "conformance/runner/devices.py": "def f():\n    from .plugin import x\n",
        "conformance/checking/__init__.py": "from .case import Case\n",
        "conformance/checking/case.py": "from . import repro\n",  # (runs the package's __init__: a cycle)
        "conformance/checking/repro.py": "",
        "conformance/checking/placement.py": "from strategies.parallelism import ParallelLayout\n",
        "strategies/__init__.py": "", "strategies/parallelism.py": "from conformance.model import layout\n",
        "reports/__init__.py": "", "suites/__init__.py": "",
        "tests/__init__.py": "", "conftest.py": "",
    }
    for relative, text in files.items():
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text(text)
    own, others = import_graph(tmp_path)
    assert layering_violations(own, others) == [
        "conformance.model.layout (model) imports conformance.runner (runner), a layer above it",
        "conformance.model.layout (model) imports conformance.runner.plugin (runner), a layer above it",
        "conformance.model.layout (model) imports jax",
    ]
    assert cycles(own) == [["conformance.checking", "conformance.checking.case"],
                           ["conformance.runner.devices", "conformance.runner.plugin"]]
    assert cycles(package_graph(own)) == [["conformance", "strategies"]]  # (no module cycle: the packages')
    with pytest.raises(LookupError, match="in no layer"):
        layer_of("elsewhere.module")


@pytest.mark.parametrize("package, libraries", [("conformance.model", ("jax", "pytest")),
                                                ("strategies", ("jax", "pytest"))])
def test_importing_the_package_loads_none_of(package, libraries):
    """Importing every module of the model (or of the strategies) in a fresh interpreter loads
    neither JAX nor pytest: what they say cannot depend on the library under test."""
    code = (f"import importlib, pkgutil, sys; import {package} as p\n"
            f"for m in pkgutil.walk_packages(p.__path__, p.__name__ + '.'): importlib.import_module(m.name)\n"
            f"print(sorted(l for l in {list(libraries)!r} if l in sys.modules))")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


# --- the README's layout table -----------------------------------------------------------------
def readme_layout_paths() -> List[str]:
    """The paths the README's layout table ("Contributing: where things go") names (backquoted, first
    column)."""
    text = (ROOT / "README.md").read_text()
    section = text.split("## Contributing: where things go", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    return [path for row in rows for path in re.findall(r"`([^`]+)`", row.split("|")[1])]


def paths_the_table_must_name() -> Set[str]:
    """Every top-level module and file of the design, and every package (a folder with
    ``__init__.py``) at any depth, as ``path`` or ``folder/``."""
    must = {"conftest.py", "tox.ini", "pyproject.toml", ".ci/run", "tests/faults/kill_maps/",
            "tests/faults/unkilled.toml", "suites/known_deviations.toml", "reports/schema.json",
            "conformance/jaxside/behaviour_changes.toml"}
    for top in TOP_LEVEL[1:]:
        must |= {f"{p.parent.relative_to(ROOT).as_posix()}/" for p in (ROOT / top).rglob("__init__.py")}
    return must


def test_readme_layout_table_names_the_tree():
    """The README's layout table names every package (subpackages included), every top-level
    module and the data files people edit, and every path it names exists."""
    named = readme_layout_paths()
    missing = sorted(paths_the_table_must_name() - set(named))
    assert not missing, f"the README's layout table does not name {missing}"
    absent = [path for path in named if not (ROOT / path.rstrip("/")).exists()]
    assert not absent, f"the README's layout table names paths that do not exist: {absent}"
