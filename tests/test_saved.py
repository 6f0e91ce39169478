"""Reading a finished study back (`oslr.saved`): every file round-trips, and what is recomputed
from the per-run files equals what the study wrote or an independent recomputation."""

import json
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

import oslr
from oslr import report
from oslr.cli import main
from tests.helpers import as_older_oslr, reseal
from oslr.result import SimResult
from oslr.saved import LoadError, load, merge

R, C = 6, 4


def _bandit(learner, regrets, grid=None, seed=0):
    """A bandit SimResult whose pseudo-regret curve of run r is `regrets[g][r]` x (1, 2, 3, 4)
    / 4 (so the final is regrets[g][r])."""
    regrets = np.asarray(regrets, np.float64)  # (G, R)
    grid = grid or [{}]
    curves = {"pseudo_regret": regrets[:, :, None] * np.arange(1, C + 1) / C,
              "reward": np.ones((len(grid), R, C)), "accepted": np.ones((len(grid), R, C))}
    return SimResult(learner=learner, problem="linear-bandit", family="bandit", horizon=40,
                     n_runs=R, seed=seed, ckpts=np.array([10, 20, 30, 40]), grid=grid,
                     final={n: v[:, :, -1] for n, v in curves.items()}, curves=curves,
                     params=SimpleNamespace(eps=np.array([p.get("eps", 0.1) for p in grid])))


def _study(tmp_path, seed=0, name="s"):
    rng = np.random.default_rng(seed)
    base = rng.normal(10.0, 3.0, R)  # a shared run effect: the pairing matters
    results = [_bandit("eps-greedy", [base + 1.0 + 0.1 * rng.normal(size=R),
                                      base + 3.0 + 0.1 * rng.normal(size=R)],
                       grid=[{"eps": 0.05}, {"eps": 0.2}], seed=seed),
               _bandit("linucb", [base + rng.normal(0.0, 0.1, R)], seed=seed)]
    out = tmp_path / name
    report.save_study(results, out, config={"problem": "linear-bandit", "horizon": 40,
                                            "runs": R, "seed": seed}, plot=False,
                      compare_to="linucb")
    return out, results


def test_load__every_file_of_a_run_folder_round_trips(tmp_path):
    out, results = _study(tmp_path)
    (out / "extra.csv").write_text("a,b\n1,2\n")  # not the study's: named, not read
    (out / "fig.svg").write_text("<svg/>")  # a figure drawn later: listed
    study = oslr.load(out)
    written = json.loads((out / "config.json").read_text())
    assert study.kind == "run" and study.config == {k: v for k, v in written.items()
                                                    if k != "sealed"}
    assert {"reference", "diff", "p_holm", "verdict"} <= set(study.summary)  # compare_to
    for attr, name in (("summary", "summary.csv"), ("curves", "curves.csv"),
                       ("runs", "runs.csv"), ("compare_table", "compare.csv")):
        pd.testing.assert_frame_equal(getattr(study, attr), pd.read_csv(out / name))
    pd.testing.assert_frame_equal(study.run_curves, pd.read_parquet(out / "runs.parquet"))
    assert study.until is None
    assert study.tables == {} and study.others == [out / "extra.csv"]
    assert study.figures == [out / "fig.svg"]
    assert study.documents["summary"] == json.loads((out / "summary.json").read_text())
    assert set(study.manifest) == {"summary.csv", "summary.json", "curves.csv", "runs.csv",
                                   "runs.parquet", "compare.csv"}
    assert study.files() == sorted(p.name for p in out.iterdir() if p.name != "extra.csv")
    as_older_oslr(out)  # a folder of an older oslr: every file read, unchecked
    older = oslr.load(out)
    assert older.manifest is None and older.others == []
    pd.testing.assert_frame_equal(older.tables["extra"], pd.DataFrame({"a": [1], "b": [2]}))
    assert older.files() == sorted(p.name for p in out.iterdir())


def test_saved_study__finals_and_compare_equal_the_studys_own(tmp_path):
    out, results = _study(tmp_path)
    study = load(out)
    finals = study.finals()
    want, metric = report.per_run_finals(results)
    assert metric == "pseudo_regret" and list(finals) == list(want)
    for name in want:
        np.testing.assert_allclose(finals[name], want[name])
    table = study.compare("linucb")
    written = pd.read_csv(out / "compare.csv")
    pd.testing.assert_frame_equal(table.drop(columns="metric"),
                                  written.drop(columns="metric"), check_dtype=False)
    # independently: a paired t test of eps=0.2 against linucb
    d = finals["eps-greedy [eps=0.2]"] - finals["linucb"]
    row = table.set_index("name").loc["eps-greedy [eps=0.2]"]
    assert row["p"] == pytest.approx(sps.ttest_rel(finals["eps-greedy [eps=0.2]"],
                                                    finals["linucb"]).pvalue, rel=1e-9)
    assert row["diff"] == pytest.approx(d.mean()) and row["verdict"] == "worse"
    with pytest.raises(LoadError, match="names none of the entries"):
        study.compare("eps-greedy")  # two grid points: which one?


