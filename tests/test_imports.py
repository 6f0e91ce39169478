"""The package's import graph: no cycles, and `import oslr` loads no learner family."""

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

import oslr

SRC = Path(oslr.__file__).parent


def _module_name(path: Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _module_level_imports(tree: ast.Module, name: str, modules: set[str]) -> set[str]:
    """oslr modules imported at module level (not inside functions or `if TYPE_CHECKING`)."""
    out: set[str] = set()

    def visit(nodes):
        for node in nodes:
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                continue
            if isinstance(node, (ast.If, ast.Try)):
                visit(node.body)
                visit(getattr(node, "orelse", []))
                for h in getattr(node, "handlers", []):
                    visit(h.body)
            elif isinstance(node, ast.Import):
                out.update(a.name for a in node.names if a.name.startswith("oslr"))
            elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith(
                    "oslr"):
                for a in node.names:  # `from oslr import metrics` imports the module oslr.metrics
                    sub = f"{node.module}.{a.name}"
                    out.add(sub if sub in modules else node.module)

    visit(tree.body)
    out.discard(name)
    out.discard("oslr")  # the package facade re-exports the public API; nothing imports it
    return out


def _graph() -> dict[str, set[str]]:
    files = sorted(SRC.rglob("*.py"))
    modules = {_module_name(p) for p in files}
    return {_module_name(p): _module_level_imports(ast.parse(p.read_text()), _module_name(p),
                                                   modules) for p in files}


def test_import_graph__has_no_cycle():
    graph = _graph()
    state: dict[str, int] = {}
    stack: list[str] = []

    def dfs(node):
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                cycle = stack[stack.index(nxt):] + [nxt]
                raise AssertionError("import cycle: " + " -> ".join(cycle))
            if nxt not in state:
                dfs(nxt)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            dfs(node)
    assert "oslr.sim" in graph and "oslr.report" not in graph["oslr.sim"]


def test_import_graph__harness_imports_neither_reports_nor_comparators():
    graph = _graph()
    harness = ("oslr.sim", "oslr.program", "oslr.checkpoint", "oslr.memory", "oslr.validation")
    for module in harness:
        assert not graph[module] & {"oslr.report", "oslr.regret", "oslr.cli"}, module
    assert {"oslr.program", "oslr.checkpoint", "oslr.memory", "oslr.validation"} <= \
        graph["oslr.sim"]
    assert "oslr.result" not in graph["oslr.report"]  # reports read results; they do not import
    assert "oslr.protocol" in graph["oslr.rollout"]
    for user in ("oslr.program", "oslr.validation", "oslr.testing"):
        assert "oslr.rollout" in graph[user], user


def test_import_oslr__loads_no_learner_family_module():
    code = ("import json, sys, oslr; "
            "print(json.dumps(sorted(m for m in sys.modules if m.startswith('oslr.'))))")
    loaded = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True,
                                       text=True, check=True).stdout)
    assert not [m for m in loaded if m.startswith(("oslr.learners.", "oslr.problems.",
                                                   "oslr.experiments"))], loaded
    assert loaded == []  # `import oslr` is lazy: each public name loads its module on first use


def test_import_oslr__no_jax_until_a_name_is_used_then_every_public_name_resolves():
    code = ("import json, sys, oslr; before = 'jax' in sys.modules; "
            "names = {n: type(getattr(oslr, n)).__name__ for n in oslr.__all__}; "
            "print(json.dumps([before, 'jax' in sys.modules, names, "
            "oslr.report.__name__, sorted(set(oslr.__all__) - set(dir(oslr)))]))")
    before, after, names, report, missing = json.loads(subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)
    assert before is False and after is True and report == "oslr.report" and missing == []
    assert names["make"] == "function" and names["SimResult"] == "type"
    with pytest.raises(AttributeError, match="module 'oslr' has no attribute 'nope'"):
        oslr.nope  # noqa: B018


def test_oslr_dir__lists_every_public_name_and_getattr_caches_it():
    names = dir(oslr)
    assert names == sorted(names) and set(oslr.__all__) <= set(names)
    assert "__version__" in names and len(names) == len(set(names))
    make = oslr.make
    assert oslr.__dict__["make"] is make  # resolved once, then a plain attribute
    assert oslr.stats.__name__ == "oslr.stats" and oslr.__dict__["stats"] is oslr.stats


def _all_imports(path: Path, modules: set[str], type_checking: bool = False) -> set[str]:
    """oslr modules `path` imports anywhere (function-level too), less `if TYPE_CHECKING` unless
    `type_checking`."""
    tree = ast.parse(path.read_text())
    skip = set() if type_checking else {
        id(n) for node in ast.walk(tree) if isinstance(node, ast.If)
        and "TYPE_CHECKING" in ast.unparse(node.test) for n in ast.walk(node)}
    out: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name in modules)
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("oslr"):
            for a in node.names:
                sub = f"{node.module}.{a.name}"
                out.add(sub if sub in modules else node.module)
    return out - {_module_name(path), "oslr"}


def test_import_graph__results_and_specs_layered_with_function_level_imports_too():
    """spec <- registry, and result <- frames <- report / saved: no module of these reaches
    back up, not even inside a function."""
    files = {_module_name(p): p for p in SRC.rglob("*.py")}
    layer = ["oslr.spec", "oslr.registry", "oslr.frames", "oslr.result", "oslr.report",
             "oslr.saved"]
    graph = {m: _all_imports(files[m], set(files)) & set(layer) for m in layer}
    assert "oslr.registry" not in graph["oslr.spec"]
    assert "oslr.report" not in graph["oslr.result"] and "oslr.frames" in graph["oslr.result"]
    assert not graph["oslr.frames"] & {"oslr.report", "oslr.saved", "oslr.registry"}
    seen: dict[str, int] = {}

    def dfs(node, path):
        seen[node] = 1
        for nxt in graph[node]:
            assert seen.get(nxt) != 1, "import cycle: " + " -> ".join(path + [nxt])
            if nxt not in seen:
                dfs(nxt, path + [nxt])
        seen[node] = 2

    for node in layer:
        if node not in seen:
            dfs(node, [node])


def test_import_graph__no_circle_even_through_function_level_or_type_checking_imports():
    files = {_module_name(p): p for p in SRC.rglob("*.py")}
    graph = {m: _all_imports(p, set(files), type_checking=True) for m, p in files.items()}
    state: dict[str, int] = {}

    def dfs(node, path):
        state[node] = 1
        for nxt in sorted(graph[node]):
            assert state.get(nxt) != 1, "import circle: " + " -> ".join(
                path[path.index(nxt):] + [nxt])
            if nxt not in state:
                dfs(nxt, path + [nxt])
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            dfs(node, [node])
    assert "oslr.frames" in graph["oslr.result"]  # the graph reads function-level imports
