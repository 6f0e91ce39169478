"""`oslr experiment` and `oslr reproduce` from the command line (oslr.cli.commands)."""

import json
import time as time_module
from pathlib import Path

import pandas as pd
import pytest

from oslr.cli import main
from oslr.cli import run as cli_run
from tests.helpers import ACROSS_PROCESSES_RTOL, subprocess_env
from tests.cli.helpers import _small, _BIG_EXPERIMENT, _finishes_meanwhile, oslr_load


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


def test_reproduce__the_progress_flag_reaches_the_steps(tmp_path, monkeypatch):
    import oslr.experiments.reproduce as rep

    calls = []
    monkeypatch.setattr(rep, "reproduce", lambda *a: calls.append(a))
    assert main(["reproduce", "--only", "wll-k-a9a", "--quick", "--out", str(tmp_path),
                 "--no-progress"]) == 0
    assert main(["reproduce", "--only", "wll-k-a9a", "--quick", "--out", str(tmp_path)]) == 0
    assert [c[2:] for c in calls] == [(True, False), (True, True)]


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
