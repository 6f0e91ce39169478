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


def test_run__a_k_the_user_gave_above_d_is_refused_even_the_defaults(tmp_path, capsys):
    # k = 3 is the problem's default: given explicitly with d = 2 it is the user's, refused
    assert main(["run", "--d", "2", "--k", "3", "--horizon", "10", "--runs", "2",
                 "--out", str(tmp_path / "a"), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err == ("oslr: error: problem 'sparse-linear': option k=3 is out of range [1, d=2] "
                   "(sparsity of w* and of the comparator). Change it with --k.\n")
    assert not (tmp_path / "a").exists()  # nothing written


def test_study__a_k_given_above_d_is_refused_before_any_folder(tmp_path):
    study = oslr.Study(problem_options={"d": 2, "k": 3, "sigma": 0.1, "design": "gaussian"},
                       learners=["ogd-full"], horizon=10, runs=2, out=str(tmp_path / "a"))
    with pytest.raises(UsageError, match=r"^problem 'sparse-linear': option k=3 is out of range "
                                         r"\[1, d=2\] .* Change it with problem_options\['k'\]\.$"):
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
    with pytest.raises(UsageError, match=r"^max_runs=0 is below one batch of runs=2; raise it\.$"):
        study.run(progress="none", plot=False)
    assert not (tmp_path / "c").exists()


def test_prepare__a_dataset_horizon_of_all_its_rows_is_taken_one_more_refused():
    problem, _ = oslr.make_problem("kegg")
    rows = problem.n_rows
    study = oslr.Study(problem="kegg", learners=["ogd-full"], horizon=rows, runs=2,
                       comparator_k=3)
    _, _, plans = prepare(study)  # every check before anything is traced: none refuses
    assert len(plans) == 1
    study.horizon = rows + 1
    with pytest.raises(UsageError, match=rf"^horizon {rows + 1} exceeds the {rows} rows of "
                                         r"dataset 'kegg'"):
        prepare(study)


def test_plot__out_naming_a_studys_own_file_however_written_is_refused(tmp_path, capsys,
                                                                       monkeypatch):
    import matplotlib.pyplot as plt

    plt.close("all")  # figures other tests of this worker left open (pyplot warns past 20)
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


# ------------------------------------------- oslr.Study: every field checked, in Python's names

@pytest.mark.parametrize("fields,said", [
    ({"learners": "ogd-full"}, "learners='ogd-full' must be a list of learner names, e.g. "
     "learners=['ogd-full']."),
    ({"learners": ["ogd-full", 3]}, "learners=['ogd-full', 3] must be a list of learner names"),
    ({"grid": {"eta": 0.1}}, "grid['eta']=0.1 must be a non-empty list of values, e.g. "
     "grid['eta']=[0.1]."),
    ({"grid": {"eta": []}}, "grid['eta']=[] must be a non-empty list of values"),
    ({"grid": [0.1]}, "grid=[0.1] must be a table of name -> list of values, e.g. "
     "grid={'eta': [0.1, 0.2]}."),
    ({"params": {"eta": 0.1}, "grid": {"eta": [0.2]}}, "params['eta'] and grid['eta']: 'eta' "
     "both fixed to one value and swept; give each parameter one or the other."),
    ({"params": {"eta": [0.1]}}, "params['eta']=[0.1] must be a number, a string or a bool"),
    ({"until": "separate"}, "until='separate' must be 'separated' (or None), e.g. "
     "until='separated'."),
    ({"horizon": 10.0}, "horizon=10.0 must be a positive integer"),
    ({"runs": True}, "runs=True must be a positive integer"),
    ({"runs": 0}, "runs=0 must be a positive integer, e.g. runs=100."),
    ({"seed": "0"}, "seed='0' must be an integer"),
    ({"problem_options": [16]}, "problem_options=[16] must be a table of name -> value"),
    ({"normal": 1}, "normal=1 must be True or False"),
    ({"max_runs": 2.5}, "max_runs=2.5 must be an integer"),
    ({"comparator_k": 0}, "comparator_k=0 must be a positive integer"),
    ({"comparator_radius": -1.0}, "comparator_radius=-1.0 must be a finite number > 0"),
    ({"variance": float("inf")}, "variance=inf must be a finite number > 0"),
    ({"bounds": (5.0, 1.0)}, "bounds=(5.0, 1.0) must be two finite numbers LO < HI"),
    ({"max_memory": "lots"}, "max_memory='lots' must be bytes or a size such as 512M or 4G"),
    ({"compare_to": __import__("pathlib").Path("ogd-full")}, "compare_to=PosixPath('ogd-full') "
     "must be a learner's name or 'best'")])
def test_study__a_field_of_the_wrong_kind_is_one_line_in_pythons_names(fields, said):
    with pytest.raises(UsageError) as err:
        oslr.Study(**fields)
    assert str(err.value).startswith(said) and "--" not in str(err.value)
    assert "\n" not in str(err.value)


def test_study__run_refuses_progress_and_axes_before_any_folder(tmp_path):
    study = oslr.Study(learners=["ogd-full"], horizon=10, runs=2, out=str(tmp_path / "a"))
    with pytest.raises(UsageError, match=r"^progress='bogus': choose one of \['bar', 'jsonl', "
                       r"'none'\]\.$"):
        study.run(progress="bogus")
    with pytest.raises(UsageError, match=r"^axes='semilogy': choose one of \['loglog', "
                       r"'linear', 'logx'\]\.$"):
        study.run(progress="none", axes="semilogy")
    assert not (tmp_path / "a").exists()
    study.out = tmp_path / "later"  # a path set after it was made: taken as its string
    with pytest.raises(UsageError, match=r"^progress='bogus'"):
        study.run(progress="bogus")
    assert study.out == str(tmp_path / "later") and study.to_dict()["out"] == study.out
    study.learners = "ogd-full"  # changed after it was made: checked again
    with pytest.raises(UsageError, match=r"^learners='ogd-full' must be a list"):
        study.run(progress="none")


def test_study__another_problem_starts_from_its_own_options(tmp_path):
    study = oslr.Study(problem="linear-bandit", learners=["linucb"], horizon=10, runs=2,
                       out=tmp_path / "b")
    assert study.problem_options == {} and study.out == str(tmp_path / "b")
    assert oslr.Study().problem_options == {"d": 16, "k": 3, "sigma": 0.1,
                                            "design": "gaussian"}
    saved = study.run(progress="none", plot=False)
    assert saved.config["problem"] == "linear-bandit"
