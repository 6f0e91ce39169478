"""`oslr reproduce`: the manifest covers every docs/figures file, files are moved under the docs'
names and stamped with the commit."""

import json
import re
from pathlib import Path

import pandas as pd
import pytest

from oslr.cli import main
from oslr.experiments import reproduce as rep

FIGURES = Path(__file__).resolve().parents[2] / "docs" / "figures"


def test_manifest__every_docs_figure_file_has_exactly_one_step():
    made = [name for step in rep.STEPS for name in step.all_files]
    assert len(made) == len(set(made))  # no file written by two steps
    on_disk = {p.name for p in FIGURES.iterdir()
               if p.name != "STAMPS.json" and not p.name.startswith(".")}  # .work-STEP too
    # every file on disk has its step; every table and figure is on disk (the per-run files
    # arrive with the next regeneration of the docs)
    tables = {name for step in rep.STEPS for name in step.files}
    assert on_disk <= set(made), sorted(on_disk - set(made))
    assert tables <= on_disk, sorted(tables - on_disk)
    docs = {p.stem for p in FIGURES.parent.glob("*.md")}
    assert {s.doc for s in rep.STEPS} <= docs


def test_select():
    assert [s.name for s in rep.select(["kale-results"])] == [
        "kale-calibrate", "kale-dantzig", "kale-greedy"]
    assert [s.name for s in rep.select(["kpm-pege"])] == ["kpm-pege"]
    assert len(rep.select(None)) == len(rep.STEPS)
    with pytest.raises(ValueError, match=r"unknown steps \['nope'\]"):
        rep.select(["nope"])


def test_reproduce__renames_and_stamps(tmp_path, monkeypatch):
    def run(out, quick, progress):
        (out / "made.csv").write_text("a\n1\n")

    cleared = []
    monkeypatch.setattr(rep.program, "clear_compiled", lambda: cleared.append(True))
    step = rep.Step("toy", "arena", ("docs-name.csv",), run, produced=("made.csv",))
    stamps = rep.reproduce([step, step], tmp_path / "out", log=lambda *a: None)
    assert len(cleared) == 2  # each step's compiled programs dropped after it
    assert (tmp_path / "out" / "docs-name.csv").read_text() == "a\n1\n"
    saved = json.loads((tmp_path / "out" / "STAMPS.json").read_text())
    assert saved == stamps and set(saved) == {"docs-name.csv", "toy-runs.parquet"}
    stamp = saved["docs-name.csv"]
    assert re.fullmatch(r"[0-9a-f]{40}", stamp["commit"]) and isinstance(stamp["dirty"], bool)
    assert stamp["step"] == "toy" and stamp["quick"] is False
    missing = rep.Step("bad", "arena", ("x.csv",), lambda out, q, p: None)
    with pytest.raises(RuntimeError, match="did not write x.csv"):
        rep.reproduce([missing], tmp_path / "out", log=lambda *a: None)
    rep.reproduce([missing], tmp_path / "out", quick=True, log=lambda *a: None)  # noted only


def test_cli__list_and_refusals(capsys, monkeypatch, tmp_path):
    assert main(["reproduce", "--list"]) == 0
    out = capsys.readouterr().out
    assert "kale-dantzig" in out and "wll-rates-hi-a9a.csv" in out
    monkeypatch.chdir(FIGURES.parents[1])
    assert main(["reproduce", "--quick", "--out", "docs/figures"]) == 2
    assert "--quick numbers are not the docs' numbers" in capsys.readouterr().err
    assert main(["reproduce", "--only", "zzz", "--out", str(tmp_path / "o")]) == 2
    assert "unknown steps ['zzz']" in capsys.readouterr().err