def test_saved_study__final_against_the_swept_parameter(tmp_path):
    out, _ = _study(tmp_path)
    study = load(out)
    table = study.final_vs("eps")
    assert table["learner"].tolist() == ["eps-greedy", "eps-greedy"]  # linucb has no eps
    assert table["eps"].tolist() == [0.05, 0.2] and (table["n_runs"] == R).all()
    finals = study.finals()
    for eps, row in zip((0.05, 0.2), table.itertuples()):
        x = finals[f"eps-greedy [eps={eps:.4g}]"]
        half = sps.t.ppf(0.975, R - 1) * x.std(ddof=1) / np.sqrt(R)
        assert (row.mean, row.ci_low, row.ci_high) == pytest.approx(
            (x.mean(), x.mean() - half, x.mean() + half))
    with pytest.raises(LoadError, match=r"'k' was not swept; swept parameters: \['eps'\]"):
        study.final_vs("k")
    # its level reaches the intervals
    narrow = study.final_vs("eps", level=0.5)
    x = finals["eps-greedy [eps=0.05]"]
    half = sps.t.ppf(0.75, R - 1) * x.std(ddof=1) / np.sqrt(R)
    assert narrow["ci_high"].iloc[0] == pytest.approx(x.mean() + half)


def test_saved_study__figures_are_written_in_the_suffixs_format(tmp_path):
    out, _ = _study(tmp_path)
    study = load(out)
    fig = study.plot_final("eps", tmp_path / "f.pdf")
    assert (tmp_path / "f.pdf").read_bytes()[:4] == b"%PDF" and len(fig.axes) == 1
    fig = study.plot(tmp_path / "r.svg", axes="linear")
    assert b"<svg" in (tmp_path / "r.svg").read_bytes()[:400]
    ax = fig.axes[0]
    assert [line.get_label() for line in ax.lines] == [
        "eps-greedy [eps=0.05]", "eps-greedy [eps=0.2]", "linucb"]
    np.testing.assert_allclose(ax.lines[2].get_ydata(), study.finals()["linucb"].mean()
                               * np.arange(1, C + 1) / C)


def test_saved_study__xarray_cube_entry_run_t(tmp_path):
    xr = pytest.importorskip("xarray")
    out, _ = _study(tmp_path)
    ds = load(out).to_xarray()
    assert isinstance(ds, xr.Dataset) and ds["value"].dims == ("entry", "run", "t")
    assert ds["learner"].values.tolist() == ["eps-greedy", "eps-greedy", "linucb"]
    assert ds["params"].values.tolist() == ["eps=0.05", "eps=0.2", "default"]
    assert ds.sizes == {"entry": 3, "run": R, "t": C}
    np.testing.assert_allclose(ds["value"].sel(entry="linucb", t=40).values,
                               load(out).finals()["linucb"])


def test_merge__more_runs_of_the_same_study_compare_paired_over_seed_and_run(tmp_path):
    a, _ = _study(tmp_path, seed=0, name="a")
    b, _ = _study(tmp_path, seed=1, name="b")
    merged = merge([a, b], tmp_path / "m")
    assert merged.config["seed"] == [0, 1] and merged.config["runs"] == 2 * R
    fa, fb, fm = load(a).finals(), load(b).finals(), merged.finals()
    for name in fa:
        np.testing.assert_allclose(fm[name], np.concatenate([fa[name], fb[name]]))
    assert merged.compare("linucb").set_index("name").loc["linucb", "verdict"] == "reference"
    assert list(merged.summary) == ["learner", "problem", "params", "param_eps"]  # the labels
    cube = merged.to_xarray()  # runs renumbered over the (seed, run) pairs
    assert cube.sizes["run"] == 2 * R
    np.testing.assert_allclose(cube["value"].sel(entry="linucb", t=40).values, fm["linucb"])
    fig = merged.plot()
    assert "mean over 12 runs" in fig.axes[0].get_title()
    with pytest.raises(LoadError, match=r"share runs of a seed \(the same streams twice\); merge "
                                        r"studies of different seeds\.$"):
        merge([a, a], tmp_path / "m2")
    # one learner, one run, one metric: a single (seed, run) pair twice is refused as well
    one = SimResult(learner="linucb", problem="linear-bandit", family="bandit", horizon=40,
                    n_runs=1, seed=0, ckpts=np.array([40]), grid=[{}],
                    final={n: np.ones((1, 1)) for n in ("pseudo_regret", "reward", "accepted")},
                    curves={n: np.ones((1, 1, 1)) for n in ("pseudo_regret", "reward",
                                                            "accepted")},
                    params=SimpleNamespace(eps=np.array([0.1])))
    for name in ("o1", "o2"):
        report.save_study([one], tmp_path / name, config={"problem": "linear-bandit",
                                                          "horizon": 40, "runs": 1, "seed": 0},
                          plot=False)
    with pytest.raises(LoadError, match=r"share runs of a seed"):
        merge([tmp_path / "o1", tmp_path / "o2"], tmp_path / "m4")
    (tmp_path / "o2" / "runs.csv").unlink()
    (tmp_path / "o2" / "runs.parquet").unlink(missing_ok=True)
    with pytest.raises(LoadError, match=r"^.*o2/runs\.csv is missing \(manifest\.json lists "
                                        r"it\): the folder is incomplete; copy it again\.$"):
        merge([tmp_path / "o1", tmp_path / "o2"], tmp_path / "m5")
    as_older_oslr(tmp_path / "o2")  # an older oslr's folder without them
    with pytest.raises(LoadError, match=r"^.*o2 has no per-run files to merge\.$"):
        merge([tmp_path / "o1", tmp_path / "o2"], tmp_path / "m5")
    cfg = json.loads((b / "config.json").read_text())
    (b / "config.json").write_text(json.dumps({**cfg, "horizon": 80}))
    reseal(b)  # another study's settings, as its writer sealed them
    with pytest.raises(LoadError, match=r"another study than .* \(settings \['horizon'\] "
                                        r"differ\)"):
        merge([a, b], tmp_path / "m3")


