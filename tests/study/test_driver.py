"""`oslr.Study`: from Python what `oslr run` runs (the same files), with resume, the lock,
compare-to and until-separated."""

import json

import pandas as pd
import pytest

import oslr
from oslr import atomic, checkpoint
from oslr.cli import main
from oslr.study import UsageError
from tests.helpers import interrupt_after_saves

#: the test suite's small study (tests/cli/helpers.py's `_small` shape: its programs are shared)
SMALL = {"learners": ["ogd-full"], "runs": 3, "horizon": 60, "chunk": 20}


def _same_tables(a, b):
    for name in ("runs.csv", "summary.csv", "curves.csv"):
        pd.testing.assert_frame_equal(pd.read_csv(a / name), pd.read_csv(b / name))
    pd.testing.assert_frame_equal(pd.read_parquet(a / "runs.parquet"),
                                  pd.read_parquet(b / "runs.parquet"))


def test_study__runs_what_oslr_run_runs_and_returns_the_loaded_folder(tmp_path, capsys):
    saved = oslr.Study(**SMALL, out=str(tmp_path / "py")).run(progress="none")
    assert isinstance(saved, oslr.SavedStudy) and saved.path == tmp_path / "py"
    assert saved.manifest is not None and saved.config["learners"] == ["ogd-full"]
    assert main(["run", "--learners", "ogd-full", "--runs", "3", "--horizon", "60", "--chunk",
                 "20", "--no-progress", "--no-plot", "--json", "--out",
                 str(tmp_path / "cli")]) == 0
    capsys.readouterr()
    _same_tables(tmp_path / "py", tmp_path / "cli")
    settings = {k: v for k, v in saved.config.items() if k in SMALL}
    assert settings == SMALL


def test_study__a_killed_study_resumes_to_the_same_files(tmp_path, monkeypatch):
    whole = oslr.Study(**SMALL, out=str(tmp_path / "whole")).run(progress="none", plot=False)
    real = checkpoint.save
    interrupt_after_saves(monkeypatch, 2)
    study = oslr.Study(**SMALL, out=str(tmp_path / "cut"))
    with pytest.raises(KeyboardInterrupt):
        study.run(progress="none", plot=False)
    assert not (tmp_path / "cut" / "config.json").exists()
    monkeypatch.setattr(checkpoint, "save", real)
    resumed = study.run(progress="none", plot=False)
    _same_tables(whole.path, resumed.path)
    with pytest.raises(ValueError, match=r"already holds a finished oslr run study"):
        study.run(progress="none")  # a finished folder is never overwritten


def test_study__compare_to_and_until_separated_as_the_command_writes_them(tmp_path, capsys):
    two = {**SMALL, "learners": ["ogd-full", "ogd-random-subset"]}
    saved = oslr.Study(**two, compare_to="ogd-full", out=str(tmp_path / "c")).run(
        progress="none", plot=False)
    assert saved.compare_table is not None and set(saved.compare_table["reference"]) == {
        "ogd-full"}
    until = oslr.Study(**{**two, "runs": 2}, until="separated", max_runs=4,
                       bounds=(-1e4, 1e4), out=str(tmp_path / "u")).run(progress="none",
                                                                        plot=False)
    assert until.until is not None and until.compare_table is None
    assert until.config["until"] == "separated" and until.config["max_runs"] == 4
    assert until.config["bounds"] == [-1e4, 1e4] and until.config["runs"] in (2, 4)


def test_study__bad_values_are_refused_before_anything_is_made(tmp_path):
    out = tmp_path / "o"
    for changes, message in (({"runs": 0}, r"^runs=0 must be a positive integer, e\.g\. "
                                           r"runs=100\.$"),
                             ({"learners": ["nope"]}, r"unknown learner 'nope'"),
                             ({"horizon": 2**40}, r"^horizon=1099511627776 is beyond "),
                             ({"learners": ["ogd-full", "ogd-random-subset"],
                               "compare_to": "zzz"}, r"learner to compare with 'zzz'"),
                             ({"learners": ["ogd-full"], "grid": {"eta": [0.1, 0.2]},
                               "compare_to": "ogd-full"},
                              r"^compare_to='ogd-full' names none of the entries "
                              r"\['ogd-full \[eta=0.1\]', 'ogd-full \[eta=0.2\]'\] \(a learner "
                              r"with several grid points is one entry per point\); give one of "
                              r"them or 'best'\.$")):
        with pytest.raises(UsageError, match=message):
            oslr.Study(**{**SMALL, **changes}, out=str(out)).run(progress="none")
        assert not out.exists()


