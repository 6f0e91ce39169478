"""`oslr reproduce`: the manifest covers every docs/figures file, files are moved under the docs'
names and stamped with the commit."""

import json
import re
from pathlib import Path

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
    monkeypatch.setattr(rep.sim, "clear_compiled", lambda: cleared.append(True))
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
    assert seen["campaign"] == "men" and seen["kappas"] == (1.0,) and seen["runs"] == 3
    assert seen["learners"] == ("linucb", *kpm.FAST) and seen["horizon"] is None
    assert (tmp_path / "kpm-replay-men.csv").is_file()


def test_reproduce__a_kill_while_files_are_put_in_place_leaves_no_stale_stamp(tmp_path,
                                                                             monkeypatch):
    class Killed(BaseException):
        pass

    def run(out, quick, progress):
        (out / "a.csv").write_text("new a\n")
        (out / "b.csv").write_text("new b\n")

    monkeypatch.setattr(rep.sim, "clear_compiled", lambda: None)
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
    monkeypatch.setattr(rep.sim, "clear_compiled", lambda: None)
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
    monkeypatch.setattr(rep.sim, "clear_compiled", lambda: None)
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

    monkeypatch.setattr(rep.sim, "clear_compiled", lambda: None)
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