def test_final_vs__ties_of_the_swept_value_in_grid_order_and_a_one_point_plot(tmp_path):
    # two grid points share eps = 0.05 (they differ in another parameter): listed in the order
    # they ran, lam = 2 first; a single point still plots (its metric names the y axis)
    grid = [{"eps": 0.05, "lam": 2.0}, {"eps": 0.05, "lam": 1.0}]
    res = _bandit("eps-greedy", [np.full(R, 3.0), np.full(R, 1.0)], grid=grid)
    report.save_study([res], tmp_path / "t", config={"problem": "linear-bandit", "horizon": 40,
                                                     "runs": R, "seed": 0}, plot=False)
    table = load(tmp_path / "t").final_vs("eps")  # the other swept parameter kept apart
    assert table[["lam", "eps", "mean"]].values.tolist() == [[1.0, 0.05, 1.0],
                                                              [2.0, 0.05, 3.0]]
    one = _bandit("eps-greedy", [np.full(R, 2.0)], grid=[{"eps": 0.05}])
    report.save_study([one], tmp_path / "one", config={"problem": "linear-bandit",
                                                       "horizon": 40, "runs": R, "seed": 0},
                      plot=False)
    fig = load(tmp_path / "one").plot_final("eps")
    assert fig.axes[0].get_ylabel() != ""


def test_load__refusals_name_the_folder_and_the_fix(tmp_path):
    with pytest.raises(LoadError, match="is not a folder"):
        load(tmp_path / "none")
    (tmp_path / "u" / ".checkpoints").mkdir(parents=True)
    with pytest.raises(LoadError, match="no config.json: not a finished study \\(an unfinished "
                                        "`oslr run`: rerun the same command to resume it\\)"):
        load(tmp_path / "u")
    (tmp_path / "u" / "config.json").write_text("{")
    with pytest.raises(LoadError, match=r"^.*config\.json: not valid JSON \(Expecting "):
        load(tmp_path / "u")
    # another JSON document of a finished study, damaged: named
    out, _ = _study(tmp_path, name="j")
    (out / "summary.json").write_text("{")
    with pytest.raises(LoadError, match=r"^.*summary\.json has 1 bytes where manifest\.json "
                                        r"records \d+: cut short or changed; copy it again\.$"):
        load(out)
    as_older_oslr(out)  # an older oslr's folder: the parse fails instead
    with pytest.raises(LoadError, match=r"^.*summary\.json: not valid JSON \(Expecting "):
        load(out)
    # a folder that never held a study: no hint about resuming
    (tmp_path / "e").mkdir()
    with pytest.raises(LoadError, match=r"no config\.json: not a finished study[^(]*$"):
        load(tmp_path / "e")