@pytest.mark.slow
def test_reproduce__a_real_step_at_quick_size(tmp_path):
    stamps = rep.reproduce(rep.select(["wll-rates-hi-a9a"]), tmp_path, quick=True,
                           log=lambda *a: None)
    assert set(stamps) == {"wll-rates-hi-a9a.csv", "wll-rates-hi-a9a-runs.parquet"}
    assert all(s["quick"] for s in stamps.values())
    assert (tmp_path / "wll-rates-hi-a9a.csv").read_text().startswith("learner,")
    import pandas as pd

    runs = pd.read_parquet(tmp_path / "wll-rates-hi-a9a-runs.parquet")
    assert {"study", "problem", "learner", "params", "metric", "run", "t", "value"} <= set(runs)
    assert {"param_eta_scale", "param_c0", "info_n_resamples"} <= set(runs)  # the grid's values
    assert (runs["problem"] == "a9a").all() and runs["run"].nunique() >= 2


def test_reproduce__kpm_replay_men_runs_the_documented_study(tmp_path, monkeypatch):
    # docs/kpm-results.md's men table: exact LinUCB beside the SGD variants, kappa = 1, 3 runs
    import pandas as pd

    import oslr.experiments.kpm as kpm

    seen = {}

    def fake(campaign, **kw):
        seen.update(campaign=campaign, **kw)
        return pd.DataFrame([{"learner": "linucb"}])

    monkeypatch.setattr(kpm, "kpm_replay", fake)
    rep.select(["kpm-replay-men"])[0].run(tmp_path, False, False)
    assert seen["campaign"] == "men" and seen["kappas"] == (1.0,) and seen["runs"] == 20
    assert seen["learners"] == ("linucb", *kpm.FAST) and seen["horizon"] is None
    assert (tmp_path / "kpm-replay-men.csv").is_file()


def test_reproduce__a_kill_while_files_are_put_in_place_leaves_no_stale_stamp(tmp_path,
                                                                             monkeypatch):
    class Killed(BaseException):
        pass

    def run(out, quick, progress):
        (out / "a.csv").write_text("new a\n")
        (out / "b.csv").write_text("new b\n")

    monkeypatch.setattr(rep.program, "clear_compiled", lambda: None)
    step = rep.Step("toy", "arena", ("a.csv", "b.csv"), run)
    out = tmp_path / "out"
    rep.reproduce([step], out, log=lambda *a: None)
    (out / "a.csv").write_text("old a\n")
    real = rep.atomic.copy_atomic
    copies = []

    def dying_copy(src, dst):  # a.csv is put in place, then the process dies
        if copies:
            raise Killed
        copies.append(dst)
        real(src, dst)

    monkeypatch.setattr(rep.atomic, "copy_atomic", dying_copy)
    with pytest.raises(Killed):
        rep.reproduce([step], out, log=lambda *a: None)
    stamps = json.loads((out / "STAMPS.json").read_text())
    assert (out / "a.csv").read_text() == "new a\n"
    for name in ("a.csv", "b.csv"):  # neither claims a finished run of this step
        assert stamps[name]["commit"].startswith("incomplete: killed while writing; rerun step toy")
    # a damaged stamps file is refused with the fix
    (out / "STAMPS.json").write_text("{")
    with pytest.raises(ValueError, match=r"stamps file .*STAMPS\.json cannot be read .*delete it"):
        rep.reproduce([step], out, log=lambda *a: None)


def test_manifest__each_experiment_step_feeds_the_page_its_spec_names():
    from oslr.experiments.reproduce import STEPS
    from oslr.registry import EXPERIMENTS

    for step in STEPS:
        name = step.name if step.name in EXPERIMENTS else step.name.rsplit("-", 1)[0]
        if name in EXPERIMENTS and EXPERIMENTS[name].docs:
            assert f"docs/{step.doc}.md" == EXPERIMENTS[name].docs, step.name


