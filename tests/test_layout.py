"""The package's shape: a function fits on a screen, the command line is a thin layer, the
simulation core is small. A new function of 101 lines fails here, with its name."""

import ast
from pathlib import Path

import oslr

SRC = Path(oslr.__file__).parent


def _functions(path: Path):
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node.name, node.end_lineno - node.lineno + 1


def test_no_function_in_the_package__is_over_100_lines():
    long = [f"{p.relative_to(SRC.parent)}:{name} ({n} lines)"
            for p in sorted(SRC.rglob("*.py")) for name, n in _functions(p) if n > 100]
    assert long == []


def test_command_line_modules__are_at_most_500_lines_and_sim_under_400():
    cli = {p.name: len(p.read_text().splitlines()) for p in (SRC / "cli").glob("*.py")}
    assert cli and max(cli.values()) <= 500, cli
    assert len((SRC / "sim.py").read_text().splitlines()) < 400


def test_function_length__counts_a_long_function(tmp_path):
    """The measure itself: a 101-line function is seen as 101 lines."""
    body = "\n".join(f"    x{i} = {i}" for i in range(100))
    (tmp_path / "m.py").write_text(f"def f():\n{body}\n")
    assert dict(_functions(tmp_path / "m.py")) == {"f": 101}
