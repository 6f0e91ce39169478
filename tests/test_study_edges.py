"""A study's settings at their edges, from the command line and from `oslr.Study`: a size the
user gave is refused, never lowered; a parameter keeps its type; a cap of no runs is refused;
a dataset's horizon may be all of its rows and no more; a figure never replaces a study's own
file, however its path is written."""

import json
import os

import numpy as np
import pytest

import oslr
from oslr.cli import main
from oslr.study import UsageError, prepare


def _study(**changes) -> dict:
    """`oslr run`'s default study with `changes`, as `prepare` takes it."""
    from oslr.study import DEFAULT_STUDY

    study = json.loads(json.dumps(DEFAULT_STUDY))
    study.update(changes)
    return study


def test_run__a_k_the_user_gave_above_d_is_refused_even_the_defaults(tmp_path, capsys):
    # k = 3 is the problem's default: given explicitly with d = 2 it is the user's, refused
    assert main(["run", "--d", "2", "--k", "3", "--horizon", "10", "--runs", "2",
                 "--out", str(tmp_path / "a"), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("oslr: error: sparsity k=3 must satisfy 1 <= k <= d=2.")
    assert "--k" in err and err.count("\n") == 1
    assert not (tmp_path / "a").exists()  # nothing written


def test_study__a_k_given_above_d_is_refused_before_any_folder(tmp_path):
    study = oslr.Study(problem_options={"d": 2, "k": 3, "sigma": 0.1, "design": "gaussian"},
                       learners=["ogd-full"], horizon=10, runs=2, out=str(tmp_path / "a"))
    with pytest.raises(UsageError, match=r"sparsity k=3 must satisfy 1 <= k <= d=2"):
        study.run(progress="none", plot=False)
    assert not (tmp_path / "a").exists()


def test_run__set_k_3_is_recorded_as_the_integer_3(tmp_path):
    out = tmp_path / "s"
    assert main(["run", "--learners", "ogd-random-subset", "--set", "k=3", "--horizon", "10",
                 "--runs", "2", "--no-progress", "--no-plot", "--json", "--out", str(out)]) == 0
    config = json.loads((out / "config.json").read_text())
    assert config["params"] == {"k": 3} and type(config["params"]["k"]) is int
    assert oslr.load(out).config["params"]["k"] == 3


@pytest.mark.parametrize("max_runs", [0, 1])
def test_run__max_runs_below_one_batch_is_refused(tmp_path, capsys, max_runs):
    assert main(["run", "--until", "separated", "--max-runs", str(max_runs), "--normal",
                 "--horizon", "10", "--runs", "2", "--no-progress",
                 "--out", str(tmp_path / "c")]) == 2
    assert capsys.readouterr().err == (f"oslr: error: --max-runs {max_runs} is below one batch "
                                       "of --runs 2; raise it.\n")
    assert not (tmp_path / "c").exists()


def test_study__max_runs_zero_is_refused_before_any_folder(tmp_path):
    study = oslr.Study(learners=["ogd-full", "ogd-random-subset"], horizon=10, runs=2,
                       until="separated", max_runs=0, normal=True, out=str(tmp_path / "c"))
    with pytest.raises(UsageError, match=r"max.runs.? 0 is below one batch"):
        study.run(progress="none", plot=False)
    assert not (tmp_path / "c").exists()


def test_prepare__a_dataset_horizon_of_all_its_rows_is_taken_one_more_refused():
    problem, _ = oslr.make_problem("kegg")
    rows = problem.n_rows
    study = _study(problem="kegg", problem_options={}, learners=["ogd-full"], params={},
                   horizon=rows, runs=2)
    _, _, plans = prepare(study)  # every check before anything is traced: none refuses
    assert len(plans) == 1
    with pytest.raises(UsageError, match=rf"{rows + 1}.*{rows:,}|{rows:,}.*{rows + 1}|"
                                         rf"{rows + 1}.*{rows}"):
        prepare({**study, "horizon": rows + 1})


def test_plot__out_naming_a_studys_own_file_however_written_is_refused(tmp_path, capsys,
                                                                       monkeypatch):
    out = tmp_path / "s"
    assert main(["run", "--learners", "ogd-full", "--horizon", "10", "--runs", "2",
                 "--no-progress", "--json", "--out", str(out)]) == 0
    capsys.readouterr()
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    os.symlink(out, tmp_path / "link")
    monkeypatch.chdir(tmp_path)
    for folder, target in (("s", out / "regret.png"),  # the folder relative, the file absolute
                           ("s", tmp_path / "link" / "summary.csv"),  # through a symlink
                           (str(tmp_path / "link"), "s/config.json"),
                           ("link", "s/../s/manifest.json")):
        assert main(["plot", folder, "--out", str(target)]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"oslr: error: {target} is a file the study wrote;"), err
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert np.all([p.is_file() for p in out.iterdir()])


@pytest.mark.parametrize("flag,items,said", [
    ("--grid", ["eta=0.1", "eta=0.2"], "--grid eta=0.1 and --grid eta=0.2 name eta twice; give "
     "it once with every value (--grid eta=A,B)."),
    ("--set", ["eta=0.1", "eta=0.2"], "--set eta=0.1 and --set eta=0.2 name eta twice; give it "
     "once."),
    ("--set", ["k=3", " k=4"], "--set k=3 and --set  k=4 name k twice; give it once.")])
def test_run__a_name_given_twice_to_grid_or_set_is_refused(tmp_path, capsys, flag, items, said):
    argv = ["run", "--learners", "ogd-random-subset", "--horizon", "10", "--runs", "2",
            "--out", str(tmp_path / "a")]
    for item in items:
        argv += [flag, item]
    assert main(argv) == 2
    assert capsys.readouterr().err == f"oslr: error: {said}\n"
    assert not (tmp_path / "a").exists()


def test_merge__the_merged_folders_config_names_its_own_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for seed in ("0", "1"):
        assert main(["run", "--learners", "ogd-full", "--horizon", "10", "--runs", "2",
                     "--seed", seed, "--no-progress", "--no-plot", "--json",
                     "--out", f"s{seed}"]) == 0
    assert main(["merge", "s0", "s1", "--out", "m"]) == 0
    config = oslr.load("m").config
    assert config["out"] == "m" and config["merged_from"] == ["s0", "s1"]