def test_reproduce__two_runs_into_one_folder_keep_each_others_stamps(tmp_path, monkeypatch):
    monkeypatch.setattr(rep.program, "clear_compiled", lambda: None)
    out = tmp_path / "out"

    def other(out_, quick, progress):  # another reproduce stamps its file while this one runs
        (out_ / "mine.csv").write_text("m\n")
        if not (out / "theirs.csv").exists():
            rep.reproduce([rep.Step("theirs", "arena", ("theirs.csv",),
                                    lambda o, q, p: (o / "theirs.csv").write_text("t\n"))],
                          out, log=lambda *a: None)

    stamps = rep.reproduce([rep.Step("mine", "arena", ("mine.csv",), other)], out,
                           log=lambda *a: None)
    saved = json.loads((out / "STAMPS.json").read_text())
    assert saved == stamps
    assert {"mine.csv", "theirs.csv", "mine-runs.parquet", "theirs-runs.parquet"} == set(saved)
    assert saved["theirs.csv"]["step"] == "theirs" and saved["mine.csv"]["step"] == "mine"
    assert sorted(p.name for p in out.iterdir()) == sorted([*saved, "STAMPS.json"])


def test_reproduce__a_killed_step_resumes_from_its_work_folder(tmp_path, monkeypatch):
    monkeypatch.setattr(rep.program, "clear_compiled", lambda: None)
    out, calls = tmp_path / "out", []

    def run(work, quick, progress):  # saves a "cell" per call in a folder, like the arena
        calls.append(sorted(p.name for p in (work / "cells").glob("*")) if (
            work / "cells").exists() else None)
        (work / "cells").mkdir(exist_ok=True)
        (work / "cells" / f"cell{len(calls)}.json").write_text("{}")
        assert not (work / "loose.txt").exists()  # a killed run's loose files are not reused
        (work / "loose.txt").write_text("partial")
        if len(calls) == 1:
            raise KeyboardInterrupt  # killed after its first cell
        (work / "own-runs.parquet").write_text("per-run")
        (work / "t.csv").write_text("t\n")

    step = rep.Step("own", "arena", ("t.csv", "own-runs.parquet"), run)
    assert step.writes_own_runs and step.all_files == ("t.csv", "own-runs.parquet")
    with pytest.raises(KeyboardInterrupt):
        rep.reproduce([step], out, log=lambda *a: None)
    assert (out / ".work-own" / "cells" / "cell1.json").exists()
    said = []
    rep.reproduce([step], out, log=said.append)
    assert calls == [None, ["cell1.json"]] and any("resuming" in s for s in said)
    assert not (out / ".work-own").exists()  # removed once the files are in place
    # the step's own per-run file is kept, not replaced by the recorder's
    assert (out / "own-runs.parquet").read_text() == "per-run"
    assert set(json.loads((out / "STAMPS.json").read_text())) == {"t.csv", "own-runs.parquet"}


def test_reproduce__a_second_process_on_the_same_step_is_refused_naming_the_first(
        tmp_path, monkeypatch):
    from oslr.atomic import FolderBusy, FolderLock

    monkeypatch.setattr(rep.program, "clear_compiled", lambda: None)
    out, ran = tmp_path / "out", []
    step = rep.Step("s", "arena", ("s.csv",), lambda o, q, p: ran.append(o) or (
        o / "s.csv").write_text("s\n"))
    (out / ".work-s").mkdir(parents=True)
    (out / ".work-s" / "cell.json").write_text("{}")  # the first process's saved work
    with FolderLock(out / ".work-s", "the other"):
        with pytest.raises(FolderBusy, match=r"^step s's work folder .*\.work-s is in use by "
                           r"pid \d+ on .*; wait for it to finish"):
            rep.reproduce([step], out, log=lambda *a: None)
    assert ran == [] and (out / ".work-s" / "cell.json").exists()  # nothing adopted or removed
    assert not (out / "s.csv").exists()
    # the lock file of a killed process is not taken for a stale loose file: it resumes
    said = []
    rep.reproduce([step], out, log=said.append)
    assert ran == [out / ".work-s"] and any("resuming" in s for s in said)
    assert (out / "s.csv").read_text() == "s\n" and not (out / ".work-s").exists()


# ------------------------------------------- the [WLL] and [KPM] steps, on recorded functions


def _recorder(monkeypatch, module, names):
    """Replace `module.NAME` for each name by a function that records its call and returns a
    small table (runs 2, horizon 700 in its first row; a second row differs, so that a title
    read from another row shows) or a figure; returns the list of calls."""
    import matplotlib.pyplot as plt

    calls = []

    def fake(name):
        def f(*args, **kwargs):
            calls.append((name, args, kwargs))
            if name.startswith("plot"):
                return plt.figure()
            return pd.DataFrame({"runs": [2, 9], "horizon": [700, 900], "x": [1.0, 2.0]})
        return f

    for name in names:
        monkeypatch.setattr(module, name, fake(name))
    return calls


