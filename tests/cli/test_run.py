"""`oslr run`: a study from the flags and a TOML file, played, written, resumed and refused in one
line (oslr.cli.run)."""

import json
import time as time_module
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from oslr import study as study_module
from oslr.cli import main
from oslr.cli import run as cli_run
from tests.cli.helpers import _study, _small, _SMALL, _killed_after_two_chunks, _oslr, _finishes_meanwhile


@pytest.mark.slow  # behind -m slow to keep the default run under 5 min
def test_run__small_study_writes_labelled_results(tmp_path, capsys):
    out = tmp_path / "study"
    code = main(["run", "--horizon", "120", "--runs", "4", "--grid", "eta=0.01,0.05",
                 "--out", str(out), "--json", "--no-progress"])
    assert code == 0
    summary = json.loads(capsys.readouterr().out)
    primary = [row for row in summary if row["primary"]]
    assert {(r["learner"], r["params"]) for r in primary} == {
        ("ogd-full", "eta=0.01"), ("ogd-full", "eta=0.05"),
        ("ogd-random-subset", "k=4, eta=0.01"), ("ogd-random-subset", "k=4, eta=0.05")}
    assert all(r["ci_low"] <= r["mean"] <= r["ci_high"] for r in primary)
    for name in ("summary.csv", "curves.csv", "runs.csv", "config.json", "regret.png"):
        assert (out / name).is_file()
    curves = pd.read_csv(out / "curves.csv")
    assert curves["t"].max() == 120
    runs = pd.read_csv(out / "runs.csv")
    assert len(runs[runs.metric == "regret"]) == 4 * 4


