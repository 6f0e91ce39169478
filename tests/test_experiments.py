"""`oslr.experiments` itself: `run_experiment` (options and dataset checked, every study's runs
recorded into the per-run file) and `write_runs` (the Parquet file any table is recomputed from)."""

import os

import numpy as np
import pandas as pd
import pytest

import oslr
from oslr import experiments, registry
from oslr.sim import grid_params
from tests.experiments.fakes import FakeEngine


def _study(eng, seed=0, runs=3, run_offset=0):
    learner, params = oslr.make("ogd-full", d=4, horizon=20)
    problem, pp = oslr.make_problem("sparse-linear", d=4, k=1, design="gaussian")
    labels, stacked = grid_params(params, {"eta": [0.1, 0.2]})
    res = eng.simulate(learner, problem, stacked, pp, horizon=20, n_runs=runs, seed=seed,
                       grid=labels)
    res.run_offset = run_offset
    res.info = {"design": "gaussian", "unit_x": False, "w": [1, 2], "m": 3}
    res.final["loss"]  # a per-run sum the file carries as sum_loss
    return res


def test_write_runs__every_run_checkpoint_and_sum_with_params_and_labels(tmp_path):
    eng = FakeEngine(n_checkpoints=2, regret=("regret",))
    first, second = _study(eng), _study(eng, runs=2, run_offset=100)
    path = tmp_path / "deep" / "er" / "runs.parquet"  # folders made as needed
    experiments.write_runs([first, second], path)
    got = pd.read_parquet(path)
    assert list(got.columns[:9]) == ["study", "problem", "seed", "learner", "params", "metric",
                                     "run", "t", "value"]
    assert (got["seed"] == first.seed).all()  # a run is named by (seed, run)
    assert set(got["problem"]) == {"sparse-linear"} and set(got["learner"]) == {"ogd-full"}
    for study, res in enumerate((first, second)):
        mine = got[got["study"] == study]
        for g, eta in enumerate((0.1, 0.2)):
            point = mine[mine["params"] == f"eta={eta}"]
            assert np.allclose(point["param_eta"], eta) and (point["param_k"] == 4).all()
            reg = point[point["metric"] == "regret"]
            assert reg["run"].tolist() == np.repeat(np.arange(res.n_runs) + res.run_offset,
                                                    2).tolist()
            assert reg["t"].tolist() == [10, 20] * res.n_runs
            np.testing.assert_allclose(reg["value"], res._regret["regret"][g].reshape(-1))
            loss = point[point["metric"] == "sum_loss"]
            np.testing.assert_allclose(loss["value"], res.final["loss"][g])
            assert (loss["t"] == 20).all()
        # scalar labels kept, the list dropped
        assert (mine["info_design"] == "gaussian").all() and (mine["info_m"] == 3).all()
        assert (~mine["info_unit_x"]).all() and "info_w" not in mine
    experiments.write_runs([], tmp_path / "empty.parquet")  # no study: the columns only
    empty = pd.read_parquet(tmp_path / "empty.parquet")
    assert len(empty) == 0 and list(empty.columns) == ["study", "problem", "seed", "learner",
                                                       "params", "metric", "run", "t", "value"]


def _toy(args):
    eng = FakeEngine(n_checkpoints=2, regret=("regret",))
    res = _study(eng, seed=args.seed, runs=args.runs or 2)
    from oslr.result import record  # what oslr.simulate does with every result it returns

    record(res)
    return pd.DataFrame([{"dataset": args.dataset, "runs": args.runs, "seed": args.seed,
                          "quick": args.quick, "out": str(args.out), **args.options}])