def test_study__a_folder_held_by_another_writer_is_refused(tmp_path):
    with atomic.FolderLock(tmp_path / "d", "--out"):
        with pytest.raises(atomic.FolderBusy, match=r"^out .*d is in use by pid "):
            oslr.Study(**SMALL, out=str(tmp_path / "d")).run(progress="none")


def test_study__from_a_toml_file_with_changes(tmp_path):
    (tmp_path / "s.toml").write_text('learners = ["ogd-full"]\nhorizon = 60\nruns = 3\n'
                                     'chunk = 20\n[problem_options]\nd = 16\n')
    study = oslr.Study.from_toml(tmp_path / "s.toml", seed=4)
    assert (study.learners, study.horizon, study.runs, study.seed) == (["ogd-full"], 60, 3, 4)
    # the default problem's options, those the file gives laid over them
    assert study.problem_options == {"d": 16, "k": 3, "sigma": 0.1, "design": "gaussian"}
    assert json.loads(json.dumps(study.to_dict()))["seed"] == 4
    assert "out" not in study.to_dict() and "comparator_k" not in study.to_dict()


def test_study__the_pieces_a_reader_of_the_log_and_the_files_meets(tmp_path, monkeypatch,
                                                                   capsys):
    import io

    from oslr import report, study

    # a bar on the given stream by default; one line per learner in the log
    saved = oslr.Study(**SMALL, out=str(tmp_path / "a")).run(plot=False)
    err = capsys.readouterr().err
    assert "study: 100%" in err and "  ogd-full: 1 grid point(s) x 3 runs in " in err
    stream = io.StringIO()
    bar = study.StudyProgress("bar", stream)
    bar.add(10)
    bar.for_learner("x")(10)
    bar.close()
    assert "study: 100%" in stream.getvalue()
    # the figure's axes reach the plot
    seen = []
    real = report.plot_regret
    monkeypatch.setattr(report, "plot_regret",
                        lambda *a, **k: seen.append(k.get("axes")) or real(*a, **k))
    oslr.Study(**SMALL, out=str(tmp_path / "b")).run(progress="none", axes="linear")
    assert seen == ["linear"]
    # a finished folder is refused at once, naming the argument
    with pytest.raises(ValueError, match=rf"^out {saved.path} already holds a finished oslr "):
        oslr.Study(**SMALL, out=str(saved.path)).run(progress="none")
    # without out: a folder of its own under oslr-results, named by the time
    monkeypatch.chdir(tmp_path)
    assert str(oslr.Study(**SMALL).folder()).startswith("oslr-results/run-")


def test_study__another_studys_unfinished_chunks_are_refused(tmp_path, monkeypatch):
    real = checkpoint.save
    interrupt_after_saves(monkeypatch, 1)
    with pytest.raises(KeyboardInterrupt):
        oslr.Study(**SMALL, out=str(tmp_path / "d")).run(progress="none")
    monkeypatch.setattr(checkpoint, "save", real)
    with pytest.raises(UsageError, match=r"holds the unfinished chunks of another study \(seed: "
                                         r"saved 0, now 1\)"):
        oslr.Study(**{**SMALL, "seed": 1}, out=str(tmp_path / "d")).run(progress="none")


def test_study__until_separated_with_t_intervals_spends_alpha_over_looks(tmp_path):
    # two looks of 5 runs: the t interval of look 2 at its share of alpha
    import numpy as np

    from oslr import stats

    two = {**SMALL, "learners": ["ogd-full", "ogd-random-subset"], "runs": 5}
    saved = oslr.Study(**two, until="separated", max_runs=10, normal=True,
                       out=str(tmp_path / "u")).run(progress="none", plot=False)
    until = saved.until.set_index("name")
    finals = saved.finals()
    assert saved.config["looks"] == 2  # t intervals need 10 runs: none at the first look
    best = until["reference"].iloc[0]
    other = next(n for n in finals if n != best)
    low, high = stats.confidence_sequence(finals[other] - finals[best], 2, 1.0 - 0.05 / 1)
    np.testing.assert_allclose([until.loc[other, "cs_low"], until.loc[other, "cs_high"]],
                               [low, high], rtol=1e-12)


