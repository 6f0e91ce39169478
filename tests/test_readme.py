"""Every example of the README runs: its Python blocks, its commands, its TOML study (small)."""

import re
import shlex
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


def _bash_commands() -> list[list[str]]:
    """Every command of the README's bash blocks, continuation lines joined, comments and a
    trailing `&` dropped."""
    commands = []
    for block in re.findall(r"```bash\n(.*?)```", README.read_text(), flags=re.S):
        for line in re.sub(r"\\\n\s*", " ", block).splitlines():
            words = shlex.split(line, comments=True)
            if words and words[-1] == "&":
                words = words[:-1]
            if words:
                commands.append(words)
    return commands


def _oslr_argv(words: list[str]) -> list[str]:
    """The oslr command's arguments (after `srun ...`, where SLURM starts it)."""
    return words[words.index("oslr") + 1:]


def test_readme__every_command_is_one_a_user_can_type():
    """Every oslr command line in the README parses (a renamed flag or command fails here), and
    the other commands are the install and the test runs the project defines."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib

    from oslr.cli.parser import make_parser

    commands = _bash_commands()
    oslr = [c for c in commands if "oslr" in c]
    assert len(oslr) >= 20, oslr  # the extraction itself found the examples
    parser = make_parser()
    for words in oslr:
        try:
            parser.parse_args(_oslr_argv(words))
        except SystemExit:
            pytest.fail(f"README command does not parse: {shlex.join(words)}")
    others = [c for c in commands if "oslr" not in c]
    project = tomllib.loads((README.parent / "pyproject.toml").read_text())
    for words in others:
        if words[:2] == ["pip", "install"]:
            extras = re.findall(r"\[(\w+)\]", words[-1])
            assert words[-1].startswith(('"jax[cuda12]"', "jax[cuda12]")) or all(
                e in project["project"]["optional-dependencies"] for e in extras), words
        else:
            assert words[:3] == ["python", "-m", "pytest"], words
            if "-m" in words[3:]:
                marker = words[3:][words[3:].index("-m") + 1]
                assert any(m.startswith(marker + ":")
                           for m in project["tool"]["pytest"]["ini_options"]["markers"])


def _small_argv(argv: list[str]) -> list[str]:
    """The README's sizes made small: at most 20 runs and 200 rounds."""
    out = list(argv)
    for flag, most in (("--runs", 20), ("--horizon", 200)):
        if flag in out:
            i = out.index(flag) + 1
            out[i] = str(min(int(out[i]), most))
    return out


@pytest.mark.slow  # every command of the README, small: a few minutes
def test_readme__every_command_runs_and_the_loading_example_runs_on_its_study(
        tmp_path, monkeypatch, capsys):
    """The README's commands in its order, in one folder, each ending with status 0; the TOML
    study is the README's TOML block; the loading example then runs on the README's own
    k x eta study. The two-process and SLURM lines are parsed above and not started here (the
    two-process run is tests/test_distributed.py's)."""
    from oslr.cli import main

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    toml = re.search(r"```toml\n(.*?)```", README.read_text(), flags=re.S).group(1)
    toml = toml.replace("horizon = 5000", "horizon = 200").replace("runs = 1000", "runs = 20")
    (tmp_path / "study.toml").write_text(toml)
    ran = []
    for words in _bash_commands():
        argv = _oslr_argv(words) if "oslr" in words else None
        if argv is None or "--distributed" in argv:
            continue
        status = main(_small_argv(argv))
        assert status == 0, (shlex.join(words), capsys.readouterr().err[-2000:])
        ran.append(argv[0])
    assert {"list", "run", "experiment", "reproduce", "plot", "compare", "merge",
            "info"} <= set(ran)
    assert (tmp_path / "results" / "final_vs_eta.png").is_file()
    assert (tmp_path / "both" / "config.json").is_file()
    block = next(b for b in re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
                 if "oslr.load(" in b)
    namespace: dict = {}
    exec(compile(block, "README.md", "exec"), namespace)
    table = namespace["study"].compare("ogd-full [eta=0.05]")
    assert (table["verdict"] == "reference").sum() == 1 and len(table) == 8


def _papers(text: str) -> list[str]:
    """The bullet entries of the five papers in `text`, each joined onto one line."""
    entries, current = [], None
    for line in text.splitlines():
        if line.startswith("* [") and line[3:].split("]")[0] in ("WLL", "KPM", "ITO", "KKLP",
                                                                   "FKK"):
            current = [line[2:]]
            entries.append(current)
        elif current is not None and line.startswith("  ") and line.strip():
            current.append(line.strip())
        else:
            current = None
    return [" ".join(e) for e in entries]


def test_readme__cites_the_papers_as_docs_algorithms_lists_them():
    root = Path(__file__).parents[1]
    readme = _papers((root / "README.md").read_text())
    listed = _papers((root / "docs" / "algorithms.md").read_text())
    assert [e.split("]")[0] for e in listed] == ["[WLL", "[KPM", "[ITO", "[KKLP", "[FKK"]
    assert readme == listed
    titles = {e.split("]")[0][1:]: e.split("*")[1] for e in listed}
    assert titles == {  # the titles as the papers print them
        "WLL": "Online Linear Optimization with Sparsity Constraints",
        "KPM": "Fast Gradient Descent for Drifting Least Squares Regression, with Application "
               "to Bandits",
        "ITO": "Online Regression with Partial Information: Generalization and Linear "
               "Projection",
        "KKLP": "Adaptive Feature Selection: Computationally Efficient Online Sparse Linear "
                "Regression under RIP",
        "FKK": "Online Sparse Linear Regression"}
    assert all(e.endswith(").") and "(" in e.split("*")[-1] for e in listed)