@pytest.mark.parametrize("quick", [True, False])
def test_wll_steps__grids_sizes_files_and_titles(tmp_path, monkeypatch, quick):
    from oslr.experiments import wll

    calls = _recorder(monkeypatch, wll, ["wll_reward_vs_k", "wll_rate_sweep", "wll_redundant",
                                         "plot_experiment", "plot_rate_sweep"])
    rep._wll_k("covtype", (0.1, 0.2, 0.3), "k-stem", eta_scale=30.0)(tmp_path, quick, True)
    rep._wll_rates("a9a", (1.0, 3.0, 10.0), (0.0, 0.1), "r-stem", horizon=900)(
        tmp_path, quick, True)
    rep._wll_rates("a9a", (1.0, 3.0), (0.0,), "hi-stem", plot=False)(tmp_path, quick, False)
    rep._wll_redundant("d-stem", True)(tmp_path, quick, True)
    (k, k_plot, rates, rates_plot, hi, red, red_plot) = calls
    assert k == ("wll_reward_vs_k", ("covtype", (0.1, 0.2) if quick else (0.1, 0.2, 0.3)),
                 {"runs": 2 if quick else 50, "horizon": 2000 if quick else None,
                  "progress": True, "eta_scale": 30.0})
    assert k_plot[1][1:3] == ("ratio", tmp_path / "k-stem.png")
    # each figure drawn from the table its study returned
    assert list(k_plot[1][0]["runs"]) == [2, 9] and list(red_plot[1][0]["runs"]) == [2, 9]
    assert k_plot[1][3] == "covtype: 2 shuffles, T=700"
    assert rates == ("wll_rate_sweep", ("a9a", (1.0, 3.0) if quick else (1.0, 3.0, 10.0),
                                        (0.0, 0.1)),
                     {"runs": 4 if quick else 100, "horizon": 500 if quick else 900,
                      "progress": True})
    assert rates_plot[1][1:] == (tmp_path / "r-stem.png", "a9a: 2 shuffles, T=700")
    assert hi[0] == "wll_rate_sweep" and hi[2]["horizon"] == (500 if quick else 5000)
    assert red == ("wll_redundant", ("a9a", (0.2,) if quick else (0.2, 0.5, 1.0, 1.5)),
                   {"runs": 2 if quick else 50, "horizon": 2000 if quick else None,
                    "hold_rates": True, "progress": True, "eta_scale": 30.0, "c0": 0.01})
    assert red_plot[1][1:] == ("rho", tmp_path / "d-stem.png", "a9a: 2 shuffles, T=700")
    for stem in ("k-stem", "r-stem", "hi-stem", "d-stem"):  # the table as written, no index
        assert (tmp_path / f"{stem}.csv").read_text().splitlines()[0] == "runs,horizon,x"
    assert not (tmp_path / "hi-stem.png").exists()


@pytest.mark.parametrize("quick", [True, False])
def test_kpm_replay_men_step__linucb_beside_the_sgd_variants(tmp_path, monkeypatch, quick):
    from oslr.experiments import kpm

    calls = _recorder(monkeypatch, kpm, ["kpm_replay"])
    rep._kpm_replay_men(tmp_path, quick, True)
    assert calls == [("kpm_replay", ("men",), {
        "kappas": (1.0,), "runs": 2 if quick else 20, "learners": ("linucb", *kpm.FAST),
        "progress": True, "horizon": 1000 if quick else None})]
    assert (tmp_path / "kpm-replay-men.csv").read_text().startswith("runs,horizon,x\n")