def test_prepare__a_set_k_sizes_max_k_and_the_learners_own_prepare_sees_the_problem():
    from oslr.study import prepare

    study = oslr.Study(problem_options={"d": 8, "k": 2}, learners=["ogd-random-subset"],
                       horizon=60, runs=3, params={"k": 5}, chunk=20)
    _, _, plans = prepare(study)
    assert plans[0][0].options["max_k"] == 5
    with pytest.raises(ValueError, match=r"ftpl-oracle-subset needs a dataset problem .*problem "
                                         r"'sparse-linear' is synthetic"):
        prepare(oslr.Study(problem_options={"d": 8, "k": 2}, learners=["ftpl-oracle-subset"],
                           horizon=60, runs=3, params={}))


def test_check_compare__a_name_with_words_after_the_learner_is_unknown():
    from oslr.study import check_compare, prepare

    study = oslr.Study(problem_options={"d": 8, "k": 2}, learners=["ogd-full", "ogd-random-subset"],
                       horizon=60, runs=3, params={}, chunk=20, compare_to="ogd-full extra")
    _, _, plans = prepare(study)
    with pytest.raises(UsageError, match=r"unknown learner to compare with 'ogd-full extra'"):
        check_compare(study, plans)


def test_prepare__the_memory_check_counts_the_statistics_a_given_comparator_k_keeps(monkeypatch):
    # a9a has no k of its own: with comparator_k the exact comparator's d x d statistics are
    # kept, and a study they do not fit in is refused while it is being prepared; without one
    # a prediction learner has no regret to report, refused naming comparator_k
    from oslr import memory
    from oslr.study import prepare

    study = oslr.Study(problem="a9a", learners=["ogd-full"], horizon=100, runs=2)
    monkeypatch.setattr(memory, "_available_bytes", lambda device: 10**6)  # the plain state fits
    with pytest.raises(UsageError, match=r"^problem 'a9a' declares no sparsity .* give the "
                                         r"comparator's sparsity \(e\.g\. comparator_k=5\)\.$"):
        prepare(study)
    study.comparator_k = 3
    with pytest.raises(UsageError, match=r"^one run of this study needs about 8\.1 MiB on each "
                                         r"device"):
        prepare(study)


UNTIL = ("--until separated needs one assumption about the runs' differences of final regrets: "
         "--bounds LO,HI (any distribution within them), --variance V (any with variance <= V), "
         "or --normal (t intervals; not valid for skewed regrets).")


def test_check_compare__each_refusal_in_full_and_the_largest_cap():
    from types import SimpleNamespace

    from oslr.study import FLAGS, PYTHON, StudySettings, check_compare

    plans = [(SimpleNamespace(name="a"), [{}], None), (SimpleNamespace(name="b"), [{}], None)]

    def study(**given):
        return StudySettings(**{"runs": 10, **given})

    for given, message in [
        ({"compare_to": "zz"}, "unknown learner to compare with 'zz'; available: a, b, best."),
        ({"until": "separated", "bounds": (-1, 5), "variance": 2.0},
         "give --bounds or --variance, not both: bounds (a betting sequence) are the tighter "
         "where every difference is bounded."),
        ({"until": "separated", "bounds": (-1, 5)},
         "--bounds -1,5 with the best as reference: its pairs are taken either way round, so "
         "give symmetric bounds (-5, 5) or name a reference with --compare-to."),
        ({"until": "separated"}, UNTIL),
        ({"until": "separated", "max_runs": 2**31 + 1, "normal": True},
         "--max-runs 2147483649 is beyond 2^31 runs (run ids are int32); lower it (or the runs, "
         "whose 10 batches it defaults to)."),
        ({"until": "separated", "variance": 2.0, "normal": True}, UNTIL),
        ({"until": "separated", "runs": 1, "normal": True}, "--runs 1: until separated adds "
         "batches of this many runs; give 2 or more (10 is a good batch)."),
        ({"max_runs": 20}, "--max-runs caps --until separated; add --until separated or drop "
         "it."),
        ({"normal": True}, "--normal sets --until separated's intervals; add --until separated "
         "or drop it.")]:
        with pytest.raises(UsageError) as err:
            check_compare(study(**given), plans, FLAGS)
        assert str(err.value) == message
    with pytest.raises(UsageError) as err:  # from Python, in Python's names
        check_compare(study(normal=True), plans, PYTHON)
    assert str(err.value) == ("normal sets until separated's intervals; add until='separated' "
                              "or drop it.")
    assert check_compare(study(until="separated", max_runs=2**31, normal=True), plans,
                         FLAGS) == 2**31  # run ids 0 .. 2^31 - 1
