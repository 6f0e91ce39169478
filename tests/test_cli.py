import json
import time as time_module
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from oslr import study as study_module
from oslr.cli import main
from oslr.cli import run as cli_run
from tests.helpers import ACROSS_PROCESSES_RTOL, interrupt_after_saves, subprocess_env


def test_list_json__shows_reference_learners_and_problems(capsys):
    assert main(["list", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    learners = {item["name"]: item["family"] for item in data["learners"]}
    assert learners["ogd-full"] == "prediction"
    assert learners["ogd-random-subset"] == "prediction"
    assert learners["eps-greedy"] == "bandit"
    problems = {item["name"] for item in data["problems"]}
    assert {"sparse-linear", "a9a", "connect4", "covtype", "mnist35", "kegg",
            "linear-bandit"} <= problems


def test_list_text__shows_each_param_default_and_range(capsys):
    assert main(["list", "--d", "20"]) == 0
    out = capsys.readouterr().out
    block = out[out.index("ogd-random-subset"):out.index("uniform-subset")]
    assert "k            = 5          in [1, 20]" in block
    assert "static options: max_k=20" in block


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
        (["--k", "40"], "1 <= k <= d"),
        (["--runs", "0"], "--runs (or runs in the config) must be a positive integer, got 0"),
        (["--horizon", "-5"], "--horizon (or horizon in the config) must be a positive integer"),
        (["--chunk", "0"], "--chunk (or chunk in the config) must be a positive integer, got 0"),
        (["--seed", "-1"], "seed must be an integer in [0, 2^32), got -1"),
        (["--comparator-k", "0"], "comparator_k=0 must satisfy 1 <= k <= d=16"),
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
         "with --set k=..."),
        (["--learners", "ogd-random-subset", "--grid", "k=2,3.5"], "k=3.5 must be a whole"),
        (["--d", "3", "--k", "5"], "Change the problem's options (--d, --k"),
        (["--d", "3", "--learners", "ogd-random-subset", "--set", "k=5"],
         "out of range [1, 3]. (k: features queried per round) Change it with --set k=..."),
        (["--d", "3", "--learners", "foster-hedge"], "came from the problem's k=3: give another "
         "with --set k=K (or the problem's with --k K)."),
        (["--problem", "linear-bandit"], "no learners named, and the default ones (ogd-full, "
         "ogd-random-subset) cannot run on problem 'linear-bandit'"),
        (["--learners", "ogd-full", "--compare-to", "best"], "--compare-to and --until compare "
         "two learners or grid points or more; this study has one (add --learners A,B or a "
         "--grid)"),
        (["--compare-to", "ogd-ful"], "unknown learner to compare with 'ogd-ful'; did you mean "
         "'ogd-full'?"),
        (["--until", "separated", "--runs", "1"], "give --runs 2 or more (got 1"),
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
        ('learners = "ogd-full"\n', "learners = 'ogd-full' must be a list of names"),
        ("[grid]\nk = 3\n", "[grid] k = 3 must be a non-empty list of values, e.g. k = [3]"),
        ("horizon = 2.5\n", "horizon = 2.5 must be an integer"),
        ("learners = [\n", "not valid TOML"),
        ("problem_options = 3\n", "problem_options must be a table"),
        ('problem = "linear-bandit"\n', "no learners named"),
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
    from oslr.cli.run import build_study

    args = make_parser().parse_args(["run", "--horizon", "1e3", "--runs", "2.0", "--chunk", "500"])
    assert (args.horizon, args.runs) == (1000, 2)
    with pytest.raises(SystemExit):
        make_parser().parse_args(["run", "--horizon", "2.5"])
    cfg = tmp_path / "study.toml"
    cfg.write_text("horizon = 1e4\n")
    study = build_study(make_parser().parse_args(["run", "--config", str(cfg)]))
    assert study["horizon"] == 10_000 and isinstance(study["horizon"], int)


@pytest.mark.slow  # an in-process study; keeps the default run under 5 min
def test_run__default_study_fits_a_small_d(tmp_path, capsys):
    from oslr.cli import make_parser
    from oslr.cli.run import build_study

    for d, k in [(3, 3), (2, 2), (16, 4)]:
        study = build_study(make_parser().parse_args(["run", "--d", str(d)]))
        assert study["params"]["k"] == k and study["problem_options"]["k"] == min(3, d)
    study = build_study(make_parser().parse_args(["run", "--d", "3", "--set", "k=2"]))
    assert study["params"]["k"] == 2  # the user's own k is left alone
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


def test_main__ctrl_c_anywhere_is_one_line_and_exit_130(capsys, monkeypatch):
    import oslr.cli as cli

    def interrupted(args):
        raise KeyboardInterrupt
    monkeypatch.setattr(cli.commands, "cmd_list", interrupted)
    parser = cli.make_parser
    monkeypatch.setattr(cli, "make_parser", lambda: _with_func(parser(), interrupted))
    assert main(["list"]) == 130
    assert capsys.readouterr().err.strip().count("\n") == 0


def _with_func(parser, func):
    parser.set_defaults(func=func)
    for action in parser._subparsers._group_actions:
        for sub in action.choices.values():
            sub.set_defaults(func=func)
    return parser


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


def test_experiment__unknown_set_name_and_list(capsys):
    assert main(["experiment", "wll-k", "--quick", "--set", "zzz=1"]) == 2
    err = capsys.readouterr().err
    assert "does not take ['zzz']" in err and "eta_scale" in err
    assert main(["experiment", "wll-k", "--set", "k=3"]) == 2
    assert "sets ['k'] itself" in capsys.readouterr().err
    assert main(["experiment", "--list"]) == 0
    out = capsys.readouterr().out
    assert "wll-k" in out and "kpm-pege" in out


@pytest.mark.slow  # moved behind -m slow to keep the default run under 5 min
def test_experiment__wll_k_writes_table_and_figure(tmp_path, capsys, monkeypatch):
    import oslr.experiments.wll as ex

    real = ex.wll_reward_vs_k

    def tiny(dataset, ratios, runs, seed, horizon, **kw):  # 200 rounds, one k/d point
        return real(dataset, (0.05,), runs, seed, 200, **kw)

    monkeypatch.setattr(ex, "wll_reward_vs_k", tiny)
    assert main(["experiment", "wll-k", "--dataset", "a9a", "--quick", "--runs", "2",
                 "--out", str(tmp_path), "--json", "--no-progress"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["learner"] for r in rows] == ["ftpsl", "ftpl-random-subset", "ftpl-oracle-subset"]
    assert all(r["k"] == 6 and r["horizon"] == 200 for r in rows)
    assert all(r["reward_mean"] <= r["comparator_reward_mean"] + 1e-3 for r in rows)
    assert (tmp_path / "wll-k-a9a.csv").is_file() and (tmp_path / "wll-k-a9a.png").is_file()


def test_experiment__unknown_name_is_refused(capsys):
    assert main(["experiment", "fig9"]) == 2
    assert "unknown experiment 'fig9'" in capsys.readouterr().err


@pytest.mark.slow
def test_experiment__kpm_replay_and_pege_write_their_tables(tmp_path, capsys, monkeypatch):
    import oslr.experiments.kpm as kpm

    real_replay, real_pege = kpm.kpm_replay, kpm.kpm_pege
    monkeypatch.setattr(kpm, "kpm_replay", lambda campaign, kappas, runs, **kw: real_replay(
        campaign, (1.0,), runs, learners=("flinucb-sag",), **{**kw, "horizon": 2040}))
    monkeypatch.setattr(kpm, "kpm_pege", lambda ds, horizon, runs, seed, progress: real_pege(
        (3,), 300, runs, seed, progress))
    assert main(["experiment", "kpm-replay", "--dataset", "men", "--quick", "--runs", "2",
                 "--out", str(tmp_path), "--json", "--no-progress"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows[0]["learner"] == "flinucb-sag" and rows[0]["kappa"] == 1.0
    assert 20 < rows[0]["accepted_mean"] < 120  # about 2,040 / 34 = 60 events accepted
    assert (tmp_path / "kpm-replay-men.csv").is_file()
    assert main(["experiment", "kpm-pege", "--quick", "--runs", "2", "--out",
                 str(tmp_path / "pege"), "--no-progress"]) == 0  # a folder of its own
    assert (tmp_path / "pege" / "kpm-pege-sphere.png").is_file()


def test_experiment__kale_and_ito_refuse_unknown_settings_and_datasets(capsys):
    assert main(["experiment", "kale-dantzig", "--set", "zzz=1"]) == 2
    err = capsys.readouterr().err
    assert "does not take ['zzz']" in err and "c_lambda" in err
    assert main(["experiment", "kale-greedy", "--set", "k0=3"]) == 2
    assert "sets ['k0'] itself" in capsys.readouterr().err
    assert main(["experiment", "ito-table1", "--dataset", "a9a"]) == 2
    assert "runs on its own streams; drop --dataset a9a" in capsys.readouterr().err
    assert main(["experiment", "--list"]) == 0
    out = capsys.readouterr().out
    assert "kale-calibrate" in out and "ito-real" in out


def test_experiment__arena_refuses_bad_settings_before_any_work(capsys, tmp_path):
    assert main(["experiment", "arena", "--dataset", "a9a"]) == 2
    assert "runs on its own streams" in capsys.readouterr().err
    assert main(["experiment", "arena", "--runs", "7", "--out", str(tmp_path / "o")]) == 2
    assert "multiple of 5" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()
    assert main(["experiment", "arena", "--set", "eta=1"]) == 2
    assert "does not take ['eta']" in capsys.readouterr().err
    assert main(["experiment", "arena-long", "--runs", "3"]) == 2
    assert "multiple of 5" in capsys.readouterr().err
    assert main(["experiment", "arena", "--quick", "--seed", "-3", "--out",
                 str(tmp_path / "s")]) == 2
    assert "seed must be an integer in [0, 2^32), got -3" in capsys.readouterr().err
    assert not (tmp_path / "s").exists()


@pytest.mark.slow
def test_experiment__arena_writes_leaderboard_curves_and_figures(tmp_path, capsys,
                                                                 monkeypatch):
    import oslr.experiments.arena as ex
    from oslr.experiments.arena import ENTRANTS

    ogd = tuple(e for e in ENTRANTS if e.learner.startswith("ogd"))
    monkeypatch.setattr(ex, "ARENA_QUICK", dict(problems=("rip",), d=6, k=2, budgets=(4,),
                                                horizon=40, runs=5, entrants=ogd))
    assert main(["experiment", "arena", "--quick", "--out", str(tmp_path), "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "### rip (d = 6, k = 2, budget 4, T = 40)" in out and "| 1 | ogd-full" in out
    for name in ("arena.csv", "arena.json", "arena.md", "arena-curves.csv", "arena-tuning.csv",
                 "arena-rip-b4.png"):
        assert (tmp_path / name).is_file(), name


@pytest.mark.slow
def test_experiment__arena_k_one_arena_per_k(tmp_path, capsys, monkeypatch):
    import oslr.experiments.arena as ex
    from oslr.experiments.arena import ENTRANTS
    from doctools.tables import arena_k

    ogd = tuple(e for e in ENTRANTS if e.learner.startswith("ogd"))
    monkeypatch.setattr(ex, "ARENA_K", dict(problems=("rip",), d=6, ks=(1, 2), budgets=(4,),
                                            horizon=40, runs=5, entrants=ogd))
    assert main(["experiment", "arena-k", "--out", str(tmp_path), "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "### rip (d = 6, k = 1, budget 4" in out and "### rip (d = 6, k = 2, budget 4" in out
    board = pd.read_csv(tmp_path / "arena-k.csv")
    assert board.groupby("k")["rank"].apply(sorted).tolist() == [[1, 2], [1, 2]]  # per k
    curves = pd.read_csv(tmp_path / "arena-k-curves.csv")
    assert set(curves["k"]) == {1, 2} and len(curves) == 2 * 2 * curves["n"].nunique()
    for k in (1, 2):
        assert (tmp_path / f"arena-k-rip-b4-k{k}.png").is_file()
    table = arena_k(tmp_path)
    assert table.startswith("| learner | k = 1 (k/d = 0.17) | k = 2 (k/d = 0.33) |")
    # --quick: the quick sizes (which name a k of their own) with k = 1, 2
    monkeypatch.setattr(ex, "ARENA_QUICK", dict(problems=("rip",), d=6, k=2, budgets=(4,),
                                                horizon=40, runs=5, entrants=ogd))
    assert main(["experiment", "arena-k", "--quick", "--out", str(tmp_path / "q"),
                 "--no-progress"]) == 0
    assert sorted(set(pd.read_csv(tmp_path / "q" / "arena-k.csv")["k"])) == [1, 2]


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


def _small(learners="ogd-full", runs=3, horizon=60, chunk=20):
    return ["run", "--learners", learners, "--runs", str(runs), "--horizon", str(horizon),
            "--chunk", str(chunk), "--no-progress", "--no-plot", "--json"]


_SMALL = _small()


def _killed_after_two_chunks(monkeypatch, argv) -> None:
    from oslr import checkpoint

    real = checkpoint.save
    interrupt_after_saves(monkeypatch, 2)
    assert main(argv) == 130
    monkeypatch.setattr(checkpoint, "save", real)


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


def _oslr(args, **kw):
    """`python -m oslr.cli ARGS` importing the modules this process imports (under the mutation
    tool, the mutated copy)."""
    import subprocess
    import sys

    return subprocess.Popen([sys.executable, "-m", "oslr.cli", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=subprocess_env(), **kw)


def _catches(pid: int, signum: int) -> bool:
    """Whether process `pid` has a handler for `signum` (its SigCgt mask in /proc)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            mask = next(line for line in f if line.startswith("SigCgt:")).split()[1]
    except (OSError, StopIteration):
        return False
    return bool(int(mask, 16) >> (signum - 1) & 1)


def test_quiet_when_the_reader_leaves__141_and_stdout_on_dev_null(monkeypatch, tmp_path):
    import os
    import sys

    from oslr import cli

    # stdout on a file of its own (a real descriptor, as a pipe's would be)
    out = open(tmp_path / "out", "w")
    monkeypatch.setattr(sys, "stdout", out)

    def broken():
        raise BrokenPipeError(32, "Broken pipe")

    try:
        assert cli._quiet_when_the_reader_leaves(broken) == 141
        # the descriptor now writes to /dev/null: the interpreter's last flush cannot fail
        null, now = os.stat(os.devnull), os.fstat(out.fileno())
        assert (now.st_dev, now.st_ino, now.st_rdev) == (null.st_dev, null.st_ino, null.st_rdev)
    finally:
        out.close()
    out = open(tmp_path / "out2", "w")
    monkeypatch.setattr(sys, "stdout", out)
    try:
        def fine():
            print("written", end="")
            return 3

        assert cli._quiet_when_the_reader_leaves(fine) == 3  # the status, the output flushed
        assert (tmp_path / "out2").read_text() == "written"
    finally:
        out.close()


def test_entry__handlers_first_then_main_whose_status_it_exits_with(monkeypatch):
    from oslr import cli

    calls = []
    monkeypatch.setattr(cli, "_install_signal_handlers", lambda: calls.append("handlers"))
    monkeypatch.setattr(cli, "main", lambda: calls.append("main") or 7)
    with pytest.raises(SystemExit) as stop:
        cli.entry()
    assert stop.value.code == 7 and calls == ["handlers", "main"]


def test_oslr_command__a_reader_that_left_is_no_traceback_and_status_141():
    """`oslr list | head`: the pipe's reader gone before we write (its read end closed here, so
    the first write fails whatever the timing) ends quietly as a SIGPIPE'd tool would."""
    import os
    import subprocess
    import sys

    read_fd, write_fd = os.pipe()
    os.close(read_fd)
    try:
        p = subprocess.run([sys.executable, "-m", "oslr.cli", "list"], stdout=write_fd,
                           stderr=subprocess.PIPE, text=True, timeout=120, env=subprocess_env())
    finally:
        os.close(write_fd)
    assert p.returncode == 141, p.stderr
    assert p.stderr == ""


@pytest.mark.parametrize("signame,code", [("SIGTERM", 143), ("SIGHUP", 129), ("SIGINT", 130)])
def test_oslr_command__a_signal_at_start_up_is_one_line_and_its_exit_status(tmp_path, signame,
                                                                           code):
    import signal
    import time

    p = _oslr(["run", "--out", str(tmp_path / "d"), "--no-progress"])
    # as soon as the handler is installed (first thing, before the heavy imports: a signal
    # before that ends Python with the system's default, whatever the program): the signal
    # then lands inside the imports or the study's set-up
    signum = getattr(signal, signame)
    deadline = time.time() + 60
    while not _catches(p.pid, signal.SIGTERM):  # the last of the three handlers installed
        assert time.time() < deadline and p.poll() is None, "no handler installed"
        time.sleep(0.005)
    p.send_signal(signum)
    _, err = p.communicate(timeout=60)
    assert p.returncode == code, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert lines[-1].startswith(f"oslr: stopped by {signame} (exit status {code})"), err
    assert "Traceback" not in err


@pytest.mark.parametrize("signame,code", [
    ("SIGTERM", 143),
    pytest.param("SIGHUP", 129, marks=pytest.mark.slow),
    pytest.param("SIGINT", 130, marks=pytest.mark.slow)])
def test_oslr_command__a_signal_mid_compile_is_one_line_and_its_exit_status(tmp_path, signame,
                                                                           code):
    import signal

    # the study's header is printed after the checks, just before the first learner is traced
    # and compiled: the signal lands in tracing or in XLA's compiler (C++, no Python frame)
    p = _oslr([*_small(horizon=200, chunk=50), "--out", str(tmp_path / "d")])
    line = p.stderr.readline()
    while line and not line.startswith("oslr run: "):
        line = p.stderr.readline()
    assert line, "the study never started"
    p.send_signal(getattr(signal, signame))
    _, err = p.communicate(timeout=60)
    assert p.returncode == code, err
    assert err.strip().splitlines()[-1].startswith(f"oslr: stopped by {signame} (exit status "
                                                   f"{code})"), err
    assert "Traceback" not in err and not (tmp_path / "d" / "config.json").exists()


@pytest.mark.slow  # a subprocess study (9 s); Ctrl-C mid-study is tested in-process by default
@pytest.mark.parametrize("signame,code", [("SIGTERM", 143), ("SIGHUP", 129), ("SIGINT", 130)])
def test_oslr_command__a_signal_mid_study_keeps_the_chunks_and_the_rerun_resumes(tmp_path,
                                                                                 signame, code):
    import signal
    import time

    out = tmp_path / "d"
    args = [*_small(horizon=400, chunk=10), "--out", str(out)]
    p = _oslr(args)
    deadline = time.time() + 120
    while not list((out / ".checkpoints").rglob("checkpoint-*.npz")):  # a chunk is saved
        assert time.time() < deadline and p.poll() is None
        time.sleep(0.05)
    p.send_signal(getattr(signal, signame))
    _, err = p.communicate(timeout=60)
    assert p.returncode == code, err
    assert err.strip().splitlines()[-1] == (
        f"oslr: stopped by {signame} (exit status {code}); every finished chunk is saved in "
        f"{out / '.checkpoints'}: run the same command again (same --out) to resume.")
    assert not (out / "config.json").exists()
    p = _oslr(args)
    outs, err = p.communicate(timeout=300)
    assert p.returncode == 0 and "resuming" in err, err


def test_experiment__out_that_is_a_file_is_refused_before_any_work(tmp_path, capsys,
                                                                   monkeypatch):
    import oslr.experiments as ex

    monkeypatch.setattr(ex, "run_experiment", lambda *a, **k: pytest.fail("ran anyway"))
    (tmp_path / "afile").write_text("x")
    assert main(["experiment", "kpm-pege", "--quick", "--out", str(tmp_path / "afile")]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (f"oslr: error: --out {tmp_path / 'afile'} exists and is not a folder; give a "
                   "folder (new or one this experiment wrote before).")
    assert (tmp_path / "afile").read_text() == "x"


def test_experiment__a_second_writer_is_refused_naming_the_holder(tmp_path, capsys,
                                                                  monkeypatch):
    import oslr.experiments as ex
    from oslr.atomic import FolderBusy, FolderLock

    calls = []
    monkeypatch.setattr(ex, "run_experiment", lambda *a, **k: calls.append(a) or pd.DataFrame(
        {"x": [1]}))
    out = tmp_path / "d"
    argv = ["experiment", "kpm-pege", "--quick", "--no-progress", "--json", "--out", str(out)]
    with FolderLock(out, "--out"):
        assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and f"--out {out} is in use by pid " in err, err
    assert calls == []

    def second_writer(*a, **k):  # during the run the folder is held
        with pytest.raises(FolderBusy):
            FolderLock(out).acquire()
        return pd.DataFrame({"x": [2]})

    monkeypatch.setattr(ex, "run_experiment", second_writer)
    assert main(argv) == 0  # released: the experiment runs


def test_experiment__a_table_of_curves_shows_its_last_checkpoint(tmp_path, capsys, monkeypatch):
    import oslr.experiments as ex

    frame = pd.DataFrame({"learner": ["a", "a", "b", "b"], "n": [10, 100, 10, 100],
                          "loss": [1.0, 5.0, 2.0, 7.0], "note": ["x"] * 4})
    monkeypatch.setattr(ex, "run_experiment", lambda *a, **k: frame)
    assert main(["experiment", "ito-real", "--quick", "--no-progress", "--out",
                 str(tmp_path / "d")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["learner", "loss", "n"]
    assert [line.split() for line in lines[1:3]] == [["a", "5", "100"], ["b", "7", "100"]]
    assert not lines[3].strip()  # the rows of n = 10 are not shown


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


_BIG_EXPERIMENT = """
import sys
import numpy as np
import pandas as pd
import oslr
from oslr import atomic
from oslr.experiments.output import write_table_and_figure

def plot(path, title):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from oslr.report import finish_figure
    fig, ax = plt.subplots()
    ax.plot(np.arange(1000), np.sqrt(np.arange(1000)), label="a")
    return finish_figure(fig, ax, path)

def run(a):
    problem, pp = oslr.make_problem("sparse-linear", d=4, k=1)
    learner, params = oslr.make("ogd-full", d=4)
    oslr.simulate(learner, problem, params, pp, horizon=20, n_runs=2)
    df = pd.DataFrame({"i": np.arange(300_000), "v": np.sqrt(np.arange(300_000))})
    print("writing", file=sys.stderr, flush=True)
    for _ in range(3):  # the same files, again and again: a kill lands in some write
        write_table_and_figure(a.out, "big", df, plot, "t")
        atomic.write_frame_atomic(a.out / "big-every-other.csv", df.iloc[::2])
    print("written", file=sys.stderr, flush=True)
    return df.head(2)

oslr.register_experiment(oslr.ExperimentSpec(
    "big", "big tables", run, files=("big.csv", "big.png", "big-every-other.csv")))
from oslr.cli import entry
sys.argv = ["oslr", "experiment", "big", "--no-progress", "--out", sys.argv[1]]
entry()
"""


@pytest.mark.slow
@pytest.mark.skipif(ACROSS_PROCESSES_RTOL != 0.0, reason=(
    "compares the bytes of files that separate processes computed: the same bits on a CPU only "
    "(docs/reproducibility.md)"))
def test_experiment__sigkill_at_random_moments_leaves_no_half_file_that_reads_as_complete(
        tmp_path):
    import random
    import signal
    import subprocess
    import sys
    import time

    env = subprocess_env()

    def start(out):
        return subprocess.Popen([sys.executable, "-c", _BIG_EXPERIMENT, str(out)], env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def wait_for(p, word):
        line = p.stderr.readline()
        while line and word not in line:
            line = p.stderr.readline()
        return bool(line)

    ref = tmp_path / "ref"
    p = start(ref)
    assert wait_for(p, "writing")
    t0 = time.perf_counter()
    assert wait_for(p, "written")
    writes = time.perf_counter() - t0  # how long the writes take on this machine, now
    _, err = p.communicate(timeout=300)
    assert p.returncode == 0, err
    names = ["big.csv", "big.png", "big-every-other.csv", "big-runs.parquet"]
    want = {n: (ref / n).read_bytes() for n in names}
    out, rng, kills, seen = tmp_path / "out", random.Random(1), 0, set()
    for i in range(12):
        p = start(out)
        wait_for(p, "writing")  # the experiment has reached its writes: kill during them
        time.sleep(rng.uniform(0.0, writes))
        if p.poll() is None:
            p.send_signal(signal.SIGKILL)
            kills += 1
        p.communicate(timeout=300)
        for n in names:  # each file under its final name is whole: the old one or the new one
            if (out / n).exists():
                seen.add(n)
                assert (out / n).read_bytes() == want[n], (n, kills)
        if (out / "config.json").exists():  # it finished before the kill: a finished folder
            out = tmp_path / f"out-{i}"  # is never written again, so the next try starts anew
    assert kills >= 6 and seen, (kills, seen)
    p = start(out)  # a clean run at the end: every file, no temporary of a dead writer left
    _, err = p.communicate(timeout=300)
    assert p.returncode == 0, err
    assert {n: (out / n).read_bytes() for n in names} == want
    assert not [f.name for f in out.iterdir() if f.name.endswith(".tmp")]


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


def test_make_parser__program_name_flags_and_help_texts():
    from oslr.cli import make_parser
    from oslr.registry import EXPERIMENTS

    parser = make_parser()
    assert parser.prog == "oslr" and parser.format_usage().startswith("usage: oslr ")
    sub = next(a for a in parser._actions if a.dest == "command").choices
    run_help = " ".join(sub["run"].format_help().split())
    assert "--json print the summary as JSON" in run_help
    assert "--n-arms N_ARMS arms (bandit problems)" in run_help
    exp_help = " ".join(sub["experiment"].format_help().split())
    assert "one of: " + ", ".join(EXPERIMENTS) in exp_help
    rep_help = " ".join(sub["reproduce"].format_help().split())
    assert "--list list the steps and their files" in rep_help
    args = parser.parse_args(["run", "--n-arms", "5", "--design", "correlated"])
    assert args.n_arms == 5 and args.design == "correlated"
    args = parser.parse_args(["experiment", "wll-redundant", "--hold-rates"])
    assert args.hold_rates is True
    args = parser.parse_args(["reproduce", "--out", "x", "--list"])
    assert (args.out, args.list) == ("x", True)
    assert parser.parse_args(["reproduce"]).out == "oslr-reproduce"


def test_build_study__every_problem_flag_reaches_the_problem_options():
    from oslr.cli import make_parser
    from oslr.cli.run import build_study

    args = make_parser().parse_args([
        "run", "--d", "9", "--k", "3", "--sigma", "0.2", "--design", "correlated",
        "--n-redundant", "4", "--n-arms", "6", "--delays", "fixed", "--max-delay", "3",
        "--cycle"])
    assert build_study(args)["problem_options"] == {
        "d": 9, "k": 3, "sigma": 0.2, "design": "correlated", "n_redundant": 4, "n_arms": 6,
        "delays": "fixed", "max_delay": 3, "cycle": True}


def test_prepare__a_delay_aware_learner_keeps_its_own_buffer_on_an_undelayed_stream():
    from oslr.study import DEFAULT_STUDY, UsageError, prepare

    study = {**DEFAULT_STUDY, "problem": "agnostic", "problem_options": {"d": 6, "k": 2},
             "params": {}, "grid": {}, "learners": ["ftpsl-delayed"], "horizon": 20, "runs": 2}
    _, _, plans = prepare(study)
    learner = plans[0][0]
    assert learner.options["max_delay"] == 64  # its default: no delays to size it by
    with pytest.raises(UsageError, match="parameter 'zzz' is not a parameter of any chosen "
                                         r"learner \(ftpsl-delayed\)"):
        prepare({**study, "params": {"zzz": 1.0}})


def test_with_flag_hint__names_the_flag_that_set_the_parameter():
    from oslr.study import _with_flag_hint

    err = ValueError("ogd-full: parameter eta=[-1.] is out of range (0, inf).")
    assert _with_flag_hint(err, {"grid": {"eta": [-1.0]}}).endswith(
        "Change it with --grid eta=... (or params/grid in the config).")
    assert _with_flag_hint(err, {"params": {"eta": -1.0}}).endswith(
        "Change it with --set eta=... (or params/grid in the config).")
    assert _with_flag_hint(err, {}) == err.args[0]


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


def test_install_signal_handlers__all_three_set_and_the_wakeup_pipe_non_blocking():
    import os
    import signal

    from oslr.cli import SIGNAL_EXIT, _install_signal_handlers

    names = list(SIGNAL_EXIT)
    before = {n: signal.getsignal(getattr(signal, n)) for n in names}
    old_fd = signal.set_wakeup_fd(-1)
    try:
        _install_signal_handlers()
        fd = signal.set_wakeup_fd(-1)
        assert fd >= 0 and not os.get_blocking(fd)
        for n in names:
            assert signal.getsignal(getattr(signal, n)) not in (before[n], signal.SIG_DFL)
        import threading  # the waiting thread, named for a stack dump

        assert any(t.name == "oslr-signals" and t.daemon for t in threading.enumerate())
    finally:
        for n, h in before.items():
            signal.signal(getattr(signal, n), h)
        signal.set_wakeup_fd(old_fd)


def test_set__one_value_each_and_never_also_swept(capsys):
    assert main(["run", "--set", "eta=0.01,0.1"]) == 2
    assert capsys.readouterr().err.strip() == (
        "oslr: error: --set eta=0.01,0.1 gives 2 values; --set takes one (to sweep them, use "
        "--grid eta=0.01,0.1).")
    assert main(["run", "--set", "k=3", "--grid", "k=2,4"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("oslr: error: ['k'] both set to one value") and "\n" not in err


def test_set__a_config_param_that_is_also_swept_is_refused(tmp_path, capsys):
    cfg = tmp_path / "s.toml"
    cfg.write_text('learners = ["ogd-full"]\n[params]\neta = 0.1\n')
    assert main(["run", "--config", str(cfg), "--grid", "eta=0.01,0.1"]) == 2
    assert "['eta'] both set to one value" in capsys.readouterr().err


def test_backend__a_missing_jax_platform_is_one_line(capsys, monkeypatch):
    import jax

    def no_gpu():
        raise AssertionError  # what jax raises for JAX_PLATFORMS=cuda without a GPU

    monkeypatch.setattr(jax, "devices", no_gpu)
    monkeypatch.setenv("JAX_PLATFORMS", "cuda")
    for argv in (["run"], ["experiment", "kpm-pege", "--quick"], ["reproduce"]):
        assert main(argv) == 2
        assert capsys.readouterr().err == (
            "oslr: error: JAX cannot start the backend that JAX_PLATFORMS='cuda' asks for (no "
            "such device or plugin here); unset JAX_PLATFORMS (or set it to cpu), or install the "
            "jax build for that device.\n")
    assert main(["list", "--json"]) == 0  # listing needs no backend


def test_merge__the_command_writes_the_merged_folder_where_out_says(tmp_path, monkeypatch, capsys):
    import types

    import oslr.saved

    called = []

    def merge(folders, out):
        called.append((folders, out))
        return types.SimpleNamespace(config={"runs": 6, "seed": [0, 1]}, path=out)

    monkeypatch.setattr(oslr.saved, "merge", merge)
    assert main(["merge", "a", "b", "--out", str(tmp_path / "both")]) == 0
    assert called == [(["a", "b"], str(tmp_path / "both"))]
    assert capsys.readouterr().out == (f"merged 2 folders (6 runs per entry, seeds [0, 1]) into "
                                       f"{tmp_path / 'both'}\n")


def test_experiment__an_unfinished_folder_is_rerun_a_finished_one_refused(tmp_path, capsys,
                                                                         monkeypatch):
    import oslr.experiments as ex

    def run(name, dataset, runs, seed, out, *a, **k):
        (out / "table.csv").write_text("x\n1\n")
        (out / ".studies" / "0123").mkdir(parents=True)  # a study's checkpoints
        return pd.DataFrame({"x": [1]})

    monkeypatch.setattr(ex, "run_experiment", run)
    out = tmp_path / "d"
    argv = ["experiment", "kpm-pege", "--quick", "--no-progress", "--json", "--out", str(out)]
    out.mkdir()
    (out / "table.csv").write_text("old")  # left by a killed run
    assert main(argv) == 0
    assert capsys.readouterr().err == (
        f"oslr: {out} holds an earlier, unfinished run: its finished studies are reused, and "
        "each file is replaced as this run writes it (give another --out to keep them).\n")
    assert not (out / ".studies").exists()  # finished: no checkpoint is kept
    finished = {p.name: p.read_bytes() for p in out.iterdir()}
    assert main(argv) == 2  # finished now: never overwritten
    assert capsys.readouterr().err == (
        f"oslr: error: --out {out} already holds the finished experiment 'kpm-pege'; it is "
        "never overwritten: give another --out (a new or an unfinished folder).\n")
    assert {p.name: p.read_bytes() for p in out.iterdir()} == finished
    # a run's unfinished study is not an experiment's folder either
    (tmp_path / "r" / ".checkpoints").mkdir(parents=True)
    assert main([*argv[:-1], str(tmp_path / "r")]) == 2
    assert "holds the unfinished chunks of an oslr run study" in capsys.readouterr().err
    assert sorted(p.name for p in (tmp_path / "r").iterdir()) == [".checkpoints", ".oslr.lock"]


def test_info__versions_backend_devices_x64_and_memory(capsys):
    assert main(["info", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["runtime"]["x64"] is False and data["runtime"]["backend"] == "cpu"
    assert main(["info"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith(f"oslr {data['oslr']} (commit {data['commit']}")
    assert lines[2] == "backend cpu (cpu), float64 mode off, XLA_FLAGS " + (
        data["runtime"]["xla_flags"] or "(none)")
    assert lines[3] == "device 0: cpu cpu" and lines[4].startswith("host: ")
    assert lines[5].startswith("packages: optax ")


def test_experiment__config_json_records_the_command_and_the_runtime(tmp_path, capsys,
                                                                    monkeypatch):
    import oslr.experiments as ex

    monkeypatch.setattr(ex, "run_experiment", lambda *a, **k: pd.DataFrame({"x": [1]}))
    out = tmp_path / "d"
    argv = ["experiment", "kpm-pege", "--quick", "--no-progress", "--seed", "4", "--out",
            str(out)]
    assert main(argv) == 0
    assert capsys.readouterr().out.rstrip().endswith(f"config.json to {out}")
    cfg = json.loads((out / "config.json").read_text())
    assert cfg["command"] == "oslr " + " ".join(argv)
    assert (cfg["experiment"], cfg["seed"], cfg["quick"], cfg["runs"]) == ("kpm-pege", 4, True,
                                                                           None)
    assert cfg["runtime"]["x64"] is False and "jaxlib" in cfg["runtime"]


@pytest.mark.parametrize("argv, message", [
    (["--learners", "ogd-full,ogd-full"],
     "learner(s) ['ogd-full'] named twice; name each learner once (to compare settings of one "
     "learner, sweep them with --grid)."),
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
            study_module.settings({**study, "chunk": 7})))  # the chunk may change on resuming
    assert study_module.unfinished_default(study) == Path("oslr-results") / newer.name
    (newer / "config.json").write_text("{}")  # finished: not resumed
    assert study_module.unfinished_default(study) == Path("oslr-results") / older.name
    assert study_module.unfinished_default({**study, "runs": 5}) is None  # another study


def test_check_same_study__resuming_only_when_chunks_are_saved(tmp_path):

    saved = tmp_path / study_module.CHECKPOINTS
    study = {"problem": "p", "runs": 2}
    assert study_module.check_same_study(saved, study) is False  # writes study.json
    (saved / "0").mkdir()  # a learner's folder whose checkpoints were deleted
    assert study_module.check_same_study(saved, study) is False
    (saved / "0" / "checkpoint-000000000010.npz").write_bytes(b"")
    assert study_module.check_same_study(saved, study) is True


def test_build_study__another_problem_on_the_command_line_drops_the_configs_settings(tmp_path):
    from oslr.cli import make_parser
    from oslr.cli.run import build_study
    from oslr.study import DEFAULT_STUDY

    cfg = tmp_path / "study.toml"
    cfg.write_text('problem = "sparse-linear"\nlearners = ["ogd-full"]\n'
                   '[problem_options]\nd = 7\n[params]\neta = 0.5\n')
    study = build_study(make_parser().parse_args(["run", "--config", str(cfg)]))
    assert study["params"] == {"eta": 0.5} and study["problem_options"]["d"] == 7
    # the config's params and options were for its problem: another one starts afresh
    study = build_study(make_parser().parse_args(["run", "--config", str(cfg), "--problem",
                                                  "linear-bandit"]))
    assert study["params"] == {} and study["problem_options"] == {}
    # the default study's own settings go as soon as the user describes a study
    assert DEFAULT_STUDY["params"] == {"k": 4}
    assert build_study(make_parser().parse_args(["run", "--learners", "ogd-full"]))["params"] == {}
    assert build_study(make_parser().parse_args(["run"]))["params"] == {"k": 4}


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


def test_prepare__a_static_k_is_a_parameter_of_a_learner_that_takes_it():
    from oslr.cli import make_parser
    from oslr.cli.run import build_study
    from oslr.study import UsageError, prepare

    study = build_study(make_parser().parse_args(
        ["run", "--learners", "foster-hedge", "--d", "6", "--set", "k=2", "--horizon", "10",
         "--runs", "2"]))
    _, _, plans = prepare(study)  # k is not swept by foster-hedge but is one of its options
    assert [learner.name for learner, _, _ in plans] == ["foster-hedge"]
    # a static k makes k a parameter, not any other name
    study["params"] = {"bogus": 1.0}
    with pytest.raises(UsageError, match="parameter 'bogus' is not a parameter of any chosen "
                                         r"learner \(foster-hedge\)"):
        prepare(study)


def test_prepare__a_learner_sized_by_the_arm_count_gets_the_problems():
    from oslr.cli import make_parser
    from oslr.cli.run import build_study
    from oslr.study import prepare

    study = build_study(make_parser().parse_args(
        ["run", "--problem", "linear-bandit", "--learners", "linucb", "--d", "4", "--n-arms",
         "6", "--horizon", "10", "--runs", "2"]))
    _, _, plans = prepare(study)
    assert plans[0][0].options["n_arms"] == 6


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


def test_reproduce__the_progress_flag_reaches_the_steps(tmp_path, monkeypatch):
    import oslr.experiments.reproduce as rep

    calls = []
    monkeypatch.setattr(rep, "reproduce", lambda *a: calls.append(a))
    assert main(["reproduce", "--only", "wll-k-a9a", "--quick", "--out", str(tmp_path),
                 "--no-progress"]) == 0
    assert main(["reproduce", "--only", "wll-k-a9a", "--quick", "--out", str(tmp_path)]) == 0
    assert [c[2:] for c in calls] == [(True, False), (True, True)]


def test_study_progress__the_total_grows_with_each_look():
    from oslr.study import StudyProgress

    progress = StudyProgress("none")
    progress.add(300)
    progress.add(300)
    assert progress.total == 600


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


def test_writer_checks_the_folder__process_0_alone_reads_it_and_every_process_learns_its_verdict(
        tmp_path, monkeypatch):
    import jax
    import numpy as np
    from jax.experimental import multihost_utils


    saved = tmp_path / study_module.CHECKPOINTS
    saved.mkdir()
    (saved / "study.json.tmp-1").write_text("{")  # process 0 half-way through writing it
    study = {"problem": "p", "runs": 2}
    # another process does not look: nothing refused, nothing written
    assert study_module.writer_checks_the_folder(saved, study, 1) is False
    assert sorted(p.name for p in saved.iterdir()) == ["study.json.tmp-1"]
    with pytest.raises(study_module.UsageError, match="chunks of an unknown study"):
        study_module.writer_checks_the_folder(saved, study, 0)  # the writer does, and refuses

    # several processes: each learns process 0's verdict from one gather of a flag
    gathered = []

    def allgather(flag):
        gathered.append(int(flag))
        return np.array([verdict0, 1], np.int32)

    monkeypatch.setattr(jax, "process_count", lambda: 2)
    monkeypatch.setattr(multihost_utils, "process_allgather", allgather)
    verdict0 = 0
    with pytest.raises(study_module.UsageError,
                       match=r"process 0 refused --out .*; this process stops"):
        study_module.writer_checks_the_folder(saved, study, 1)
    with pytest.raises(study_module.UsageError, match="chunks of an unknown study"):
        study_module.writer_checks_the_folder(saved, study, 0)
    verdict0 = 1
    assert study_module.writer_checks_the_folder(saved, study, 1) is False
    assert gathered == [1, 0, 1]  # process 1 agrees, process 0 refused, process 1 agrees
    (saved / "study.json.tmp-1").unlink()
    assert study_module.writer_checks_the_folder(saved, study, 0) is False  # the writer writes it
    assert (saved / "study.json").exists() and gathered[-1] == 1


def test_study_progress__one_total_for_the_study_and_json_lines_for_a_log():
    import io

    from oslr.study import StudyProgress

    out = io.StringIO()
    progress = StudyProgress("jsonl", out)
    progress.add(2 * 100)  # two learners of T = 100
    first, second = progress.for_learner("a"), progress.for_learner("b")
    first(50)
    first(50)
    second(100)
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [(r["learner"], r["done"], r["total"], r["fraction"]) for r in lines] == [
        ("a", 50, 200, 0.25), ("a", 100, 200, 0.5), ("b", 200, 200, 1.0)]
    assert lines[-1]["eta_s"] == 0.0 and lines[0]["eta_s"] >= 0.0
    assert StudyProgress("none").for_learner("a") is False  # simulate shows nothing


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


def test_look_line__what_until_says_after_each_look():
    from oslr.study import look_line as _look_line

    assert _look_line(2, 5, ["a", "b"]) == "  look 2: 10 runs; undecided: a, b"
    assert _look_line(3, 5, []) == "  look 3: 15 runs; every comparison decided"


def test_build_study__an_integral_float_count_in_the_config_is_an_integer(tmp_path):
    from oslr.cli import make_parser
    from oslr.cli.run import build_study

    cfg = tmp_path / "s.toml"
    cfg.write_text("horizon = 2e3\nruns = 4.0\nchunk = 5e2\nseed = 1e1\n")
    study = build_study(make_parser().parse_args(["run", "--config", str(cfg)]))
    assert (study["horizon"], study["runs"], study["chunk"], study["seed"]) == (2000, 4, 500, 10)
    assert all(type(study[k]) is int for k in ("horizon", "runs", "chunk", "seed"))


def test_run__a_grid_over_a_static_k_names_the_fix(capsys):
    assert main(["run", "--learners", "foster-hedge", "--grid", "k=2,3"]) == 2
    assert capsys.readouterr().err == (
        "oslr: error: learner 'foster-hedge' enumerates k-subsets, so its k is static: run one "
        "study per k (--set k=K or --k K) instead of a grid over k.\n")


def test_experiment_and_reproduce__default_folders_and_the_steps_passed_on(tmp_path, capsys,
                                                                           monkeypatch):
    import oslr.experiments as ex
    from oslr.experiments import reproduce as rep

    monkeypatch.chdir(tmp_path)
    seen = []
    monkeypatch.setattr(ex, "run_experiment",
                        lambda name, dataset, runs, seed, out, *a, **k: seen.append(out)
                        or pd.DataFrame({"x": [1]}))
    assert main(["experiment", "wll-k", "--dataset", "covtype", "--quick", "--no-progress"]) == 0
    assert seen == [Path("oslr-results") / "wll-k-covtype"]
    # that folder is finished now: the same command leaves it be, in a folder named by the time
    monkeypatch.setattr(time_module, "strftime", lambda fmt: "20261204-101500")
    assert main(["experiment", "wll-k", "--dataset", "covtype", "--quick", "--no-progress"]) == 0
    assert seen[1] == Path("oslr-results") / "wll-k-covtype-20261204-101500"
    options = []
    monkeypatch.setattr(ex, "run_experiment", lambda *a, **k: options.append(k)
                        or pd.DataFrame({"x": [1]}))
    assert main(["experiment", "wll-redundant", "--quick", "--hold-rates", "--no-progress",
                 "--out", str(tmp_path / "held")]) == 0
    assert options == [{"hold_rates": True}]  # passed on as the experiment's option
    calls = []
    monkeypatch.setattr(rep, "reproduce", lambda *a: calls.append(a) or [])
    assert main(["reproduce", "--only", "kpm-pege", "--out", str(tmp_path / "r"),
                 "--no-progress"]) == 0
    assert [s.name for s in calls[0][0]] == ["kpm-pege"] and calls[0][1] == tmp_path / "r"


def test_make_parser__the_new_commands_help_and_choices():
    from oslr.cli import make_parser

    parser = make_parser()
    sub = next(a for a in parser._actions if a.dest == "command").choices
    text = {name: " ".join(sub[name].format_help().split())
            for name in ("plot", "compare", "merge", "info", "run")}
    assert "--json print JSON" in text["compare"] and "--json print JSON" in text["info"]
    assert "folders written by oslr run" in text["merge"]
    assert "at T against a swept parameter" in " ".join(parser.format_help().split())
    assert "the best, on the same runs" in text["run"]
    assert "printed and compare.csv" in text["run"]
    assert parser.parse_args(["run", "--progress", "jsonl"]).progress == "jsonl"


def test_study_progress__the_time_left_to_a_tenth_of_a_second(monkeypatch):
    import io


    clock = iter([100.0, 100.0 + 1.23456])  # start, then the first chunk
    monkeypatch.setattr(time_module, "perf_counter", lambda: next(clock))
    out = io.StringIO()
    progress = study_module.StudyProgress("jsonl", out)
    progress.add(300)
    progress.for_learner("a")(100)
    line = json.loads(out.getvalue())
    assert line["elapsed_s"] == 1.23 and line["eta_s"] == 2.5  # 1.23456 x 2 = 2.469 -> 2.5


def test_compare_and_plot__printed_columns_and_the_default_figure(tmp_path, capsys):
    from tests.test_saved import _study

    out, _ = _study(tmp_path)
    assert main(["compare", str(out), "--to", "linucb"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("Holm over the 2 comparisons with linucb; free_verdict: the "
                               "sign-flip test of the same mean")
    assert lines[1].split() == ["name", "metric", "mean", "diff", "diff_low", "diff_high",
                                "p_holm", "ahead", "behind", "verdict", "p_free_holm",
                                "free_verdict"]
    mean = float(lines[-1].split()[2])  # linucb's mean, 4 significant digits
    assert len(lines[-1].split()[2].replace(".", "").lstrip("0")) <= 4 and mean > 0
    assert main(["compare", str(out)]) == 0  # without --to: with the best (all pairs)
    assert capsys.readouterr().out.startswith("Holm over all 3 pairs of 3 entries (the best")
    assert main(["plot", str(out)]) == 0  # beside the study's files, named by what it shows
    assert capsys.readouterr().out == f"wrote {out / 'plot-regret.png'}\n"
    assert (out / "plot-regret.png").read_bytes()[:4] == b"\x89PNG"
    assert main(["plot", str(out), "--band", "simultaneous", "--axes", "linear"]) == 0
    assert capsys.readouterr().out == f"wrote {out / 'plot-regret-simultaneous-linear.png'}\n"
    assert main(["plot", str(out), "--band", "simultaneous", "--out", str(tmp_path / "s.pdf")]) == 0
    assert (tmp_path / "s.pdf").read_bytes()[:4] == b"%PDF"
    capsys.readouterr()
    import matplotlib.pyplot as plt

    from oslr.saved import load
    fig = load(out).plot(band="simultaneous")
    assert fig.axes[0].get_title().endswith("95% simultaneous bands")
    plt.close(fig)
    with pytest.raises(ValueError, match="band='x'"):
        load(out).plot(band="x")
    # --margin: TOST over the same family; a margin far above every difference makes each
    # entry the test does not separate "equivalent"; without it the column is null
    for margin, equivalent in ((None, False), ("1e9", True)):
        extra = [] if margin is None else ["--margin", margin]
        assert main(["compare", str(out), "--to", "linucb", "--json", *extra]) == 0
        rows = [r for r in json.loads(capsys.readouterr().out) if r["name"] != r["reference"]]
        assert all((r["p_equiv_holm"] is not None) == equivalent for r in rows)
        assert all(r["verdict"] in (("equivalent", "better", "worse") if equivalent else
                                    ("indistinguishable", "better", "worse")) for r in rows)


def test_prepare__delay_sized_by_the_stream_and_a_study_without_params_or_grid_keys():
    from oslr.study import DEFAULT_STUDY, prepare

    study = {k: v for k, v in DEFAULT_STUDY.items() if k not in ("params", "grid")}
    study.update(problem="agnostic", learners=["ftpsl-delayed"], horizon=20, runs=2,
                 problem_options={"d": 6, "k": 2, "delays": "fixed", "max_delay": 3})
    _, _, plans = prepare(study)
    assert plans[0][0].options["max_delay"] == 3  # the stream's, not the default 64
    # a learner with a static k (foster-hedge enumerates k-subsets): k from the problem
    study.update(learners=["foster-hedge"], problem_options={"d": 6, "k": 2})
    _, _, plans = prepare(study)
    assert plans[0][0].options["k"] == 2


def test_cli_help__every_help_text_as_pinned(request):
    # the words a user reads: every subcommand's --help, pinned in tests/cli_help.txt (a change
    # there is deliberate: regenerate with `python -m tests.test_cli`)
    assert _all_help() == (Path(__file__).parent / "cli_help.txt").read_text()


def _all_help() -> str:
    import argparse
    import os

    from oslr.cli import make_parser

    before = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "100"  # argparse wraps to the terminal width
    try:
        parser = make_parser()
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        texts = [parser.format_help()] + [sub.choices[n].format_help() for n in sub.choices]
    finally:
        if before is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = before
    return "\n".join(texts)


def test_list__unswept_params_flagged_and_problem_options_indented(capsys, monkeypatch):
    import sys

    import oslr.cli as cli

    monkeypatch.setattr(sys, "argv", ["oslr", "list"])
    assert main() == 0  # argv from the command line
    out = capsys.readouterr().out.splitlines()
    eta = [line for line in out if line.strip().startswith("eta_scale ")]
    k = [line for line in out if line.strip().startswith("k ") and "the k of eq. (1)" in line]
    assert eta and not any(line.endswith("(not swept)") for line in eta)
    assert k and all(line.endswith("  (not swept)") for line in k)
    assert any(line.startswith(" " * 24 + "options: d=16, k=3") for line in out)
    seen = []
    monkeypatch.setattr(cli.commands, "cmd_list", lambda args: seen.append(args.command_line) or 0)
    monkeypatch.setattr(sys, "argv", ["oslr", "list", "--d", "8"])
    assert main() == 0 and seen == ["oslr list --d 8"]


def test_cli_texts__list_reproduce_list_look_lines_and_the_bar_postfix(capsys):
    from oslr.study import StudyProgress
    from oslr.study import look_line as _look_line

    assert main(["experiment", "--list", "--json"]) == 0
    assert {e["name"] for e in json.loads(capsys.readouterr().out)} >= {"arena", "wll-k"}
    assert main(["list"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "Problems:" in out
    assert main(["reproduce", "--list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert any(line.split()[:2] == ["arena", "arena"] for line in lines)
    assert _look_line(2, 5, ["b", "c"]) == "  look 2: 10 runs; undecided: b, c"
    assert _look_line(3, 5, []) == "  look 3: 15 runs; every comparison decided"
    import io

    progress = StudyProgress("bar", io.StringIO())
    progress.add(10)
    progress.for_learner("ogd-full")(5)
    assert progress.bar.postfix == "ogd-full" and progress.done == 5
    assert progress.bar.desc == "study" and progress.bar.unit == "round"
    progress.close()


if __name__ == "__main__":  # regenerate the pinned help texts
    (Path(__file__).parent / "cli_help.txt").write_text(_all_help())


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


def test_prepare__a_grid_of_k_1_alone_sets_max_k_1_and_an_empty_study_reports_done(capsys):
    import io

    from oslr.study import DEFAULT_STUDY, StudyProgress, prepare

    study = {**DEFAULT_STUDY, "learners": ["ogd-random-subset"], "grid": {"k": [1]}, "params": {},
             "horizon": 20, "runs": 2}
    _, _, plans = prepare(study)
    assert plans[0][0].options["max_k"] == 1  # the grid's largest k is the static bound
    out = io.StringIO()
    StudyProgress("jsonl", out).for_learner("a")(0)  # nothing to do: done
    assert json.loads(out.getvalue())["fraction"] == 1.0


def test_plot__never_over_the_studys_files_and_an_unknown_metric_is_one_line(tmp_path, capsys):
    from oslr import report
    from tests.test_saved import _bandit

    out = tmp_path / "s"
    report.save_study([_bandit("eps-greedy", np.ones((2, 6)), grid=[{"eps": 0.05},
                                                                   {"eps": 0.2}])],
                      out, config={"horizon": 40})
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    assert "regret.png" in before
    for argv in (["--metric", "nonsense"], ["--against", "eps", "--metric", "nonsense"]):
        assert main(["plot", str(out), *argv]) == 2
        assert capsys.readouterr().err == (f"oslr: error: {out}: no metric 'nonsense'; it has "
                                           "['pseudo_regret'].\n")
    for name in ("regret.png", "summary.csv", "config.json", "manifest.json"):
        assert main(["plot", str(out), "--out", str(out / name)]) == 2
        assert capsys.readouterr().err == (f"oslr: error: {out / name} is a file the study "
                                           "wrote; a figure drawn from it goes beside it under "
                                           "another name (give another --out).\n")
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert main(["plot", str(out), "--band", "simultaneous"]) == 0
    assert {p.name for p in out.iterdir()} - set(before) == {"plot-regret-simultaneous.png"}
    assert {n: (out / n).read_bytes() for n in before} == before


def _finishes_meanwhile(out: Path, what: str = "x"):
    """A stand-in for another writer that finishes a study in `out` while this command is
    still deciding (between its first look and the lock)."""
    def finish(*args, **kwargs):
        out.mkdir(parents=True, exist_ok=True)
        (out / "config.json").write_text(json.dumps({"note": what}))
        (out / "summary.csv").write_text("theirs\n")
    return finish


def test_run__a_study_that_finished_while_this_one_was_prepared_is_not_overwritten(
        tmp_path, capsys, monkeypatch):

    out = tmp_path / "d"
    real = study_module.prepare

    def prepare(study):
        planned = real(study)
        _finishes_meanwhile(out)()  # the first study's last rounds end during this prepare
        return planned

    monkeypatch.setattr(study_module, "prepare", prepare)
    assert main([*_small(), "--out", str(out)]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"oslr: error: --out {out} already holds a finished oslr run study; it is never "
        "overwritten: give another --out (a new or an unfinished folder).")
    assert (out / "summary.csv").read_text() == "theirs\n"
    assert sorted(p.name for p in out.iterdir()) == [".oslr.lock", "config.json", "summary.csv"]


def test_experiment__a_folder_finished_meanwhile_or_a_finished_run_is_refused(tmp_path, capsys,
                                                                             monkeypatch):
    import oslr.cli as cli
    import oslr.experiments as ex

    calls = []
    monkeypatch.setattr(ex, "run_experiment", lambda *a, **k: calls.append(a))
    out = tmp_path / "d"
    monkeypatch.setattr(cli.run, "_start_distributed", lambda args: _finishes_meanwhile(out)() or 0)
    argv = ["experiment", "kpm-pege", "--quick", "--no-progress", "--out", str(out)]
    assert main(argv) == 2 and calls == []
    assert "already holds a finished oslr run study; it is never overwritten" in \
        capsys.readouterr().err
    assert (out / "summary.csv").read_text() == "theirs\n"
    # a finished `oslr run` folder, refused at once: its config.json and tables untouched
    monkeypatch.undo()
    monkeypatch.setattr(ex, "run_experiment", lambda *a, **k: calls.append(a))
    run = tmp_path / "r"
    assert main([*_small(), "--out", str(run)]) == 0
    capsys.readouterr()
    before = {p.name: p.read_bytes() for p in run.iterdir()}
    assert main([*argv[:-1], str(run)]) == 2 and calls == []
    assert capsys.readouterr().err == (f"oslr: error: --out {run} already holds a finished "
                                       "oslr run study; it is never overwritten: give another "
                                       "--out (a new or an unfinished folder).\n")
    assert {p.name: p.read_bytes() for p in run.iterdir()} == before
    assert oslr_load(run).kind == "run"


def oslr_load(path):
    from oslr.saved import load

    return load(path)


def test_oslr_cli__importing_the_command_loads_nothing_heavy_before_its_handlers():
    # the handlers are installed by entry(), after `import oslr.cli`: that import must be light
    # (a signal in the first 0.1-0.35 s once met numpy's import, pulled in through oslr.checks)
    import subprocess
    import sys

    code = ("import json, sys, oslr.cli; print(json.dumps(sorted(m for m in ('numpy', 'jax', "
            "'pandas', 'scipy', 'oslr.checks') if m in sys.modules)))")
    loaded = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True,
                                       text=True, check=True).stdout)
    assert loaded == []


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
    key = flag.split()[0][2:]
    assert capsys.readouterr().err == (
        f"oslr: error: {flag} (or {key} in the config) is beyond {limit}, the largest count "
        "the compiled programs hold (int32); give a smaller one (split a larger study in "
        "parts).\n")
    assert not out.exists()


def test_info__a_missing_jax_platform_is_one_line(capsys, monkeypatch):
    import jax

    def no_gpu():
        raise RuntimeError("Unable to initialize backend 'cuda'\nmore lines")

    monkeypatch.setattr(jax, "devices", no_gpu)
    monkeypatch.setenv("JAX_PLATFORMS", "gpu")
    assert main(["info"]) == 2
    assert capsys.readouterr().err == (
        "oslr: error: JAX cannot start the backend that JAX_PLATFORMS='gpu' asks for (Unable to "
        "initialize backend 'cuda'); unset JAX_PLATFORMS (or set it to cpu), or install the "
        "jax build for that device.\n")


def test_main__a_warning_is_one_line_without_its_source(capsys, monkeypatch):
    import sys
    import warnings

    import oslr.cli as cli

    def warns(args):
        warnings.warn("checkpoint x is damaged; resuming from round 10 instead",
                      RuntimeWarning, stacklevel=2)
        return 0

    monkeypatch.setattr(warnings, "formatwarning", warnings.formatwarning)
    monkeypatch.setattr(cli.commands, "cmd_list", warns)
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        # shown as Python shows warnings outside pytest (which records them instead)
        warnings.showwarning = lambda msg, cat, fn, ln, file=None, line=None: sys.stderr.write(
            warnings.formatwarning(msg, cat, fn, ln, line))
        assert main(["list"]) == 0
    assert capsys.readouterr().err == ("oslr: warning: checkpoint x is damaged; resuming from "
                                       "round 10 instead\n")


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


def test_oslr__version_and_python_dash_m(capsys):
    import subprocess
    import sys

    import oslr

    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0 and capsys.readouterr().out == f"oslr {oslr.__version__}\n"
    done = subprocess.run([sys.executable, "-m", "oslr", "--version"], capture_output=True,
                          text=True, env=subprocess_env(), check=True)
    assert done.stdout == f"oslr {oslr.__version__}\n"


def test_experiment__import_loads_a_users_experiment_before_the_name_is_checked(
        tmp_path, monkeypatch, capsys):
    from oslr import registry

    monkeypatch.setattr(registry.EXPERIMENTS, "_entries", dict(registry.EXPERIMENTS._entries))
    (tmp_path / "my_exps.py").write_text(
        "import pandas as pd, oslr\n"
        "def run(args):\n"
        "    args.out.mkdir(parents=True, exist_ok=True)\n"
        "    pd.DataFrame({'x': [1]}).to_csv(args.out / 'mine.csv', index=False)\n"
        "    return pd.DataFrame({'x': [1]})\n"
        "oslr.register_experiment(oslr.ExperimentSpec('mine', 'a user experiment', run,\n"
        "                                             files=('mine.csv',)))\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    assert main(["experiment", "mine", "--import", "my_exps", "--out", "o",
                 "--no-progress"]) == 0
    assert (tmp_path / "o" / "mine.csv").is_file() and (tmp_path / "o" / "config.json").is_file()
    out = capsys.readouterr().out  # a table of its own columns is printed as it is
    assert out == " x\n 1\n\nwrote mine.csv, mine-runs.parquet, config.json to o\n"


def test_build_study__the_default_sparsities_fit_a_small_d_and_config_keys_are_checked(
        tmp_path, capsys):
    from oslr.cli import make_parser
    from oslr.cli.run import build_study

    for d, k in [(3, 3), (2, 2), (16, 4)]:
        study = build_study(make_parser().parse_args(["run", "--d", str(d)]))
        assert study["params"]["k"] == k and study["problem_options"]["k"] == min(3, d)
    # a config may name the comparator's k and radius; another key is refused, naming both sets
    cfg = tmp_path / "s.toml"
    cfg.write_text("comparator_k = 2\ncomparator_radius = 1.0\n")
    study = build_study(make_parser().parse_args(["run", "--config", str(cfg)]))
    assert (study["comparator_k"], study["comparator_radius"]) == (2, 1.0)
    cfg.write_text("horizon = 10\nzzz = 1\n")
    assert main(["run", "--config", str(cfg)]) == 2
    assert capsys.readouterr().err == (
        "oslr: error: unknown config keys ['zzz']; known: ['chunk', 'grid', 'horizon', "
        "'learners', 'params', 'problem', 'problem_options', 'runs', 'seed'].\n")
    # --json: one JSON record per row, indented by one space
    assert main([*_small(), "--out", str(tmp_path / "j")]) == 0
    assert capsys.readouterr().out.startswith('[\n {\n  "learner":"ogd-full",')


def test_experiment__list_json_summary_hold_rates_and_another_processs_scratch(
        tmp_path, capsys, monkeypatch):
    import oslr.experiments as ex
    from oslr import registry

    assert main(["experiment", "--list"]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert listed[0] == "Experiments (oslr experiment NAME [--quick]; sizes: full, then --quick):"
    pege = listed.index(next(line for line in listed if line.startswith("  kpm-pege ")))
    assert any(", " in line and ".csv" in line for line in listed[pege + 1:pege + 4])
    assert main(["experiment", "kpm-pege", "--hold-rates"]) == 2
    assert capsys.readouterr().err == "oslr: error: --hold-rates does not apply to kpm-pege.\n"
    # a table printed through the experiment's own summary, or as JSON with a one-space indent
    monkeypatch.setattr(registry.EXPERIMENTS, "_entries", dict(registry.EXPERIMENTS._entries))
    seen = []

    def run(name, dataset, runs, seed, out, quick, progress, **options):
        seen.append((runs, seed, quick, progress, out))
        out.mkdir(parents=True, exist_ok=True)
        return pd.DataFrame({"x": [1]})

    monkeypatch.setattr(ex, "run_experiment", run)
    import oslr

    oslr.register_experiment(oslr.ExperimentSpec(
        "toy-sum", "a toy", run, summary=lambda df: f"the toy's summary of {len(df)} row",
        learners=("ogd-full",)))
    (tmp_path / "s").mkdir()  # an empty folder given as --out: nothing earlier to speak of
    assert main(["experiment", "toy-sum", "--out", str(tmp_path / "s"), "--no-progress",
                 "--set", "eta=0.5"]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("the toy's summary of 1 row\n") and err == ""
    config = json.loads((tmp_path / "s" / "config.json").read_text())
    assert config["options"] == {"eta": 0.5} and config["runs"] is None
    assert main(["experiment", "toy-sum", "--out", str(tmp_path / "j"), "--json"]) == 0
    assert capsys.readouterr().out == '[\n {\n  "x":1\n }\n]\n'
    # a process other than 0 works in its own scratch folder, removed at the end
    monkeypatch.setattr(cli_run, "_start_distributed", lambda args: 1)
    seen.clear()
    assert main(["experiment", "toy-sum", "--out", str(tmp_path / "p"), "--seed", "5",
                 "--quick", "--runs", "3"]) == 0
    assert seen == [(3, 5, True, False, tmp_path / "p" / ".process-1")]
    assert not (tmp_path / "p" / ".process-1").exists()


def test_plot__the_axes_reach_the_figure(tmp_path, monkeypatch, capsys):
    from oslr.saved import SavedStudy
    from tests.test_saved import _study

    out, _ = _study(tmp_path)
    seen = []
    monkeypatch.setattr(SavedStudy, "plot", lambda self, path, **kw: seen.append(kw))
    assert main(["plot", str(out), "--axes", "logx"]) == 0
    assert seen == [{"metric": None, "axes": "logx", "band": "pointwise"}]


def test_experiment_help__names_every_experiment_with_its_full_and_quick_size(capsys):
    from oslr.registry import EXPERIMENTS

    with pytest.raises(SystemExit):
        main(["experiment", "--help"])
    text = capsys.readouterr().out
    sizes = text[text.index("sizes (the full run; quick: what --quick runs):"):]
    flat = " ".join(sizes.split())
    for name in EXPERIMENTS:
        assert f" {name}: {' '.join(EXPERIMENTS[name].sizes.split())}" in flat, name
        assert "quick:" in EXPERIMENTS[name].sizes, name


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
    from oslr import study as study_mod

    monkeypatch.setattr(study_mod, "play", lambda *a, **k: (_ for _ in ()).throw(
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
        f"oslr: error: --bounds {bounds.replace(',', ',')} with the best as reference: its pairs "
        "are taken either way round, so give symmetric bounds (e.g. --bounds=-5,5)")
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