def test_spec_step__named_by_the_experiment_and_its_dataset_with_produced_names():
    step = rep._spec_step("kpm-runtime", ("kpm-runtime.csv",),
                          produced=("kpm-runtime-synthetic.csv",))
    assert (step.name, step.doc) == ("kpm-runtime", "kpm-results")
    assert step.outputs() == {"kpm-runtime-synthetic.csv": "kpm-runtime.csv"}
    step = rep._spec_step("kpm-replay", ("kpm-replay-all.csv",), "all")
    assert step.name == "kpm-replay-all" and step.outputs() == {
        "kpm-replay-all.csv": "kpm-replay-all.csv"}
    row = rep.manifest().set_index("step").loc["kpm-replay-all"]
    assert row["files"] == "kpm-replay-all.csv, kpm-replay-all-runs.parquet"


def test_reproduce__stamps_the_date_and_the_steps_own_seconds(tmp_path, monkeypatch):
    import datetime

    def run(out, quick, progress):
        (out / "made.csv").write_text("a\n")

    step = rep.Step("toy", "arena", ("made.csv",), run)
    before = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
    stamps = rep.reproduce([step], tmp_path / "a" / "b", log=lambda *a: None)  # parents made
    stamp = stamps["made.csv"]
    assert 0 <= stamp["seconds"] < 60
    when = datetime.datetime.fromisoformat(stamp["date"])
    assert before <= when <= datetime.datetime.now(datetime.timezone.utc)


def test_reproduce__a_finished_studys_folder_is_refused_at_once_and_under_the_step_lock(
        tmp_path, monkeypatch):
    from oslr.folder import FolderRefused

    monkeypatch.setattr(rep.program, "clear_compiled", lambda: None)
    ran = []
    step = rep.Step("s", "arena", ("s.csv",), lambda o, q, p: ran.append(o) or (
        o / "s.csv").write_text("s\n"))
    done = tmp_path / "done"
    done.mkdir()
    (done / "config.json").write_text('{"experiment": "arena"}')
    with pytest.raises(FolderRefused, match=rf"^--out {done} already holds the finished "
                                            r"experiment 'arena'; it is never overwritten"):
        rep.reproduce([step], done, log=lambda *a: None)
    assert sorted(p.name for p in done.iterdir()) == ["config.json"] and ran == []
    # a study that finishes in --out while the step's lock is being taken: refused under it
    out = tmp_path / "out"
    real = rep.atomic.FolderLock.acquire

    def acquire(self):
        lock = real(self)
        (out / "config.json").write_text("{}")
        return lock

    monkeypatch.setattr(rep.atomic.FolderLock, "acquire", acquire)
    with pytest.raises(FolderRefused, match="already holds a finished oslr run study"):
        rep.reproduce([step], out, log=lambda *a: None)
    assert ran == [] and not (out / "s.csv").exists()


def test_reproduce__each_step_gets_quick_and_progress_and_a_numbered_line(tmp_path,
                                                                          monkeypatch):
    monkeypatch.setattr(rep.program, "clear_compiled", lambda: None)
    calls, said = [], []

    def run(name):
        def write(out, quick, progress):
            calls.append((name, quick, progress))
            (out / f"{name}.csv").write_text("a\n1\n")
        return write

    steps = [rep.Step(n, "arena", (f"{n}.csv",), run(n)) for n in ("a", "b")]
    rep.reproduce(steps, tmp_path / "o", log=said.append)  # progress off unless asked
    rep.reproduce(steps[:1], tmp_path / "o", quick=True, progress=True, log=said.append)
    assert calls == [("a", False, False), ("b", False, False), ("a", True, True)]
    assert [s for s in said if s.startswith("[")] == ["[1/2] a (arena)", "[2/2] b (arena)",
                                                      "[1/1] a (arena)"]
    # no step: the stamps already there; a damaged stamps file: refused before any work
    assert set(rep.reproduce([], tmp_path / "o", log=said.append)) == {
        "a.csv", "b.csv", "a-runs.parquet", "b-runs.parquet"}
    (tmp_path / "o" / "STAMPS.json").write_text("{")
    with pytest.raises(ValueError, match=r"stamps file .*STAMPS\.json cannot be read"):
        rep.reproduce(steps, tmp_path / "o", log=said.append)
    assert len(calls) == 3