def test_run__toml_config(tmp_path, capsys):
    cfg = tmp_path / "study.toml"
    cfg.write_text(
        'problem = "linear-bandit"\nlearners = ["eps-greedy"]\nhorizon = 80\nruns = 3\n'
        '[problem_options]\nd = 4\nn_arms = 5\n[grid]\neps = [0.05, 0.2]\n'
    )
    argv = ["run", "--config", str(cfg), "--out", str(tmp_path / "o"), "--json",
            "--no-progress", "--no-plot"]
    assert main(argv) == 0
    summary = json.loads(capsys.readouterr().out)
    assert {r["metric"] for r in summary} == {"pseudo_regret"}
    assert len(summary) == 2
    config = json.loads((tmp_path / "o" / "config.json").read_text())  # provenance
    assert config["command"] == "oslr " + " ".join(argv)
    assert config["runtime"]["x64"] is False and config["runtime"]["backend"] == "cpu"


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--learners", "nope"], "unknown learner 'nope'; available:"),
        (["--problem", "nope"], "unknown problem 'nope'"),
        (["--k", "40"], "option k=40 is out of range [1, d=16]"),
        (["--runs", "0"], "--runs 0 must be a positive integer, e.g. --runs 100."),
        (["--horizon", "-5"], "--horizon -5 must be a positive integer"),
        (["--chunk", "0"], "--chunk 0 must be a positive integer"),
        (["--seed", "-1"], "seed must be an integer in [0, 2^32), got -1"),
        (["--comparator-k", "0"], "--comparator-k 0 must be a positive integer"),
        (["--comparator-k", "17"], "comparator_k=17 must satisfy 1 <= k <= d=16"),
        (["--set", "eta=abc"], "parameter eta='abc'"),
        (["--grid", "eta=0.1,abc"], "eta"),
        (["--set", "k=0"], "k=[0] is out of range"),
        (["--grid", "eta=0.1,-1"], "eta=[-1.0] is out of range"),
        (["--set", "eta=nan"], "NaN"),
        (["--grid", "bogus=1"], "'bogus' is not a parameter"),
        (["--problem", "mnist35", "--horizon", "20000"], "allow cycling"),
        (["--problem", "linear-bandit", "--learners", "ogd-full"], "cannot run on problem"),
        (["--problem", "a9a", "--d", "5"], "does not take option"),
        (["--learners", "ogd-ful"], "did you mean 'ogd-full'?"),
        (["--problem", "sparse-linaer"], "did you mean 'sparse-linear'?"),
        (["--learners", "ogd-random-subset", "--set", "k=2.5"],
         "k=2.5 must be a whole number (it counts something); give e.g. k=2 or k=3. Change it "
         "with --set k."),
        (["--learners", "ogd-random-subset", "--grid", "k=2,3.5"], "k=3.5 must be a whole"),
        (["--d", "3", "--k", "5"], "option k=5 is out of range [1, d=3] (sparsity of w* and of "
         "the comparator). Change it with --k."),
        (["--problem-option", "k=5", "--d", "3"], "option k=5 is out of range [1, d=3] (sparsity "
         "of w* and of the comparator). Change it with --problem-option k."),
        (["--d", "3", "--learners", "ogd-random-subset", "--set", "k=5"],
         "out of range [1, 3]. (k: features queried per round) Change it with --set k."),
        (["--d", "3", "--learners", "foster-hedge"], "came from the problem's k=3: give another "
         "with --set k (or the problem's with --problem-option k)."),
        (["--problem", "linear-bandit"], "no learners named, and the default ones (ogd-full, "
         "ogd-random-subset) cannot run on problem 'linear-bandit'"),
        (["--learners", "ogd-full", "--compare-to", "best"], "--compare-to and --until compare "
         "two learners or grid points or more; this study has one (add learners or a grid)."),
        (["--compare-to", "ogd-ful"], "unknown learner to compare with 'ogd-ful'; did you mean "
         "'ogd-full'?"),
        (["--until", "separated", "--runs", "1"], "--runs 1: until separated adds batches of "
         "this many runs; give 2 or more"),
        (["--until", "separated", "--runs", "10", "--max-runs", "5"], "--max-runs 5 is below "
         "one batch of --runs 10"),
        (["--max-runs", "50"], "--max-runs caps --until separated"),
        (["--seed", "4294967296"], "seed must be an integer in [0, 2^32), got 4294967296"),
        (["--until", "separated", "--runs", "2", "--max-runs", "1"], "--max-runs 1 is below "
         "one batch of --runs 2"),
    ],
)
def test_run__bad_input_gets_a_clear_error(argv, message, capsys, tmp_path):
    out = tmp_path / "out"
    assert main(["run", "--out", str(out), "--no-progress", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("oslr: error:")
    assert message in err
    assert not out.exists()  # --out is made only once the study is known to be valid


@pytest.mark.parametrize(
    "toml, message",
    [
        ('learners = "ogd-full"\n', 'learners = "ogd-full" must be a list of learner names, e.g. '
         'learners = ["ogd-full"].'),
        ("[grid]\nk = 3\n", "[grid] k = 3 must be a non-empty list of values, e.g. [grid] k = [3]."),
        ("horizon = 2.5\n", "horizon = 2.5 must be a positive integer, e.g. horizon = 100."),
        ("learners = [\n", "not valid TOML"),
        ("problem_options = 3\n", "problem_options must be a table"),
        ("", "no settings in it; give at least one key"),
        ("max_memory = '4G'\ncomparator_radius = 0\n", "comparator_radius = 0 must be a finite "
         "number > 0"),
        ("until = 'separated'\nruns = 2\n", "study.toml: until separated needs one assumption"),
        ("horizont = 10\n", "unknown key(s) ['horizont']; a study's keys: ['problem', "),
        ('problem = "linear-bandit"\n', "no learners named, and the default ones (ogd-full, "
         "ogd-random-subset) cannot run on problem 'linear-bandit' (bandit): name some with "),
    ],
)
def test_run__bad_toml_names_the_file_key_and_value(toml, message, tmp_path, capsys):
    cfg = tmp_path / "study.toml"
    cfg.write_text(toml)
    assert main(["run", "--config", str(cfg), "--out", str(tmp_path / "o"), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(cfg) in err and message in err, err


def test_run__counts_accept_integral_floats(tmp_path):
    from oslr.cli import make_parser

    args = make_parser().parse_args(["run", "--horizon", "1e3", "--runs", "2.0", "--chunk", "500"])
    assert (args.horizon, args.runs) == (1000, 2)
    with pytest.raises(SystemExit):
        make_parser().parse_args(["run", "--horizon", "2.5"])
    cfg = tmp_path / "study.toml"
    cfg.write_text("horizon = 1e4\n")
    study = _study("--config", str(cfg))
    assert study.horizon == 10_000 and isinstance(study.horizon, int)


@pytest.mark.slow  # an in-process study; keeps the default run under 5 min
def test_run__default_study_fits_a_small_d(tmp_path, capsys):
    for d, k in [(3, 3), (2, 2), (16, 4)]:
        study = _study("--d", str(d))
        assert study.params["k"] == k and study.problem_options["k"] == min(3, d)
    study = _study("--d", "3", "--set", "k=2")
    assert study.params["k"] == 2  # the user's own k is left alone
    assert main(["run", "--d", "3", "--runs", "2", "--horizon", "20", "--out", str(tmp_path / "o"),
                 "--json", "--no-progress", "--no-plot"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {r["params"] for r in rows if r["learner"] == "ogd-random-subset"} == {"k=3"}


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs Linux's /proc")
def test_run__folder_where_no_file_can_be_created_is_refused_before_any_work(capsys, monkeypatch):
    import oslr

    monkeypatch.setattr(oslr, "simulate", lambda *a, **k: pytest.fail("simulated anyway"))
    assert main(["run", "--runs", "2", "--horizon", "20", "--out", "/proc/oslr-out"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--out /proc/oslr-out: cannot write there" in err
    assert err.endswith("; give a folder you can write to.\n")


def test_run__a_study_beyond_memory_is_refused_at_once_with_the_size(tmp_path, capsys,
                                                                     monkeypatch):
    from oslr import memory

    disks = []
    monkeypatch.setattr(memory, "disk_free", lambda where: disks.append(where) or 10 * 2**30)
    out = tmp_path / "o"
    assert main(["run", "--runs", "100000000", "--horizon", "100", "--out", str(out),
                 "--no-progress"]) == 2  # shapes only: nothing is allocated or compiled
    err = capsys.readouterr().err.splitlines()
    # more runs than fit at once are played in blocks, their per-run results written to the
    # disk of --out: they must fit there or on the host
    assert len(err) == 1 and err[0].startswith(
        "oslr: error: the per-run results of this study (100,000,000 runs x grid points) need "
        "about ")
    assert f"GiB it may use on the host and the 8.0 GiB it may use on the disk of {out};" in err[0]
    assert disks == [str(out)]
    assert not out.exists()  # refused before --out is made


@pytest.mark.slow  # keeps the default run under 5 min (CI runs it with -m slow)
def test_run__one_run_gives_a_result_with_no_interval(tmp_path, capsys):
    import time

    out = tmp_path / "o"
    t0 = time.perf_counter()
    assert main(["run", "--learners", "ogd-full", "--runs", "1", "--horizon", "30", "--out",
                 str(out), "--no-progress"]) == 0
    elapsed = time.perf_counter() - t0
    info = json.loads((out / "config.json").read_text())["results"][0]["info"]
    assert 0 <= info["wall_seconds"] <= elapsed + 0.01  # a share of this call, not a clock
    rows = json.loads((out / "summary.json").read_text())
    assert rows and all(r["ci_low"] is None and r["ci_high"] is None and r["sem"] is None
                        and r["mean"] is not None for r in rows)
    assert (out / "regret.png").is_file()
    printed = capsys.readouterr().out  # the primary regret, then the others (R3 here)
    assert "\nFinal regret at T=30 (mean and 95% t-interval over runs):\n" in printed
    assert "\nOther regret quantities:\n" in printed and "regret_wstar" in printed


@pytest.mark.slow  # keeps the default run under 5 min (CI runs it with -m slow)
def test_run__ctrl_c_says_what_was_saved_and_a_rerun_resumes(tmp_path, capsys, monkeypatch):
    study = ["run", "--learners", "ogd-full", "--runs", "3", "--horizon", "60", "--chunk", "20",
             "--no-progress", "--no-plot", "--json"]
    assert main([*study, "--out", str(tmp_path / "whole")]) == 0
    whole = json.loads(capsys.readouterr().out)
    out = tmp_path / "cut"
    _killed_after_two_chunks(monkeypatch, [*study, "--out", str(out)])
    err = capsys.readouterr().err.strip().splitlines()
    assert err[0].startswith("oslr run:") and err[-1].startswith("oslr: interrupted; every "
                                                                 "finished chunk is saved in")
    assert len([line for line in err if line]) == 2 and "same --out) to resume" in err[-1]
    assert not (out / "summary.json").exists() and (out / ".checkpoints").is_dir()
    assert main([*study, "--out", str(out)]) == 0
    cap = capsys.readouterr()
    assert "resuming" in cap.err and json.loads(cap.out) == whole
    assert not (out / ".checkpoints").exists()
    assert main([*study, "--out", str(out)]) == 2  # a finished study is not overwritten
    assert capsys.readouterr().err == (f"oslr: error: --out {out} already holds a finished "
                                       "oslr run study; it is never overwritten: give another "
                                       "--out (a new or an unfinished folder).\n")


def test_run__output_folder_under_a_file_is_refused_before_any_work(tmp_path, capsys,
                                                                     monkeypatch):
    import oslr

    (tmp_path / "afile").write_text("x")
    monkeypatch.setattr(oslr, "simulate", lambda *a, **k: pytest.fail("simulated anyway"))
    assert main(["run", "--out", str(tmp_path / "afile" / "sub"), "--no-progress"]) == 2
    assert "exists and is not a folder" in capsys.readouterr().err


@pytest.mark.slow  # behind -m slow to keep the default run under 5 min
def test_run__set_values_label_rows_and_the_plot_title_names_the_study(tmp_path, capsys):
    out = tmp_path / "o"
    assert main(["run", "--learners", "ogd-random-subset", "--set", "k=6", "--horizon", "40",
                 "--runs", "2", "--out", str(out), "--json", "--no-progress"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {r["params"] for r in rows} == {"k=6"}
    assert set(pd.read_csv(out / "runs.csv")["params"]) == {"k=6"}
    from oslr.report import plot_title

    class R:  # the fields plot_title reads
        problem, info, comparator_k, horizon, n_runs = "sparse-linear", {"d": 16}, 3, 40, 2

    assert plot_title([R()]) == "sparse-linear (d=16, k=3), T=40: mean over 2 runs, 95% bands"


def test_run__learners_flag_keeps_the_default_problem_without_its_k(tmp_path, capsys):
    # the default study's k = 4 belongs to the default study: ogd-full alone (no k) runs
    assert main(["run", "--learners", "ogd-full", "--horizon", "30", "--runs", "2", "--out",
                 str(tmp_path), "--json", "--no-progress", "--no-plot"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {r["learner"] for r in rows} == {"ogd-full"}


@pytest.mark.slow  # an in-process study; keeps the default run under 5 min
def test_run__compare_to_pairs_the_learners_on_the_same_runs(tmp_path, capsys):
    # ogd-full sees every feature: its regret is below ogd-random-subset's in every run
    out = tmp_path / "o"
    assert main(["run", "--d", "6", "--k", "2", "--runs", "6", "--horizon", "300", "--out",
                 str(out), "--no-progress", "--no-plot", "--compare-to", "ogd-full"]) == 0
    text = capsys.readouterr().out
    assert "Paired comparison with ogd-full on the same 6 runs" in text
    table = pd.read_csv(out / "compare.csv").set_index("name")
    sub = table.loc["ogd-random-subset"]
    assert sub["verdict"] == "worse" and sub["behind"] == 6 and sub["diff_low"] > 0
    # recomputed from the per-run file: the paired t interval of the final regrets
    from oslr import stats

    runs = pd.read_parquet(out / "runs.parquet")
    last = runs[(runs["metric"] == "regret") & (runs["t"] == 300)]
    a, b = (last[last["learner"] == n].sort_values("run")["value"].to_numpy()
            for n in ("ogd-random-subset", "ogd-full"))
    pr = stats.paired(a, b)
    assert (sub["diff"], sub["diff_low"], sub["diff_high"]) == pytest.approx(
        (pr.diff, pr.ci_low, pr.ci_high))
    assert sorted(set(runs["run"])) == list(range(6)) and set(runs["t"]) >= {1, 300}
    # every run's running sums at T too: its loss is its regret plus the comparator's loss
    loss = runs[runs["metric"] == "sum_loss"]
    assert len(loss) == 12 and (loss["t"] == 300).all() and (loss["value"] > 0).all()
    assert {"sum_queries", "sum_loss_wstar"} <= set(runs["metric"])


@pytest.mark.slow  # an in-process study; keeps the default run under 5 min
def test_run__until_separated_stops_once_decided_and_is_right(tmp_path, capsys):
    out = tmp_path / "o"
    # batches of 2 runs: the first look's interval (1 degree of freedom) cannot decide
    assert main(["run", "--d", "6", "--k", "2", "--runs", "2", "--horizon", "300", "--out",
                 str(out), "--no-progress", "--no-plot", "--until", "separated",
                 "--max-runs", "40", "--normal"]) == 0
    captured = capsys.readouterr()
    text = captured.out
    assert "  look 1: 2 runs; undecided: ogd-random-subset\n" in captured.err  # each look said
    until = pd.read_csv(out / "until.csv")
    assert until["decided"].all() and until["verdict"].tolist() == ["worse"]
    assert until["name"].tolist() == ["ogd-random-subset"]
    assert until["reference"].tolist() == ["ogd-full"]
    runs = int(until["runs"].iloc[0])
    assert 4 <= runs < 40 and runs % 2 == 0  # more than one look, before the cap
    assert f"Decided after {runs} of at most 40 runs" in text
    config = json.loads((out / "config.json").read_text())
    assert config["runs"] == runs and config["looks"] == runs // 2
    # the batches are consecutive runs of the seed: the same finals as one study of that size
    whole = tmp_path / "whole"
    assert main(["run", "--d", "6", "--k", "2", "--runs", str(runs), "--horizon", "300",
                 "--out", str(whole), "--no-progress", "--no-plot"]) == 0
    pd.testing.assert_frame_equal(pd.read_csv(out / "runs.csv"), pd.read_csv(whole / "runs.csv"))


def test_run__a_second_writer_is_refused_naming_the_holder(tmp_path, capsys):
    from oslr.atomic import FolderLock

    out = tmp_path / "d"
    with FolderLock(out, "--out"):
        assert main([*_SMALL, "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and f"--out {out} is in use by pid " in err
    assert not (out / "config.json").exists() and not (out / ".checkpoints").exists()
    assert main([*_SMALL, "--out", str(out)]) == 0  # released: the study runs


def test_run__another_study_in_the_folder_is_refused_and_its_chunks_kept(tmp_path, capsys,
                                                                         monkeypatch):
    out = tmp_path / "d"
    _killed_after_two_chunks(monkeypatch, [*_SMALL, "--out", str(out)])
    capsys.readouterr()
    saved = sorted(p.name for p in (out / ".checkpoints").rglob("*"))
    assert main([*_small("ogd-random-subset"), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "holds the unfinished chunks of another study (learners: saved ['ogd-full'], now " \
           "['ogd-random-subset'])" in err and "resuming" not in err
    assert err.rstrip().endswith("to drop them.")
    assert sorted(p.name for p in (out / ".checkpoints").rglob("*")) == saved
    assert main([*_small(runs=4), "--out", str(out)]) == 2
    assert "runs: saved 3, now 4" in capsys.readouterr().err
    # the chunk size may change: the same study resumes
    assert main([*_small(chunk=30), "--out", str(out)]) == 0
    assert "resuming" in capsys.readouterr().err


def test_run__a_new_study_says_nothing_of_resuming(tmp_path, capsys):
    assert main([*_SMALL, "--out", str(tmp_path / "d")]) == 0
    assert "resuming" not in capsys.readouterr().err


def test_run__result_files_are_written_crash_safely_config_last(tmp_path, capsys, monkeypatch):
    """Every result file goes through oslr.atomic, config.json (the "finished" mark) after the
    others, and the checkpoints are removed only after the folder is flushed."""
    import shutil

    from oslr import atomic

    order = []
    real_write, real_fsync, real_rm = atomic.write_atomic, atomic.fsync_dir, shutil.rmtree
    monkeypatch.setattr(atomic, "write_atomic",
                        lambda p, w: order.append(Path(p).name) or real_write(p, w))
    monkeypatch.setattr(atomic, "fsync_dir",
                        lambda d: order.append(("fsync", Path(d).name)) or real_fsync(d))
    monkeypatch.setattr(shutil, "rmtree", lambda p, **kw: order.append(("rm", Path(p).name))
                        or real_rm(p, **kw))
    out = tmp_path / "d"
    tables = [a for a in _small("ogd-full,ogd-random-subset") if a != "--json"]  # printed
    assert main([*tables, "--compare-to", "ogd-full", "--out", str(out)]) == 0
    results = [o for o in order if isinstance(o, str) and not o.startswith("checkpoint-")
               and o != "study.json"]
    results = [o for o in results if o != ".oslr.lock"]  # the holder's line, first
    assert results == ["summary.csv", "summary.json", "curves.csv", "runs.csv", "runs.parquet",
                       "compare.csv", "manifest.json", "config.json"]
    tail = order[order.index("config.json"):]
    assert tail.index(("fsync", "d")) < tail.index(("rm", ".checkpoints"))
    assert sorted(p.name for p in out.iterdir() if not p.name.startswith(".")) == sorted(results)
    # the comparison printed as it was written, its numbers to 4 significant digits
    printed = capsys.readouterr().out.split("Paired comparison with")[1]
    row = pd.read_csv(out / "compare.csv").set_index("name").loc["ogd-random-subset"]
    assert f" {row['diff']:.4g} " in printed and f" {row['diff_low']:.4g} " in printed


@pytest.mark.slow
def test_two_oslr_run_into_one_folder__the_second_is_refused_and_the_first_finishes(tmp_path):
    import time

    out = tmp_path / "d"
    study = ["run", "--learners", "ogd-full", "--runs", "64", "--horizon", "100000", "--chunk",
             "2000", "--no-progress", "--no-plot", "--json", "--out", str(out)]
    first = _oslr([*study, "--seed", "0"])
    deadline = time.time() + 120
    while not list((out / ".checkpoints").rglob("checkpoint-*.npz")):  # the first is running
        assert time.time() < deadline and first.poll() is None
        time.sleep(0.05)
    second = _oslr([*study, "--seed", "1"])
    _, err2 = second.communicate(timeout=300)
    assert first.poll() is None, "the first study ended before the second asked: lengthen it"
    assert second.returncode == 2, err2
    lines = [line for line in err2.splitlines() if line.startswith("oslr")]
    assert lines[-1].startswith(f"oslr: error: --out {out} is in use by pid {first.pid} on "), err2
    assert "Traceback" not in err2
    outs, err1 = first.communicate(timeout=600)
    assert first.returncode == 0, err1
    rows = json.loads(outs)
    assert {r["learner"] for r in rows} == {"ogd-full"}
    config = json.loads((out / "config.json").read_text())
    assert config["seed"] == 0 and not (out / ".checkpoints").exists()
    assert set(pd.read_csv(out / "runs.csv")["run"]) == set(range(64))
    # the second, run again, is told the folder holds a finished study
    again = _oslr([*study, "--seed", "1"])
    _, err = again.communicate(timeout=300)
    assert again.returncode == 2 and "already holds a finished oslr run study" in err, err


def test_run__until_separated_stops_at_the_cap_exactly(tmp_path, capsys):
    # batches of 2, --max-runs 4: look 1 (2 runs; one degree of freedom cannot decide), look 2
    # (4 runs), and no third batch, which would pass the cap, whatever look 2 decided
    out = tmp_path / "o"
    assert main(["run", "--d", "6", "--k", "2", "--runs", "2", "--horizon", "100", "--out",
                 str(out), "--no-progress", "--no-plot", "--until", "separated",
                 "--max-runs", "4", "--compare-to", "ogd-full", "--bounds=-1000,1000"]) == 0
    config = json.loads((out / "config.json").read_text())
    assert config["runs"] == 4 and config["looks"] == 2 and config["max_runs"] == 4
    assert config["until"] == "separated" and config["batch_runs"] == 2
    assert set(pd.read_csv(out / "runs.csv")["run"]) == {0, 1, 2, 3}
    assert pd.read_csv(out / "until.csv")["runs"].tolist() == [4]
    assert pd.read_csv(out / "until.csv")["method"].tolist() == ["betting"]  # --bounds given
    assert config["bounds"] == [-1000.0, 1000.0] and config["normal"] is False
    assert pd.read_csv(out / "until.csv")["assumes"].tolist() == [
        "every difference within the bounds given"]
    # optionally stopped runs: only the anytime-valid verdicts of until.csv are written, no
    # fixed-sample compare.csv and no verdict columns in the summary
    assert not (out / "compare.csv").exists()
    assert "verdict" not in pd.read_csv(out / "summary.csv")
    captured = capsys.readouterr()
    assert "Paired comparison with" not in captured.out
    assert "  look 1: 2 runs; undecided: ogd-random-subset\n" in captured.err  # each look said
    assert ("\nUntil separated (anytime-valid 95% intervals: betting confidence sequence, "
            "assuming every difference within the bounds given; Bonferroni over the "
            "comparisons; batches of 2 runs): 2 look(s), 4 runs.\n") in captured.out


def test_run__until_separated_with_a_variance_bound_uses_the_catoni_sequence(tmp_path):
    out = tmp_path / "o"
    assert main(["run", "--d", "6", "--k", "2", "--runs", "2", "--horizon", "100", "--out",
                 str(out), "--no-progress", "--no-plot", "--until", "separated",
                 "--max-runs", "2", "--compare-to", "ogd-full", "--variance", "1e6"]) == 0
    config = json.loads((out / "config.json").read_text())
    assert config["variance"] == 1e6 and config["bounds"] is None
    until = pd.read_csv(out / "until.csv")
    assert until["method"].tolist() == ["catoni"] and until["verdict"].tolist() == ["undecided"]


@pytest.mark.slow  # the seed bounds are pinned in test_checks; this runs a study
def test_run__the_largest_seed_and_a_cap_of_one_batch_are_accepted(tmp_path, capsys):
    out = tmp_path / "o"
    assert main([*_small("ogd-full,ogd-random-subset", runs=2, horizon=30, chunk=30), "--seed",
                 "4294967295", "--until", "separated", "--max-runs", "2", "--normal", "--out",
                 str(out)]) == 0
    config = json.loads((out / "config.json").read_text())
    assert config["seed"] == 2**32 - 1 and config["runs"] == 2 and config["looks"] == 1


def test_print_until__each_comparison_and_what_was_saved(capsys):
    from oslr.cli.run import _print_until

    decision = pd.DataFrame([
        {"name": "a", "decided": True, "verdict": "better", "reference": "b", "diff": -1.5,
         "cs_low": -2.0, "cs_high": -1.0},
        {"name": "c", "decided": False, "verdict": "", "reference": "b", "diff": 0.1,
         "cs_low": -1.0, "cs_high": 1.2}]).assign(method="catoni", assumes="what is assumed")
    _print_until(decision, 3, 8, 64)
    out = capsys.readouterr().out
    assert "(anytime-valid 95% intervals: Catoni-style sequence, assuming what is assumed;" in out
    assert "batches of 8 runs): 3 look(s), 24 runs." in out
    assert "  a: better than b: difference -1.5 (-2, -1)" in out
    assert "  c: undecided: difference 0.1 (-1, 1.2)" in out
    assert "Stopped at the cap of 64 runs (--max-runs)" in out
    _print_until(decision.iloc[:1], 2, 8, 64)
    assert "Decided after 16 of at most 64 runs: 75% of the fixed-size study's run-rounds " \
           "saved." in capsys.readouterr().out


def test_set__one_value_each_and_never_also_swept(capsys):
    assert main(["run", "--set", "eta=0.01,0.1"]) == 2
    assert capsys.readouterr().err.strip() == (
        "oslr: error: --set eta=0.01,0.1 gives 2 values; --set takes one (to sweep them, use "
        "--grid eta=0.01,0.1).")
    assert main(["run", "--set", "k=3", "--grid", "k=2,4"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == ("oslr: error: --set k and --grid k: 'k' both fixed to one value and swept; "
                   "give each parameter one or the other.")


def test_set__a_config_param_that_is_also_swept_is_refused(tmp_path, capsys):
    cfg = tmp_path / "s.toml"
    cfg.write_text('learners = ["ogd-full"]\n[params]\neta = 0.1\n')
    assert main(["run", "--config", str(cfg), "--grid", "eta=0.01,0.1"]) == 2
    assert capsys.readouterr().err == (f"oslr: error: {cfg}: [params] eta and --grid eta: 'eta' "
                                       "both fixed to one value and swept; give each parameter "
                                       "one or the other.\n")


@pytest.mark.parametrize("argv, message", [
    (["--learners", "ogd-full,ogd-full"],
     "learner(s) ['ogd-full'] named twice in --learners; name each once (to compare settings "
     "of one learner, sweep them with --grid)."),
    (["--grid", "eta=0.01,0.0100001"],
     "--grid eta values [0.01, 0.0100001] all print as 'eta=0.01' (results are labelled to 4 "
     "significant digits): give each value once, or values that differ in their first 4 "
     "digits."),
    (["--set", "eta=1e40"],
     "--set eta=1e+40 is beyond float32's largest number (3.403e+38), in which the learners "
     "compute; give a smaller value."),
    (["--grid", "eta=0.1,-1e39"],
     "--grid eta=-1e+39 is beyond float32's largest number (3.403e+38), in which the learners "
     "compute; give a smaller value."),
])
def test_run__refused_before_any_simulation(argv, message, capsys, tmp_path):
    assert main(["run", *argv, "--out", str(tmp_path / "o")]) == 2
    assert capsys.readouterr().err == f"oslr: error: {message}\n"
    assert not (tmp_path / "o").exists()


def test_run__a_binary_config_file_is_named_as_such(tmp_path, capsys):
    cfg = tmp_path / "study.toml"
    cfg.write_bytes(b"horizon = 5\n\xff\xfe")
    assert main(["run", "--config", str(cfg)]) == 2
    assert capsys.readouterr().err == (f"oslr: error: {cfg}: not a TOML text file (byte 0xff at "
                                       "position 12 is not UTF-8).\n")


def test_run__help_names_every_design():
    from oslr.cli import make_parser
    from oslr.problems.synthetic import DESIGNS

    run = make_parser()._subparsers._group_actions[0].choices["run"]
    design = next(a for a in run._actions if a.dest == "design")
    assert all(name in design.help for name in DESIGNS)


def test_note_wstar_only__one_line_when_the_comparator_did_not_fit():
    import io
    from types import SimpleNamespace

    from oslr.cli.run import _note_wstar_only

    def res(name, family, metrics):
        return SimpleNamespace(learner=name, family=family, info={"d": 100000},
                               regret_curves=lambda: dict.fromkeys(metrics))

    log = io.StringIO()
    _note_wstar_only([res("ogd-full", "prediction", ["regret_wstar"]),
                      res("pege", "bandit", ["pseudo_regret"]),
                      res("ftpsl", "prediction", ["regret", "regret_wstar"])], log)
    assert log.getvalue() == (
        "note: the regret of ogd-full is against the true w* (regret_wstar), not the best "
        "k-sparse comparator in hindsight: its d x d statistics (d=100000) for every run and "
        "checkpoint do not fit in 512 MB; fewer --runs or a smaller d bring it back.\n")
    log = io.StringIO()
    _note_wstar_only([res("ftpsl", "prediction", ["regret", "regret_wstar"])], log)
    assert log.getvalue() == ""


def test_run__without_out_the_same_command_finds_its_unfinished_folder(tmp_path, monkeypatch):

    monkeypatch.chdir(tmp_path)
    study = {"problem": "sparse-linear", "runs": 4, "out": None, "_default_learners": "x"}
    assert study_module.unfinished_default(study) is None  # nothing saved yet
    older, newer = (tmp_path / "oslr-results" / f"run-2026010{i}-000000" for i in (1, 2))
    for folder in (older, newer):
        (folder / study_module.CHECKPOINTS).mkdir(parents=True)
        (folder / study_module.CHECKPOINTS / "study.json").write_text(json.dumps(
            study_module.identity({**study, "chunk": 7})))  # the chunk may change on resuming
    assert study_module.unfinished_default(study) == Path("oslr-results") / newer.name
    (newer / "config.json").write_text("{}")  # finished: not resumed
    assert study_module.unfinished_default(study) == Path("oslr-results") / older.name
    assert study_module.unfinished_default({**study, "runs": 5}) is None  # another study


def test_run__a_static_k_given_with_set_is_not_blamed_on_the_problem(capsys):
    assert main(["run", "--d", "6", "--learners", "foster-hedge", "--set", "k=9"]) == 2
    assert capsys.readouterr().err == (
        "oslr: error: foster-hedge needs a static sparsity 1 <= k <= d - 2 = 4 (its query budget "
        "k' >= k + 2 must fit in d=6); got k=9.\n")


def test_run__a_process_other_than_0_takes_no_lock_and_writes_nothing(tmp_path, monkeypatch):
    from oslr import atomic, cli

    locked = []
    monkeypatch.setattr(cli.run, "_start_distributed", lambda args: 1)
    monkeypatch.setattr(atomic.FolderLock, "acquire", lambda self: locked.append(self))
    out = tmp_path / "out"
    assert main(["run", "--learners", "ogd-full", "--d", "4", "--k", "2", "--horizon", "5",
                 "--runs", "2", "--out", str(out), "--no-plot", "--no-progress"]) == 0
    assert locked == []  # process 0 holds the folder's lock and writes the files
    assert sorted(p.name for p in out.iterdir()) == [study_module.CHECKPOINTS]


def test_run__import_loads_the_plugin_before_the_study(tmp_path, monkeypatch, capsys):
    import sys

    (tmp_path / "oslr_test_plugin_run.py").write_text("LOADED = True\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "oslr_test_plugin_run", raising=False)
    assert main(["run", "--import", "oslr_test_plugin_run", "--runs", "0"]) == 2
    assert "oslr_test_plugin_run" in sys.modules


def test_run__the_study_reaches_simulate(tmp_path, monkeypatch):
    import oslr

    class Stop(Exception):
        pass

    seen = {}

    def spy(*args, **kwargs):
        seen.update(kwargs)
        raise Stop

    monkeypatch.setattr(oslr, "simulate", spy)
    with pytest.raises(Stop):
        main(["run", "--learners", "ogd-full", "--horizon", "30", "--runs", "3", "--seed", "5",
              "--comparator-k", "2", "--out", str(tmp_path / "o"), "--no-progress",
              "--no-plot"])
    assert (seen["horizon"], seen["n_runs"], seen["seed"], seen["comparator_k"],
            seen["run_offset"]) == (30, 3, 5, 2, 0)


def test_run__without_out_a_folder_named_by_the_time(tmp_path, monkeypatch):

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(time_module, "strftime", lambda fmt: fmt.replace("%Y%m%d-%H%M%S",
                                                                      "20261129-014500"))
    assert main(["run", "--learners", "ogd-full", "--d", "4", "--k", "2", "--horizon", "5",
                 "--runs", "2", "--no-plot", "--no-progress"]) == 0
    assert [p.name for p in (tmp_path / "oslr-results").iterdir()] == ["run-20261129-014500"]


def test_run__distributed_needs_out(capsys):
    assert main(["run", "--distributed", "--num-processes", "2", "--process-id", "0"]) == 2
    assert capsys.readouterr().err == (
        "oslr: error: --distributed needs --out: every process must name the same folder "
        "(without it each would pick its own oslr-results/run-<time>).\n")


def test_simulate__a_progress_function_gets_each_chunks_rounds(tmp_path):
    import oslr

    learner, params = oslr.make("ogd-full", d=4)
    problem, pp = oslr.make_problem("sparse-linear", d=4, k=2)
    seen = []
    oslr.simulate(learner, problem, params, pp, horizon=25, n_runs=2, chunk_size=10,
                  progress=seen.append, checkpoint_path=tmp_path / "ck")
    assert seen == [10, 10, 5]
    seen.clear()  # resumed from the last chunk: its rounds count as done at once
    oslr.simulate(learner, problem, params, pp, horizon=25, n_runs=2, chunk_size=10,
                  progress=seen.append, checkpoint_path=tmp_path / "ck")
    assert seen == [25]


def test_run__a_grid_over_a_static_k_names_the_fix(capsys):
    assert main(["run", "--learners", "foster-hedge", "--grid", "k=2,3"]) == 2
    assert capsys.readouterr().err == (
        "oslr: error: --grid k: learner 'foster-hedge' enumerates k-subsets, so its k is static: "
        "run one study per k (--set k) instead of a grid over k.\n")


@pytest.mark.parametrize("argv, match", [
    (["--bounds=-5,5"], "--bounds sets --until separated's intervals"),
    (["--until", "separated", "--bounds", "5,-5"], "give finite LO < HI"),
    (["--until", "separated", "--bounds", "1,2,3"], "give two numbers LO,HI"),
    (["--until", "separated", "--bounds=-inf,1"], "give finite LO < HI"),
    (["--variance", "4"], "--variance sets --until separated's intervals; add --until "
                          "separated or drop it."),
    (["--compare-to", "best", "--max-runs", "4"], "--max-runs caps --until separated"),
    (["--compare-to", "ogd-full typo"], "'ogd-full typo'"),
    (["--until", "separated", "--variance", "0"], "give a finite number > 0"),
    (["--until", "separated", "--variance", "inf"], "give a finite number > 0"),
    (["--until", "separated", "--variance", "x"], "'x': give a number"),
    (["--until", "separated", "--variance", "4", "--bounds=-5,5"], "not both"),
    (["--until", "separated"], "oslr: error: --until separated needs one assumption about the "
     "runs' differences of final regrets: --bounds LO,HI (any distribution within them), "
     "--variance V (any with variance <= V), or --normal (t intervals; not valid for skewed "
     "regrets)."),
    (["--normal"], "--normal sets --until separated's intervals; add --until separated or "
     "drop it."),
])
def test_run__bounds_refused_in_one_line_before_any_simulation(argv, match, capsys, tmp_path):
    try:
        code = main(["run", "--learners", "ogd-full,ogd-random-subset", "--runs", "2", "--out",
                     str(tmp_path / "o"), *argv])
    except SystemExit as stop:  # argparse's own refusal: usage, then one error line
        code = stop.code
    assert code == 2
    assert match in capsys.readouterr().err.strip().splitlines()[-1]
    assert not (tmp_path / "o").exists()


def test_run__a_study_that_finished_while_this_one_was_prepared_is_not_overwritten(
        tmp_path, capsys, monkeypatch):

    out = tmp_path / "d"
    from oslr.study import driver

    real = driver.prepare

    def prepare(study, names):
        planned = real(study, names)
        _finishes_meanwhile(out)()  # the first study's last rounds end during this prepare
        return planned

    monkeypatch.setattr(driver, "prepare", prepare)
    assert main([*_small(), "--out", str(out)]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"oslr: error: --out {out} already holds a finished oslr run study; it is never "
        "overwritten: give another --out (a new or an unfinished folder).")
    assert (out / "summary.csv").read_text() == "theirs\n"
    assert sorted(p.name for p in out.iterdir()) == [".oslr.lock", "config.json", "summary.csv"]


def test_run__a_killed_writers_temporary_of_study_json_does_not_block_the_resume(
        tmp_path, capsys, monkeypatch):
    out = tmp_path / "d"
    argv = [*_small(), "--out", str(out)]
    # a SIGKILL while study.json was being written (before any chunk) leaves its temporary,
    # its writer's pid dead since: the rerun starts the study, not "chunks of an unknown study"
    (out / ".checkpoints").mkdir(parents=True)
    (out / ".checkpoints" / ".study.json.99999999.tmp").write_text('{"half": ')
    assert main(argv) == 0
    assert "resuming" not in capsys.readouterr().err
    assert (out / "config.json").is_file() and not (out / ".checkpoints").exists()
    # and after a kill with chunks saved, such a temporary beside study.json: the rerun resumes
    out = tmp_path / "e"
    argv = [*_small(), "--out", str(out)]
    _killed_after_two_chunks(monkeypatch, argv)
    capsys.readouterr()
    (out / ".checkpoints" / ".study.json.99999999.tmp").write_text('{"half": ')
    assert main(argv) == 0
    assert "resuming from the chunks saved in" in capsys.readouterr().err


@pytest.mark.parametrize("where", ["checkpoints", "learner", "lock"])
def test_run__a_file_or_folder_where_oslr_keeps_its_own_is_one_line(tmp_path, capsys, where,
                                                                    monkeypatch):
    import shutil

    out = tmp_path / "d"
    out.mkdir()
    if where == "checkpoints":
        (out / ".checkpoints").write_text("a file")
        want = (f"oslr: error: --out {out}: {out / '.checkpoints'} is not a folder (oslr keeps "
                "an unfinished study's chunks there); move it away and run the same command "
                "again.\n")
    elif where == "learner":  # an unfinished study whose learner's folder became a file
        _killed_after_two_chunks(monkeypatch, [*_small(), "--out", str(out)])
        shutil.rmtree(out / ".checkpoints" / "0-ogd-full")
        (out / ".checkpoints" / "0-ogd-full").write_text("a file")
        want = (f"oslr: error: cannot use {out / '.checkpoints' / '0-ogd-full'} (File exists); "
                "a file stands where a folder should be: move it away or write elsewhere.\n")
    else:
        (out / ".oslr.lock").mkdir()
        want = (f"oslr: error: --out {out}: {out / '.oslr.lock'} is not a file (oslr keeps the "
                "name of the lock's holder there); move it away and run the same command "
                "again.\n")
    assert main([*_small(), "--out", str(out)]) == 2
    assert capsys.readouterr().err.splitlines(keepends=True)[-1] == want


def test_run__an_old_round_that_cannot_be_removed_is_one_line(tmp_path, capsys, monkeypatch):
    import errno

    from oslr import checkpoint

    real = checkpoint.Path.unlink

    def unlink(self, missing_ok=False):
        if self.name.startswith("checkpoint-"):
            raise PermissionError(errno.EACCES, "Permission denied", str(self))
        return real(self, missing_ok=missing_ok)

    monkeypatch.setattr(checkpoint.Path, "unlink", unlink)
    out = tmp_path / "d"
    assert main([*_small(), "--out", str(out)]) == 2
    err = capsys.readouterr().err.splitlines()[-1]
    assert err.startswith(f"oslr: error: cannot use {out / '.checkpoints' / '0-ogd-full'}"
                          "/checkpoint-") and err.endswith(
        " (Permission denied); make the folder writable or write elsewhere.")


@pytest.mark.parametrize("argv,flag,limit", [
    (["--d", "2147483648"], "--d 2147483648", "2,147,483,647"),
    (["--runs", str(2**64)], f"--runs {2**64}", "2,147,483,648"),
    (["--horizon", str(2**31)], f"--horizon {2**31}", "2,147,483,647")])
def test_run__a_size_beyond_int32_is_one_line_before_out_is_made(tmp_path, capsys, argv, flag,
                                                                  limit):
    out = tmp_path / "d"
    assert main(["run", *argv, "--out", str(out)]) == 2
    assert capsys.readouterr().err == (
        f"oslr: error: {flag} is beyond {limit}, the largest count "
        "the compiled programs hold (int32); give a smaller one (split a larger study in "
        "parts).\n")
    assert not out.exists()


def test_run__2_to_the_31_runs_pass_the_size_check_and_meet_the_memory_one(tmp_path, capsys,
                                                                           monkeypatch):
    from oslr import memory

    monkeypatch.setattr(memory, "disk_free", lambda where: 10 * 2**30)
    # run ids 0 .. 2^31 - 1 are all int32: the size check lets 2^31 runs through, and the
    # memory check (shapes only) refuses them, still before --out is made
    out = tmp_path / "d"
    assert main(["run", "--runs", str(2**31), "--horizon", "10", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("oslr: error: the per-run results of this study (2,147,483,648 runs")
    assert "int32" not in err
    assert not out.exists()


def test_until_printout__a_diverged_entry_is_named_diverged_not_worse(capsys):
    decision = pd.DataFrame([
        {"name": "a", "reference": "r", "runs": 20, "diff": np.nan, "cs_low": np.nan,
         "cs_high": np.nan, "decided": True, "verdict": "diverged", "method": "t"},
        {"name": "b", "reference": "r", "runs": 20, "diff": 2.0, "cs_low": 1.0, "cs_high": 3.0,
         "decided": True, "verdict": "worse", "method": "t"}]).assign(assumes="normal")
    cli_run._print_until(decision, 2, 10, 100)
    out = capsys.readouterr().out
    assert "  a: diverged (a run is NaN or inf): not compared\n" in out
    assert "  b: worse than r: difference 2 (1, 3)\n" in out
    assert "Decided after 20 of at most 100 runs (1 diverged, left out): 80% of" in out
    cli_run._print_until(decision.iloc[:1], 1, 10, 100)
    out = capsys.readouterr().out
    assert out.endswith("\nEvery entry but the reference diverged: nothing was compared.\n")
    assert "Decided" not in out
    undecided = decision.assign(decided=[True, False], verdict=["diverged", "undecided"])
    cli_run._print_until(undecided, 10, 10, 100)
    assert capsys.readouterr().out.endswith(
        "  b: undecided: difference 2 (1, 3)\nStopped at the cap of 100 runs (--max-runs) with "
        "comparisons undecided: the learners may not differ, or differ by less than these runs "
        "resolve.\n")


@pytest.mark.parametrize("compare,bounds,ok", [
    (None, "-1,5", False), ("best", "-5,1", False), (None, "-5,5", True),
    ("ogd-full", "-1,5", True)])
def test_run__asymmetric_bounds_with_the_best_are_refused_before_any_work(
        tmp_path, capsys, monkeypatch, compare, bounds, ok):
    from oslr.study import Study

    monkeypatch.setattr(Study, "play", lambda *a, **k: (_ for _ in ()).throw(
        RuntimeError("played")))
    out = tmp_path / "d"
    argv = ["run", "--learners", "ogd-full,ogd-random-subset", "--runs", "2", "--horizon", "20",
            "--until", "separated", f"--bounds={bounds}", "--out", str(out),
            *(["--compare-to", compare] if compare else [])]
    if ok:
        with pytest.raises(RuntimeError, match="played"):
            main(argv)
        return
    assert main(argv) == 2
    assert capsys.readouterr().err.startswith(
        f"oslr: error: --bounds {bounds} with the best as reference: its pairs are taken either "
        "way round, so give symmetric bounds (-5, 5) or name a reference with --compare-to.")
    assert not out.exists()


def test_run__max_memory_plays_blocks_and_may_change_on_a_resume(tmp_path, monkeypatch):
    # blocks of the capped study give the uncapped runs; a resume under another cap is the
    # same study (the cap changes no number) and keeps the block size it began with
    capped = [*_small(runs=12), "--max-memory", "1M"]
    out = tmp_path / "capped"
    _killed_after_two_chunks(monkeypatch, [*capped, "--out", str(out)])
    assert main([*_small(runs=12), "--max-memory", "2M", "--out", str(out)]) == 0
    info = json.loads((out / "config.json").read_text())["results"][0]["info"]
    assert info["block_runs"] == 4
    whole = tmp_path / "whole"
    assert main([*_small(runs=12), "--out", str(whole)]) == 0
    assert "block_runs" not in json.loads((whole / "config.json").read_text())["results"][0]["info"]
    pd.testing.assert_frame_equal(pd.read_csv(out / "runs.csv"), pd.read_csv(whole / "runs.csv"))
