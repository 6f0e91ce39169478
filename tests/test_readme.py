"""The README's Python example runs (at a small size)."""

import re
from pathlib import Path

import pytest

README = Path(__file__).parent.parent / "README.md"


@pytest.mark.slow  # a 10 s study (the quickstart's sizes); keeps the default run under 5 min
def test_readme__python_example_runs(tmp_path, monkeypatch):
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    example = next(b for b in blocks if "oslr.sweep" in b)
    small = example.replace("n_runs=1000", "n_runs=4").replace("horizon=2000", "horizon=100")
    assert small != example
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    namespace: dict = {}
    exec(compile(small, "README.md", "exec"), namespace)
    results = namespace["results"]
    assert [r.learner for r in results] == ["ogd-random-subset", "ito-dual-averaging"]
    assert all([p["k"] for p in r.grid] == [2, 4, 8] for r in results)
    assert all(r.n_runs == 4 and r.horizon == 100 for r in results)
    assert (tmp_path / "regret.png").is_file()


def test_readme__names_no_file_a_clone_lacks():
    text = README.read_text()
    assert "../shared" not in text and "ALGORITHMS.md" not in text and "the issues" not in text
    for page in re.findall(r"`(docs/[\w-]+\.md)`", text):
        assert (README.parent / page).is_file(), page


def test_readme__the_study_example_runs(tmp_path, monkeypatch, capsys):
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    example = next(b for b in blocks if "oslr.Study(" in b)
    small = example.replace("horizon=2000, runs=100", "horizon=60, runs=3")
    assert small != example
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    import oslr

    exec(compile("import oslr\n" + small.replace("study.run()", "study.run(progress='none')"),
                 "README.md", "exec"), namespace)
    saved = namespace["saved"]
    assert saved.path == Path("results") and isinstance(saved, oslr.SavedStudy)
    assert set(saved.compare_table["reference"]) == {"ogd-full [eta=0.1]"}
    assert saved.final_vs("eta")["eta"].tolist() == [0.01, 0.1] * 2  # per learner