def test_run_experiment__checks_then_runs_and_writes_every_study_it_recorded(tmp_path,
                                                                             monkeypatch):
    monkeypatch.setattr(registry.EXPERIMENTS, "_entries", dict(registry.EXPERIMENTS._entries))
    oslr.register_experiment(oslr.ExperimentSpec(
        "toy-fast", "a toy", _toy, files=("toy-{dataset}.csv",), learners=("ogd-full",),
        datasets=("small", "large")))
    frame = experiments.run_experiment("toy-fast", None, 3, 5, tmp_path, True, False, eta=0.5)
    assert frame.to_dict("records") == [{"dataset": "small", "runs": 3, "seed": 5, "quick": True,
                                         "out": str(tmp_path), "eta": 0.5}]
    runs = pd.read_parquet(tmp_path / "toy-fast-small-runs.parquet")
    assert sorted(set(runs["run"])) == [0, 1, 2] and (runs["study"] == 0).all()
    with pytest.raises(ValueError, match="zzz"):
        experiments.run_experiment("toy-fast", "small", 3, 0, tmp_path / "x", True, False, zzz=1)
    with pytest.raises(ValueError, match="did you mean 'large'"):
        experiments.run_experiment("toy-fast", "lage", 3, 0, tmp_path / "x", True, False)
    experiments.check_options("toy-fast", {"eta": 1.0})  # a param of ogd-full: accepted
    with pytest.raises(ValueError, match="zzz"):
        experiments.check_options("toy-fast", {"zzz": 1})
    assert not (tmp_path / "x").exists()


def _two_studies(args):
    """A toy experiment of two small studies (4 chunks each), writing one table."""
    problem, pp = oslr.make_problem("sparse-linear", d=6, k=2)
    rows = []
    for name in ("ogd-full", "ogd-random-subset"):
        learner, params = oslr.make(name, d=6)
        res = oslr.simulate(learner, problem, params, pp, horizon=40, n_runs=args.runs or 3,
                            seed=args.seed, chunk_size=10)
        rows.append({"learner": name, "regret": res.regret_curves()["regret"][0, :, -1].mean()})
    frame = pd.DataFrame(rows)
    frame.to_csv(args.out / "two.csv", index=False)
    return frame


@pytest.mark.slow  # keeps the default run under 5 min (CI runs it with -m slow)
def test_experiment__killed_then_rerun_skips_finished_studies_resumes_the_next_same_files(
        tmp_path, monkeypatch, capsys):
    from oslr import checkpoint
    from oslr.cli import main
    from tests.helpers import interrupt_after_saves

    monkeypatch.setattr(registry.EXPERIMENTS, "_entries", dict(registry.EXPERIMENTS._entries))
    oslr.register_experiment(oslr.ExperimentSpec("two-studies", "a toy", _two_studies,
                                                 files=("two.csv",)))
    argv = ["experiment", "two-studies", "--no-progress", "--json", "--out"]
    assert main([*argv, str(tmp_path / "whole")]) == 0
    interrupt_after_saves(monkeypatch, 6)  # the second study's round 20 is on disk
    assert main([*argv, str(tmp_path / "cut")]) == 130
    kept = sorted(p.name for p in (tmp_path / "cut" / ".studies").iterdir())
    assert len(kept) == 2  # a folder per study, named by its settings
    real, played = checkpoint.save, []
    monkeypatch.setattr(checkpoint, "save", lambda *a: (played.append(a[2]), real(*a)))
    with pytest.warns(RuntimeWarning) as record:
        assert main([*argv, str(tmp_path / "cut")]) == 0
    (warned,) = [w for w in record if "resumed" in str(w.message)]
    assert str(warned.message) == (
        f"2 of two-studies's studies resumed from the checkpoints of an interrupted run in "
        f"{tmp_path / 'cut' / '.studies'}: the numbers are those of an uninterrupted run, but a "
        "wall time the experiment reports covers only the rounds played now.")
    if "MUTANT_UNDER_TEST" not in os.environ:  # mutmut's trampolines add frames of their own
        assert warned.filename.endswith(os.path.join("oslr", "cli", "commands.py"))
    assert played == [30, 40]  # the first study skipped, the second from round 20 on
    assert not (tmp_path / "cut" / ".studies").exists()
    for name in ("two.csv", "two-studies-runs.parquet"):
        assert (tmp_path / "cut" / name).read_bytes() == (tmp_path / "whole" / name).read_bytes()


@pytest.mark.parametrize("progress", [True, False])
def test_run_experiment__hands_the_progress_choice_to_the_experiment(tmp_path, monkeypatch,
                                                                     progress):
    monkeypatch.setattr(registry.EXPERIMENTS, "_entries", dict(registry.EXPERIMENTS._entries))
    seen = []
    oslr.register_experiment(oslr.ExperimentSpec(
        "toy-progress", "a toy", lambda a: (seen.append(a.progress), pd.DataFrame())[1]))
    experiments.run_experiment("toy-progress", None, 2, 0, tmp_path, True, progress)
    assert seen == [progress]