def test_cli__plot_compare_and_merge_saved_folders(tmp_path, capsys):
    a, _ = _study(tmp_path, seed=0, name="a")
    b, _ = _study(tmp_path, seed=1, name="b")
    assert main(["compare", str(a), "--to", "linucb", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["verdict"] for r in rows] == ["better" if r["diff"] < 0 else "worse"
                                            for r in rows[:2]] + ["reference"]
    assert main(["plot", str(a), "--against", "eps"]) == 0
    assert capsys.readouterr().out == f"wrote {a / 'final_vs_eps.png'}\n"
    assert (a / "final_vs_eps.png").read_bytes()[:4] == b"\x89PNG"
    assert main(["merge", str(a), str(b), "--out", str(tmp_path / "m")]) == 0
    assert capsys.readouterr().out == (f"merged 2 folders ({2 * R} runs per entry, seeds [0, 1]) "
                                       f"into {tmp_path / 'm'}\n")
    assert main(["compare", str(tmp_path / "nowhere")]) == 2
    assert capsys.readouterr().err == f"oslr: error: {tmp_path / 'nowhere'} is not a folder.\n"


def test_load__an_experiment_folder_with_its_tables_and_config(tmp_path, capsys, monkeypatch):
    import oslr.experiments as ex

    def fake(name, dataset, runs, seed, out, *a, **k):  # what experiments write
        frame = pd.DataFrame({"learner": ["a"], "regret": [1.5]})
        frame.to_csv(out / "kpm-pege.csv", index=False)
        frame.to_parquet(out / "kpm-pege-runs.parquet")
        (out / "arena.json").write_text('{"rows": [1, 2]}')
        (out / "arena.md").write_text("# a page\n")
        (out / "kpm-pege.png").write_bytes(b"\x89PNG")
        return frame

    monkeypatch.setattr(ex, "run_experiment", fake)
    out = tmp_path / "e"
    assert main(["experiment", "kpm-pege", "--quick", "--no-progress", "--out", str(out)]) == 0
    study = load(out)
    assert study.kind == "experiment" and study.config["experiment"] == "kpm-pege"
    pd.testing.assert_frame_equal(study.tables["kpm-pege"],
                                  pd.DataFrame({"learner": ["a"], "regret": [1.5]}))
    pd.testing.assert_frame_equal(study.tables["kpm-pege-runs"], study.tables["kpm-pege"])
    assert study.documents == {"arena": {"rows": [1, 2]}} and study.texts == {"arena": "# a page\n"}
    assert study.files() == sorted(p.name for p in out.iterdir() if not p.name.startswith("."))
    with pytest.raises(LoadError, match="no runs.csv: per-run values are written by `oslr run`"):
        study.finals()


def test_readme__the_loading_example_runs_on_a_saved_folder(tmp_path, monkeypatch):
    import re
    from pathlib import Path

    readme = (Path(__file__).parent.parent / "README.md").read_text()
    block = next(b for b in re.findall(r"```python\n(.*?)```", readme, flags=re.S)
                 if "oslr.load(" in b)
    rng = np.random.default_rng(0)
    grid = [{"eta": 0.01}, {"eta": 0.05}]
    results = [_bandit("ogd-full", rng.normal(5, 1, (2, R)), grid=grid),
               _bandit("ogd-random-subset", rng.normal(9, 1, (2, R)), grid=grid)]
    report.save_study(results, tmp_path / "results", config={"horizon": 40}, plot=False)
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    exec(compile(block, "README.md", "exec"), namespace)
    assert namespace["study"].final_vs("eta")["eta"].tolist() == [0.01, 0.05] * 2
    for name in ("final_vs_eta.pdf", "regret.svg"):
        assert (tmp_path / name).stat().st_size > 0


def test_plot_final__log_x_for_a_wide_positive_range_caps_and_grid(tmp_path):
    out, _ = _study(tmp_path)
    study = load(out)
    fig = study.plot_final("eps")  # 0.05 to 0.2: a 4x range, linear
    ax = fig.axes[0]
    assert ax.get_xscale() == "linear" and ax.xaxis.get_gridlines()[0].get_alpha() == 0.3
    assert ax.get_xlabel() == "eps" and ax.yaxis.label.get_fontsize() == 8
    assert fig._suptitle.get_text() == ("linear-bandit, T=40: final regret against eps")
    assert tuple(fig.get_size_inches()) == (3.6 + 1, 3.6)  # one learner has eps: one panel
    caps = ax.containers[0].lines[1]  # the error bars' caps, 2 x capsize points wide
    assert len(caps) == 2 and caps[0].get_markersize() == 6
    wide = study.summary.copy()
    wide["param_eps"] = wide["param_eps"].map({0.05: 0.01, 0.2: 1.0})  # a 100x range
    study.summary = wide
    assert study.plot_final("eps").axes[0].get_xscale() == "log"
    assert study.plot_final("eps", logx=False).axes[0].get_xscale() == "linear"


def test_load_merge_plot_and_cube__the_details_a_reader_meets(tmp_path):
    import matplotlib.pyplot as plt

    out, _ = _study(tmp_path)
    as_older_oslr(out)  # as an older oslr left it: its files are changed below
    (out / "notes.txt").write_text("seen")
    (out / "sub.csv").mkdir()  # a folder is not a table, whatever its name
    study = load(out)
    assert study.texts["notes"] == "seen" and "sub" not in study.tables
    # the bands at alpha 0.2 in the line's colour; plot_final's panels side by side
    fig = study.plot()
    assert [c.get_alpha() for c in fig.axes[0].collections] == [0.2] * 3
    import matplotlib.colors as mcolors

    for line, band in zip(fig.axes[0].lines, fig.axes[0].collections):
        assert mcolors.to_rgb(band.get_facecolor()[0]) == mcolors.to_rgb(line.get_color())
    assert fig.axes[0].get_title().startswith("linear-bandit, T=40: mean over 6 runs")
    plt.close(fig)
    two = [_bandit(name, np.ones((2, R)), grid=[{"eps": 0.05}, {"eps": 0.2}])
           for name in ("eps-greedy", "eps-first")]
    report.save_study(two, tmp_path / "two", config={"horizon": 40, "runs": R}, plot=False)
    as_older_oslr(tmp_path / "two")  # runs.csv is changed below
    fig = load(tmp_path / "two").plot_final("eps")
    first, second = (ax.get_position() for ax in fig.axes)
    assert first.x1 < second.x0 and first.y0 == second.y0  # one row of panels
    plt.close(fig)
    runs = pd.read_csv(tmp_path / "two" / "runs.csv")  # the finals' file
    runs = runs[~((runs["learner"] == "eps-first") & (runs["run"] == 0))]
    runs.to_csv(tmp_path / "two" / "runs.csv", index=False)
    with pytest.raises(LoadError, match=r"the entries ran different runs; a paired comparison "
                                        r"needs the same \(seed, run\) pairs for every entry \(an "
                                        r"experiment: pick studies that did, "
                                        r"\.select\(studies\)\)\.$"):
        load(tmp_path / "two").finals()
    cfg = json.loads((out / "config.json").read_text())
    (out / "config.json").write_text(json.dumps({k: v for k, v in cfg.items()
                                                 if k not in ("problem", "horizon")}))
    reseal(out)
    xr = pytest.importorskip("xarray")
    cube = load(out).to_xarray()
    assert isinstance(cube, xr.Dataset)
    assert cube.attrs == {"metric": cube.attrs["metric"], "problem": "", "horizon": 0}
    # a merged folder's config keeps no command line (it ran no command of its own)
    a, _ = _study(tmp_path, seed=0, name="a")
    b, _ = _study(tmp_path, seed=1, name="b")
    for f in (a, b):
        cfg = json.loads((f / "config.json").read_text())
        (f / "config.json").write_text(json.dumps({**cfg, "command": "oslr run ..."}))
        reseal(f)
    assert "command" not in merge([a, b], tmp_path / "m").config


def _runs_of(tmp_path, name, seed, n_runs):
    """A finished one-learner study of `n_runs` runs (another --runs than _study's)."""
    regrets = np.random.default_rng(seed).normal(10.0, 1.0, (1, n_runs))
    curves = {"pseudo_regret": regrets[:, :, None] * np.arange(1, C + 1) / C,
              "reward": np.ones((1, n_runs, C)), "accepted": np.ones((1, n_runs, C))}
    res = SimResult(learner="linucb", problem="linear-bandit", family="bandit", horizon=40,
                    n_runs=n_runs, seed=seed, ckpts=np.array([10, 20, 30, 40]), grid=[{}],
                    final={n: v[:, :, -1] for n, v in curves.items()}, curves=curves,
                    params=SimpleNamespace(eps=np.array([0.1])))
    report.save_study([res], tmp_path / name, config={"problem": "linear-bandit",
                                                      "horizon": 40, "runs": n_runs,
                                                      "seed": seed}, plot=False)
    return tmp_path / name


def test_merge__other_run_counts_join_and_a_finished_out_is_never_replaced(tmp_path, capsys):
    a, b = _runs_of(tmp_path, "a", 0, 3), _runs_of(tmp_path, "b", 1, 5)  # --runs 3, then 5
    merged = merge([a, b], tmp_path / "m")
    assert len(merged.finals()["linucb"]) == 8 and merged.manifest is not None
    assert sorted(merged.manifest) == ["runs.csv", "runs.parquet", "summary.csv"]
    x = _runs_of(tmp_path, "x", 2, 4)  # an unrelated finished study
    files = {d: {p.name: p.read_bytes() for p in d.iterdir()} for d in (a, x, tmp_path / "m")}
    for out in (x, a, tmp_path / "m"):  # another study, an input, an earlier merge
        with pytest.raises(ValueError, match=rf"^--out {out} already holds a finished "):
            merge([a, b], out)
        assert main(["merge", str(a), str(b), "--out", str(out)]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"oslr: error: --out {out} already holds a finished ")
        assert err.endswith("; it is never overwritten: give another --out (a new or an "
                            "unfinished folder).\n") and err.count("\n") == 1
    assert {d: {p.name: p.read_bytes() for p in d.iterdir()} for d in files} == files


def test_load__a_file_cut_at_any_byte_is_refused_naming_it(tmp_path):
    # every file of a small study (tables, figure, manifest, config), cut at random offsets
    rng = np.random.default_rng(0)
    out, _ = _study(tmp_path)
    report.save_study([_bandit("linucb", np.ones((1, R)))], tmp_path / "p",
                      config={"horizon": 40})  # one with its figure
    for folder in (out, tmp_path / "p"):
        for f in sorted(folder.iterdir()):
            if f.name.startswith("."):
                continue
            data = f.read_bytes()
            for cut in {0, len(data) - 1, *rng.integers(1, len(data) - 1, 6).tolist()}:
                f.write_bytes(data[:cut])
                with pytest.raises(LoadError) as e:
                    load(folder)
                assert f.name in str(e.value) and "\n" not in str(e.value), (f.name, cut)
            f.write_bytes(data)
            load(folder)  # whole again: loads


def test_load__an_experiment_folder_reads_as_a_runs_folder(tmp_path, monkeypatch):
    # the experiment's per-run file gives the same per-run frames, compare and plot

    a, _ = _study(tmp_path, name="a")
    results = _study(tmp_path, name="b")[1]

    _experiment_folder(results, tmp_path / "e", monkeypatch)
    run, exp = load(a), load(tmp_path / "e")
    assert exp.kind == "experiment" and set(exp.runs["study"]) == {0, 1}
    # two studies: entries named by study; one study alone reads as the run's folder
    assert list(exp.finals()) == ["study 0: eps-greedy [eps=0.05]", "study 0: eps-greedy "
                                  "[eps=0.2]", "study 1: linucb"]
    one = exp.select(0)
    assert list(one.runs.columns) == list(exp.runs.columns)  # no index column added
    assert list(one.run_curves.columns) == list(exp.run_curves.columns)
    assert set(one.runs["study"]) == set(one.run_curves["study"]) == {0}
    assert list(one.runs.index) == list(range(len(one.runs)))
    for name, values in run.finals().items():
        if name.startswith("eps-greedy"):
            np.testing.assert_array_equal(one.finals()[name], values)
    both = exp.compare("study 1: linucb")
    want = run.compare("linucb")
    np.testing.assert_allclose(both["diff"].to_numpy(), want["diff"].to_numpy())
    assert [c.get_alpha() for c in exp.plot().axes[0].collections] == [0.2] * 3
    with pytest.raises(LoadError, match=r"no study \[7\]"):
        exp.select([7])
    # an experiment's other tables are checked against their manifest rows too
    manifest = json.loads((tmp_path / "e" / "manifest.json").read_text())
    manifest["files"]["kpm-pege-runs.parquet"]["rows"] += 1
    (tmp_path / "e" / "manifest.json").write_text(json.dumps(manifest))
    reseal(tmp_path / "e")  # the manifest's own record changed, as by its writer
    with pytest.raises(LoadError, match=r"kpm-pege-runs\.parquet reads as \d+ rows where "):
        load(tmp_path / "e")


def test_load__a_run_folder_never_reads_a_stray_per_run_table_as_its_runs(tmp_path):
    # an older run folder without runs.parquet, holding someone's NAME-runs.parquet with a study
    # column: that table is not taken for the study's per-run curves (experiments only)
    out, _ = _study(tmp_path)
    as_older_oslr(out)
    stray = pd.read_parquet(out / "runs.parquet").assign(study=0)
    (out / "runs.parquet").unlink()
    stray.to_parquet(out / "x-runs.parquet")
    study = load(out)
    assert study.kind == "run" and study.run_curves is None and "x-runs" in study.tables


def test_merge__an_out_finished_while_the_inputs_were_read_is_refused_under_the_lock(
        tmp_path, monkeypatch):
    import oslr.saved as saved

    a, b = _runs_of(tmp_path, "a", 0, 3), _runs_of(tmp_path, "b", 1, 5)
    out = tmp_path / "m"
    real = saved.load

    def load_then_finish(path):  # another merge into out finishes while these are read
        study = real(path)
        if path == b:
            out.mkdir()
            (out / "config.json").write_text('{"merged_from": ["theirs"]}')
        return study

    monkeypatch.setattr(saved, "load", load_then_finish)
    with pytest.raises(ValueError, match=rf"^--out {out} already holds a finished merge of "
                                         r"studies; it is never overwritten"):
        merge([a, b], out)
    assert sorted(p.name for p in out.iterdir()) == [".oslr.lock", "config.json"]


def test_final_vs_and_plot_final__a_k_by_eta_study_keeps_each_k_apart(tmp_path, capsys):
    # the README's k x eta sweep: regret at T against eta, one line per k (not one line
    # zig-zagging through the pooled points)
    import matplotlib.pyplot as plt

    grid = [{"k": k, "eta": eta} for k in (2, 5) for eta in (0.01, 0.05)]
    means = [1.0, 2.0, 7.0, 9.0]
    res = _bandit("ogd-random-subset", [np.full(R, m) for m in means], grid=grid)
    other = _bandit("ogd-full", [np.full(R, 4.0)], grid=[{"eta": 0.01}])
    report.save_study([res, other], tmp_path / "s", config={"problem": "sparse-linear",
                                                            "horizon": 40}, plot=False)
    study = load(tmp_path / "s")
    table = study.final_vs("eta")
    assert list(table.columns) == ["learner", "k", "eta", "metric", "mean", "ci_low", "ci_high",
                                   "n_runs"]
    assert table.index.tolist() == list(range(len(table)))  # sorted rows numbered afresh
    assert pd.isna(table["k"].iloc[0])  # ogd-full has no k
    assert table[["learner", "eta", "mean"]].values.tolist()[0] == ["ogd-full", 0.01, 4.0]
    assert table[["learner", "k", "eta", "mean"]].values.tolist()[1:] == [
        ["ogd-random-subset", 2.0, 0.01, 1.0], ["ogd-random-subset", 2.0, 0.05, 2.0],
        ["ogd-random-subset", 5.0, 0.01, 7.0], ["ogd-random-subset", 5.0, 0.05, 9.0]]
    fig = study.plot_final("eta")
    lines = {ax.get_title(): [(c.get_label(), c.lines[0].get_ydata().tolist())
                              for c in ax.containers] for ax in fig.axes}
    assert lines["ogd-random-subset"] == [("k=2", [1.0, 2.0]), ("k=5", [7.0, 9.0])]
    legend = fig.axes[1].get_legend()
    assert [t.get_text() for t in legend.get_texts()] == ["k=2", "k=5"]
    plt.close(fig)
    assert main(["plot", str(tmp_path / "s"), "--against", "eta"]) == 0
    assert capsys.readouterr().out == f"wrote {tmp_path / 's' / 'final_vs_eta.png'}\n"


@pytest.mark.parametrize("off", [-1, 1])
def test_load__a_table_whose_rows_differ_from_its_manifest_record_is_refused(tmp_path, off):
    # the bytes match, the manifest's row count does not (a manifest written by another tool,
    # or edited): the table is not taken for what the manifest says it is
    out, _ = _study(tmp_path)
    manifest = json.loads((out / "manifest.json").read_text())
    rows = manifest["files"]["runs.csv"]["rows"]
    manifest["files"]["runs.csv"]["rows"] = rows + off
    (out / "manifest.json").write_text(json.dumps(manifest))
    reseal(out)
    with pytest.raises(LoadError, match=rf"runs\.csv reads as {rows} rows where manifest\.json "
                                        rf"records {rows + off}; copy it again\.$"):
        load(out)


def test_final_vs__an_experiment_folder_by_its_per_run_files_params(tmp_path, monkeypatch):
    # an experiment's per-run file records each grid point's params (param_NAME): final_vs
    # reads the swept ones there, one row per study, learner and value
    import dataclasses


    grid = [{"eps": 0.05}, {"eps": 0.2}]
    _, params = oslr.make("eps-greedy", d=3)
    stacked = oslr.stack_params([dataclasses.replace(params, eps=np.float32(p["eps"]))
                                 for p in grid])
    results = [dataclasses.replace(_bandit("eps-greedy", [np.full(R, 2.0), np.full(R, 5.0)],
                                           grid=grid), params=stacked)]

    _experiment_folder(results, tmp_path / "e", monkeypatch)
    exp = load(tmp_path / "e")
    assert exp.swept() == ["eps"]
    table = exp.final_vs("eps")
    assert table[["learner", "mean", "n_runs"]].values.tolist() == [
        ["eps-greedy", 2.0, R], ["eps-greedy", 5.0, R]]
    np.testing.assert_allclose(table["eps"], [0.05, 0.2], rtol=1e-6)  # float32 params
    assert exp.plot_final("eps").axes[0].get_title() == "eps-greedy"


def _experiment_folder(results, out, monkeypatch):
    """An `oslr experiment` folder whose per-run file holds `results` (the experiment itself
    stood in for)."""
    import oslr.experiments as ex
    from oslr.experiments import write_runs

    def fake(name, dataset, runs, seed, folder, *a, **k):
        write_runs(results, folder / "kpm-pege-runs.parquet")
        return pd.DataFrame({"x": [1]})

    monkeypatch.setattr(ex, "run_experiment", fake)
    assert main(["experiment", "kpm-pege", "--quick", "--no-progress", "--out", str(out)]) == 0



def test_load__a_large_per_run_file_is_read_when_used_and_one_metric_alone(tmp_path,
                                                                          monkeypatch):
    from oslr import saved

    out, _ = _study(tmp_path)
    eager = oslr.load(out)
    monkeypatch.setattr(saved, "LAZY_BYTES", 0)  # every Parquet file counts as large
    reads = []
    real = pd.read_parquet
    monkeypatch.setattr(pd, "read_parquet", lambda path, **kw: reads.append(kw) or real(path,
                                                                                        **kw))
    study = oslr.load(out)
    assert reads == []  # load left it on disk
    assert study.files() == eager.files()
    got, metric = study._curves(None)
    assert reads == [{"filters": [("metric", "==", "pseudo_regret")]}]  # its rows alone
    want, _ = eager._curves(None)
    pd.testing.assert_frame_equal(got.reset_index(drop=True), want.reset_index(drop=True))
    np.testing.assert_array_equal(study.to_xarray()["value"], eager.to_xarray()["value"])
    pd.testing.assert_frame_equal(study.run_curves, eager.run_curves)  # read whole at its use
    assert reads[-1] == {"filters": None} and len(reads) == 3
    study.run_curves  # and kept
    assert len(reads) == 3
    with pytest.raises(LoadError, match="reads as 126 rows where manifest.json records 1;"):
        manifest = json.loads((out / "manifest.json").read_text())
        listed = {**manifest["files"]["runs.parquet"], "rows": 1}
        saved._Unread(out / "runs.parquet", {"runs.parquet": listed}).read()


def test_load__a_large_per_run_file_reads_the_metric_asked(tmp_path, monkeypatch):
    from oslr import saved

    problem, pp = oslr.make_problem("sparse-linear", d=4, k=2)
    learner, params = oslr.make("ogd-full", d=4)
    res = oslr.simulate(learner, problem, params, pp, horizon=20, n_runs=3)
    report.save_study([res], tmp_path / "f1", plot=False)
    eager = oslr.load(tmp_path / "f1")
    monkeypatch.setattr(saved, "LAZY_BYTES", 0)
    lazy = oslr.load(tmp_path / "f1")
    assert len(lazy.metrics()) >= 2
    for metric in lazy.metrics():
        got, _ = lazy._curves(metric)
        want, _ = eager._curves(metric)
        assert set(got["metric"]) == {metric}
        pd.testing.assert_frame_equal(got.reset_index(drop=True), want.reset_index(drop=True))


# ------------------------------------------------ config.json sealed: its manifest and itself

def _sealed_study(tmp_path):
    import oslr

    out = tmp_path / "study"
    oslr.Study(problem="sparse-linear", problem_options={"d": 6, "k": 2},
               learners=["ogd-full"], horizon=20, runs=4, out=str(out)).run(
        progress="none", plot=False)
    return out


def test_load__a_sealed_config_needs_its_manifest_and_itself_unchanged(tmp_path):
    import json

    import oslr
    from oslr.folder import SEAL, LoadError

    out = _sealed_study(tmp_path)
    config = json.loads((out / "config.json").read_text())
    assert set(config[SEAL]) == {"manifest_sha256", "config_sha256"}
    saved = oslr.load(out)
    assert SEAL not in saved.config and saved.config["runs"] == 4
    text = (out / "config.json").read_text()
    (out / "config.json").write_text(text.replace('"runs": 4', '"runs": 5'))
    with pytest.raises(LoadError, match=r"config\.json does not match its own SHA-256 \(its "
                       r"'sealed' record\): changed since the study wrote it; copy the folder "
                       r"again\.$"):
        oslr.load(out)
    (out / "config.json").write_text(text)
    manifest = (out / "manifest.json").read_bytes()
    (out / "manifest.json").unlink()
    with pytest.raises(LoadError, match=rf"^{out / 'manifest.json'} is missing \(config\.json "
                       r"records it\): the folder is incomplete; copy it again\.$"):
        oslr.load(out)
    (out / "manifest.json").write_bytes(manifest.replace(b'"files"', b'"files" ', 1))
    with pytest.raises(LoadError, match=r"manifest\.json does not match its SHA-256 in "
                       r"config\.json"):
        oslr.load(out)
    (out / "manifest.json").write_bytes(manifest)
    assert oslr.load(out).config == saved.config
    edited = {**config, SEAL: {**config[SEAL], "manifest_sha256": "0" * 64}}
    (out / "config.json").write_text(json.dumps(edited))  # the manifest's record alone changed
    with pytest.raises(LoadError, match=r"config\.json does not match its own SHA-256"):
        oslr.load(out)
    for seal in ({"manifest_sha256": config[SEAL]["manifest_sha256"]}, {}, None, "x"):
        edited = {**config, "runs": 5, SEAL: seal}  # the seal's own record taken out with it
        (out / "config.json").write_text(json.dumps(edited))
        with pytest.raises(LoadError, match=r"config\.json does not match its own SHA-256"):
            oslr.load(out)


def test_load__a_folder_of_an_older_oslr_without_a_seal_loads_as_it_is(tmp_path):
    import json

    import oslr
    from oslr.folder import SEAL

    out = _sealed_study(tmp_path)
    config = json.loads((out / "config.json").read_text())
    del config[SEAL]
    (out / "config.json").write_text(json.dumps(config))
    (out / "manifest.json").unlink()
    assert oslr.load(out).config == {k: v for k, v in config.items()}


def test_finish__the_seal_covers_values_written_as_text(tmp_path):
    from pathlib import Path

    from oslr import folder

    (tmp_path / "a.txt").write_text("x")
    folder.finish(tmp_path, ["a.txt"], {"out": Path("/some/where"), "nested": {"b": (1, 2)}})
    import json

    config = json.loads((tmp_path / "config.json").read_text())
    assert folder.unseal(tmp_path, config) == {"out": "/some/where", "nested": {"b": [1, 2]}}
