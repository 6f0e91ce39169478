"""The README's Python example runs (at a small size)."""

import re
from pathlib import Path

README = Path(__file__).parent.parent / "README.md"


def test_readme__python_example_runs(tmp_path, monkeypatch):
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    example = next(b for b in blocks if "oslr.sweep" in b)
    small = example.replace("n_runs=1000", "n_runs=4").replace("horizon=2000", "horizon=100")
    assert small != example
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    namespace: dict = {}
    exec(compile(small, "README.md", "exec"), namespace)
    assert len(namespace["result"].grid) == 4
    assert (tmp_path / "regret.png").is_file()
