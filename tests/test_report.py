"""Report helpers: the fitted growth exponent and the bound overlay."""

import matplotlib
import numpy as np

from oslr.report import draw_bound, growth_exponent

matplotlib.use("Agg")


def test_growth_exponent__of_power_curves():
    t = np.geomspace(10, 1e5, 30)
    assert abs(growth_exponent(t, 3.0 * t**0.5) - 0.5) < 1e-12
    assert abs(growth_exponent(t, t ** (2 / 3)) - 2 / 3) < 1e-12
    # only points at t >= t_min count: a curve that bends from t to sqrt(t) at 1e3
    bent = np.where(t < 1e3, t, np.sqrt(1e3 * t))
    assert abs(growth_exponent(t, bent, t_min=1e3) - 0.5) < 1e-12
    # non-positive values are left out; fewer than two points give NaN
    assert abs(growth_exponent(t, np.where(t < 100, -1.0, t)) - 1.0) < 1e-12
    assert np.isnan(growth_exponent([1.0, 2.0], [1.0, -1.0]))


def test_draw_bound__labels_order_only():
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    line = draw_bound(ax, [1, 10], [1.0, 3.0], "Thm 1", order_only=True)
    assert line.get_label() == "Thm 1 (order only, constant 1)"
    assert line.get_linestyle() == "--"
    np.testing.assert_allclose(line.get_ydata(), [1.0, 3.0])
    assert draw_bound(ax, [1, 10], [1.0, 3.0], "Thm 4").get_label() == "Thm 4"
    plt.close(fig)


def test_draw_bound__without_rescale_keeps_the_data_limits():
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    ax.plot([1, 10], [1.0, 2.0])
    before = ax.get_ylim()
    line = draw_bound(ax, [1, 10], [1e3, 1e6], None, rescale=False)
    ax.plot([1, 10], [1.5, 1.8])  # a later curve autoscales without the bound
    assert ax.get_ylim() == before and line.get_label() == "_nolegend_"
    assert line in ax.get_children()
    plt.close(fig)


# --------------------------------------------------------------------------- tables and files

import dataclasses  # noqa: E402
import json  # noqa: E402

import pytest  # noqa: E402
from scipy import stats as st  # noqa: E402

from oslr import report, stats  # noqa: E402


@pytest.fixture(scope="module")
def swept():
    """A two-point sweep (k = 2, 3) of a small study: every table is checked against it."""
    import oslr

    problem, pp = oslr.make_problem("sparse-linear", d=4, k=2)
    learner, params = oslr.make("ogd-random-subset", d=4, max_k=3)
    return oslr.sweep(learner, problem, params, pp, {"k": [2, 3]}, horizon=30, n_runs=5,
                      chunk_size=30)


def _ci(v):
    v = np.asarray(v, np.float64)
    half = st.t.ppf(0.975, len(v) - 1) * v.std(ddof=1) / np.sqrt(len(v))
    return v.mean(), v.mean() - half, v.mean() + half


def test_params_label__floats_to_four_digits_integers_whole():
    assert report.params_label({"k": 123456, "eta": 0.123456}) == "k=123456, eta=0.1235"
    assert report.params_label({}) == "default"


def test_summary_frame__by_hand_from_the_per_run_finals(swept):
    s = report.summary_frame([swept])
    curves = swept.regret_curves()
    assert len(s) == 2 * len(curves)
    for g, label in enumerate(["k=2", "k=3"]):
        rows = s[s["params"] == label]
        assert list(rows.loc[rows["primary"], "metric"]) == ["regret"]  # one primary per point
        for _, row in rows.iterrows():
            mean, lo, hi = _ci(curves[row["metric"]][g, :, -1])
            assert (row["mean"], row["ci_low"], row["ci_high"]) == pytest.approx((mean, lo, hi),
                                                                                rel=1e-12)
        assert (rows["over_budget_rounds"] == 0).all()
    # a result whose runs went over budget says how many rounds did
    final = {**swept.final, "over_budget": np.ones_like(swept.final["over_budget"]) * 2}
    import dataclasses

    over = report.summary_frame([dataclasses.replace(swept, final=final)])
    assert (over["over_budget_rounds"] == 2 * swept.n_runs).all()
    # the horizon, the runs, and k coordinates queried a round
    assert (s["horizon"] == 30).all() and (s["n_runs"] == 5).all()
    assert s.groupby("params")["queries_per_round"].first().to_dict() == {"k=2": 2.0, "k=3": 3.0}
    # compared with a named entry (the worse one, so not the "best" default): its own difference
    # is 0, the other's its mean minus the named one's
    regret = curves["regret"][:, :, -1].astype(np.float64)
    worse, other = ("k=2", "k=3") if regret[0].mean() > regret[1].mean() else ("k=3", "k=2")
    vs = report.summary_frame([swept], compare_to=f"ogd-random-subset [{worse}]")
    prim = vs[vs["primary"]].set_index("params")
    means = {"k=2": regret[0].mean(), "k=3": regret[1].mean()}
    assert prim.loc[worse, "diff"] == 0.0
    assert prim.loc[other, "diff"] == pytest.approx(means[other] - means[worse], rel=1e-12)
    assert set(prim["reference"]) == {f"ogd-random-subset [{worse}]"}


def test_curves_runs_frames__columns_labels_and_values(swept):
    curves = swept.regret_curves()
    c = report.curves_frame([swept])
    assert list(c.columns) == ["learner", "problem", "params", "metric", "t", "mean", "sem",
                               "ci_low", "ci_high"]
    row = c[(c["params"] == "k=3") & (c["metric"] == "regret")].iloc[-1]
    assert row["learner"] == "ogd-random-subset" and row["t"] == 30
    assert (row["mean"], row["ci_low"], row["ci_high"]) == pytest.approx(
        _ci(curves["regret"][1, :, -1]), rel=1e-12)
    r = report.runs_frame([swept])
    assert list(r.columns) == ["learner", "params", "metric", "run", "final"]
    sel = r[(r["params"] == "k=2") & (r["metric"] == "regret")]
    np.testing.assert_array_equal(sel["final"], curves["regret"][0, :, -1])
    rc = report.runs_curves_frame([swept])
    assert set(rc["params"]) == {"k=2", "k=3"}


def test_sequential_frame__passes_its_level(swept):
    # (the bounded sequence: the t one needs 10 runs before its first interval)
    wide = report.sequential_frame([swept], 1, level=0.99, bounds=(-1e4, 1e4))
    narrow = report.sequential_frame([swept], 1, level=0.5, bounds=(-1e4, 1e4))
    assert (wide["cs_high"] - wide["cs_low"]).item() > (narrow["cs_high"] - narrow["cs_low"]).item()
    assert wide["method"].item() == "betting"
    assert wide["metric"].item() == report.compare_frame([swept])["metric"].iloc[0]
    assert report.sequential_frame([swept], 1, normal=True)["method"].item() == "t"


def test_sequential_frame__hands_its_look_reference_metric_level_and_variance_on(
        swept, monkeypatch):
    from oslr import stats

    finals, _ = report.per_run_finals([swept], "regret_wstar")
    k2, k3 = "ogd-random-subset [k=2]", "ogd-random-subset [k=3]"
    # a named reference, a metric other than the primary one, a variance bound
    got = report.sequential_frame([swept], 4, reference=k3, metric="regret_wstar",
                                  variance=50.0).iloc[0]
    want = stats.sequential_compare(finals, 4, reference=k3, variance=50.0).iloc[0]
    assert got["metric"] == "regret_wstar" and got["method"] == "catoni"
    assert (got["reference"], got["name"]) == (k3, k2)
    assert (got["cs_low"], got["cs_high"]) == pytest.approx((want["cs_low"], want["cs_high"]),
                                                            rel=1e-12)
    # what reaches sequential_compare: the look, the entry a learner's name resolves to, the
    # default 95% level, the bounds and the variance bound
    seen, real = {}, stats.sequential_compare

    def spy(values, look, reference, level, bounds, variance=None, normal=False):
        seen.update(values=values, look=look, reference=reference, level=level, bounds=bounds,
                    variance=variance, normal=normal)
        return real(values, look, reference, level, bounds, variance=variance, normal=normal)

    monkeypatch.setattr(stats, "sequential_compare", spy)
    one = report.sequential_frame([swept], 7, reference="ogd-random-subset [k=2]",
                                  bounds=(-1e4, 1e4))
    assert (seen["look"], seen["reference"], seen["level"], seen["bounds"], seen["variance"]) \
        == (7, k2, 0.95, (-1e4, 1e4), None)
    assert set(seen["values"]) == {k2, k3} and one["method"].tolist() == ["betting"]
    report.sequential_frame([swept], 7, normal=True)
    assert (seen["bounds"], seen["variance"], seen["normal"]) == (None, None, True)


def test_save_study__files_config_and_the_figure(swept, tmp_path):
    nested = report.save_study([swept], tmp_path / "new" / "deeper", plot=False)  # made whole
    assert nested["config.json"].is_file()
    files = report.save_study([swept], tmp_path, config={"note": "x"})
    names = ["summary.csv", "summary.json", "curves.csv", "runs.csv", "runs.parquet",
             "regret.png", "manifest.json", "config.json"]
    assert sorted(files) == sorted(names)
    assert all(files[n] == tmp_path / n and files[n].is_file() for n in names)
    # the manifest: every result file but itself and config.json, with its size, hash, rows
    import hashlib

    import pandas as pd

    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert manifest["format"] == 1 and sorted(manifest["files"]) == sorted(names[:6])
    for name, record in manifest["files"].items():
        data = (tmp_path / name).read_bytes()
        assert record["bytes"] == len(data)
        assert record["sha256"] == hashlib.sha256(data).hexdigest()
        read = {".csv": pd.read_csv, ".parquet": pd.read_parquet}.get((tmp_path / name).suffix)
        assert record.get("rows") == (None if read is None else len(read(tmp_path / name)))
    cfg = json.loads((tmp_path / "config.json").read_text())
    assert cfg["note"] == "x" and set(cfg["results"][0]) == {
        "learner", "problem", "family", "horizon", "n_runs", "seed", "grid", "comparator_k",
        "comparator_radius", "info"}
    # the figure: log-log axes by default, saved at FIGURE_DPI
    import matplotlib.pyplot as plt

    fig = report.plot_regret([swept], tmp_path / "again.png")
    ax = fig.axes[0]
    assert (ax.get_xscale(), ax.get_xlabel(), ax.get_title()) == (
        "log", "round t", report.plot_title([swept]))
    assert ax.get_ylabel().replace("\n", " ") == report.METRIC_LABELS["regret"]
    assert "(d=4, k=2)" in ax.get_title()
    width = int.from_bytes((tmp_path / "again.png").read_bytes()[16:20], "big")
    assert width == round(fig.get_size_inches()[0] * report.FIGURE_DPI)
    plt.close(fig)


def test_growth_exponent__t_min_itself_counts():
    assert growth_exponent([1.0, 10.0, 100.0], [1.0, 10.0, 1000.0], t_min=10.0) == \
        pytest.approx(2.0, rel=1e-12)


def _with_regret(res, curves):
    light = res.per_run()
    light._regret = curves
    return light


def test_plot_regret__into_a_given_axis_labels_bands_and_scales(swept):
    import matplotlib.pyplot as plt

    g, r, c = swept.regret_curves()["regret"].shape
    rng = np.random.default_rng(0)
    v = 0.5 + 0.01 * rng.random((g, r, c))
    small = _with_regret(swept, {"regret_wstar": v, "my_metric": v})
    fig, ax = plt.subplots()
    out = report.plot_regret([swept, small], ax=ax)
    assert out is fig and len(ax.lines) == 4  # two learners x two grid points, drawn into ax
    assert ax.get_ylabel().replace("\n", " ") == (f"{report.METRIC_LABELS['regret']} / "
                               f"{report.METRIC_LABELS['regret_wstar']}")
    assert ax.get_legend_handles_labels()[1][:2] == ["ogd-random-subset (k=2)",
                                                     "ogd-random-subset (k=3)"]
    assert all(np.all(band.get_linewidth() == 0) for band in ax.collections)
    assert "mean over 5 runs" in ax.get_title()
    plt.close(fig)
    fig = report.plot_regret([small])  # every band above 0 (here below 1): a log y axis
    assert fig.axes[0].get_yscale() == "log"
    plt.close(fig)
    fig = report.plot_regret([small], metric="my_metric")  # no label known: its name
    assert fig.axes[0].get_ylabel() == "my_metric"
    plt.close(fig)


def test_frames__empty_input_and_column_order(swept, tmp_path):
    assert report.runs_curves_frame([]).empty and report.curves_frame([]).empty
    assert list(report.sequential_frame([swept], 1, normal=True).columns[:3]) == [
        "name", "metric", "reference"]
    s = report.summary_frame([swept], compare_to="best")
    assert s["diff"].dtype == np.float64 and s.loc[~s["primary"], "diff"].isna().all()
    assert s.loc[~s["primary"], "verdict"].isna().all()
    report.save_study([swept], tmp_path, plot=False)
    assert (tmp_path / "summary.json").read_text().startswith('[\n {\n  "learner"')


def test_plot_regret__each_band_spans_the_interval_and_config_keeps_any_value(swept, tmp_path):
    from pathlib import Path

    import matplotlib.pyplot as plt

    fig = report.plot_regret([swept])
    mean, _, half = report.mean_ci(swept.regret_curves()["regret"][0], axis=0)
    ys = fig.axes[0].collections[0].get_paths()[0].vertices[:, 1]
    assert ys.min() == pytest.approx(float(np.min(mean - half)))
    assert ys.max() == pytest.approx(float(np.max(mean + half)))
    plt.close(fig)
    # the simultaneous band: stats.simultaneous_band of the same runs, named in the title
    fig = report.plot_regret([swept], band="simultaneous")
    mean, half = stats.simultaneous_band(
        swept.regret_curves()["regret"][0])
    ys = fig.axes[0].collections[0].get_paths()[0].vertices[:, 1]
    assert ys.max() == pytest.approx(float(np.max(mean + half)))
    assert fig.axes[0].get_title().endswith("95% simultaneous bands")
    plt.close(fig)
    assert report.plot_title([]) == ""
    report.save_study([swept], tmp_path, config={"out": Path("somewhere")}, plot=False)
    assert json.loads((tmp_path / "config.json").read_text())["out"] == "somewhere"


def test_plot_regret__one_result_alone_draws_its_grid_points(swept):
    import matplotlib.pyplot as plt

    fig = report.plot_regret(swept)
    assert [line.get_label() for line in fig.axes[0].lines] == [
        "ogd-random-subset (k=2)", "ogd-random-subset (k=3)"]
    plt.close(fig)


def test_plot_regret__the_longest_axis_label_fits_inside_the_figure(swept):
    """Two long regret labels joined (the TOML study's case): wrapped, the label lies within the
    figure's height instead of running off both ends."""
    import matplotlib.pyplot as plt

    g, r, c = swept.regret_curves()["regret"].shape
    other = _with_regret(swept, {"pseudo_regret": 0.5 + np.zeros((g, r, c))})
    fig = report.plot_regret([swept, other])
    fig.canvas.draw()
    label = fig.axes[0].yaxis.label
    box, height = label.get_window_extent(), fig.bbox.height
    assert "\n" in label.get_text() and box.y0 >= 0 and box.y1 <= height
    plt.close(fig)


def test_plot_regret__agg_for_a_file_bands_in_the_lines_colour_and_the_title_size(swept,
                                                                                 tmp_path,
                                                                                 monkeypatch):
    import matplotlib.pyplot as plt

    used = []
    monkeypatch.setattr(matplotlib, "use", lambda name, force=False: used.append((name, force)))
    fig = report.plot_regret([swept], tmp_path / "r.png")
    assert used == [("Agg", False)]  # a file and no axis: no window needed
    ax = fig.axes[0]
    for line, band in zip(ax.lines, ax.collections):
        assert matplotlib.colors.same_color(band.get_facecolor()[0][:3], line.get_color())
    assert ax.title.get_fontsize() == 10
    plt.close(fig)
    used.clear()
    fig, ax = plt.subplots()
    report.plot_regret([swept], tmp_path / "s.png", ax=ax)  # the caller's axis: left alone
    assert used == []
    fig2 = report.plot_regret([swept], metric="no_such_metric")  # nothing drawn: "regret"
    assert fig2.axes[0].get_ylabel() == "regret" and not fig2.axes[0].lines
    plt.close("all")


def test_plot_title__no_facts_no_brackets():
    from types import SimpleNamespace

    res = SimpleNamespace(problem="p", info={}, comparator_k=None, horizon=40, n_runs=3)
    assert report.plot_title([res]) == "p, T=40: mean over 3 runs, 95% bands"
    res.info, res.comparator_k = {"d": 8}, 2
    assert report.plot_title([res]) == "p (d=8, k=2), T=40: mean over 3 runs, 95% bands"


def test_draw_bound__dashed_whether_it_rescales_the_axes_or_not():
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    for rescale in (True, False):
        line = draw_bound(ax, [1, 2], [3.0, 4.0], "b", rescale=rescale)
        assert line.get_linestyle() == "--"
    plt.close(fig)


def test_save_study__without_matplotlib_the_plot_is_skipped_and_said(swept, tmp_path,
                                                                     monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib fails
    files = report.save_study([swept], tmp_path / "o")
    assert files["regret.png (skipped: pip install 'oslr[plot]')"] == tmp_path / "o"
    assert not (tmp_path / "o" / "regret.png").exists()


def test_runs_curves_frame__each_runs_sums_at_the_horizon(swept):
    frame = report.runs_curves_frame([swept])
    loss = frame[frame["metric"] == "sum_loss"]
    assert list(loss.columns) == ["learner", "params", "metric", "run", "t", "value"]
    assert (loss["t"] == swept.horizon).all() and loss["run"].tolist() == [0, 1, 2, 3, 4] * 2
    np.testing.assert_allclose(loss["value"].to_numpy(),
                               np.asarray(swept.final["loss"], np.float64).reshape(-1))


def test_per_run_frames__runs_of_a_later_part_are_named_by_their_run_index(swept):
    # runs 7..11 of a study (run_offset 7): every per-run row, the regret's and the sums', and
    # runs.csv's finals, names the same run ids
    import dataclasses

    later = dataclasses.replace(swept, run_offset=7)
    frame = report.runs_curves_frame([later])
    ids = list(range(7, 12))
    for metric, rows in frame.groupby("metric"):
        assert sorted(set(rows["run"])) == ids, metric
    assert sorted(set(report.runs_frame([later])["run"])) == ids


def test_compare_frame__its_level_sets_the_intervals_and_mismatched_runs_are_refused(swept):
    import dataclasses

    wide = report.compare_frame([swept], level=0.95).set_index("name")
    narrow = report.compare_frame([swept], level=0.5).set_index("name")
    other = [n for n in wide.index if wide.loc[n, "verdict"] != "reference"][0]
    assert (narrow.loc[other, "diff_high"] - narrow.loc[other, "diff_low"]
            < wide.loc[other, "diff_high"] - wide.loc[other, "diff_low"])
    for change in ({"seed": swept.seed + 1}, {"run_offset": swept.run_offset + swept.n_runs},
                   {"n_runs": swept.n_runs - 1}, {"horizon": swept.horizon + 1}):
        shifted = dataclasses.replace(swept, **change)
        with pytest.raises(ValueError, match=r"^paired comparisons need the same runs: every "
                                             r"result must have the same seed, run_offset, runs "
                                             r"and horizon; got \["):
            report.compare_frame([swept, shifted])


def test_compare_frame__entries_named_as_listed_and_finals_stay_float64(swept):
    import oslr

    problem, pp = oslr.make_problem("sparse-linear", d=4, k=2)
    learner, params = oslr.make("ogd-full", d=4)
    full = oslr.sweep(learner, problem, params, pp, {"eta": [0.1]}, horizon=30, n_runs=5,
                      chunk_size=30)
    # a learner of one grid point is named by the learner alone; one of two points has no entry
    # of its name (naming the learner would not say which point)
    table = report.compare_frame([swept, full], reference="ogd-full").set_index("name")
    assert set(table["reference"]) == {"ogd-full"}
    with pytest.raises(ValueError, match=r"^--compare-to 'ogd-random-subset' names none of the "
                                         r"entries \['ogd-random-subset \[k=2\]', "
                                         r"'ogd-random-subset \[k=3\]', 'ogd-full'\]; give one "
                                         r"of them or 'best'\.$"):
        report.compare_frame([swept, full], reference="ogd-random-subset")
    # the paired differences from the float64 per-run finals (no float32 rounding on the way)
    finals, metric = report.per_run_finals([swept, full])
    regret = [r.regret_curves()[metric][:, :, -1] for r in (swept, full)]
    assert finals["ogd-full"].dtype == np.float64
    np.testing.assert_array_equal(finals["ogd-full"], regret[1][0])
    want = np.mean(regret[0][1] - regret[1][0])
    assert table.loc["ogd-random-subset [k=3]", "diff"] == pytest.approx(want, rel=1e-12)
    # another metric than the primary one, asked for by name
    other = report.compare_frame([swept, full], metric="regret_wstar").set_index("name")
    assert set(other["metric"]) == {"regret_wstar"}
    wstar = [r.regret_curves()["regret_wstar"][:, :, -1] for r in (swept, full)]
    assert other.loc["ogd-random-subset [k=2]", "mean"] == pytest.approx(wstar[0][0].mean(),
                                                                         rel=1e-12)
    with pytest.raises(ValueError, match=r"^two entries are named 'ogd-full'; compare distinct "
                                         r"learners or grid points\.$"):
        report.compare_frame([full, full])


def test_finish_figure__legend_inside_by_default_right_of_the_axes_when_asked():
    import matplotlib.pyplot as plt

    for outside in (False, True):
        fig, ax = plt.subplots()
        ax.plot([1, 2], [1, 2], label="a")
        report.finish_figure(fig, ax, legend_outside=outside)
        fig.canvas.draw()
        box, frame = ax.get_legend().get_window_extent(), ax.get_window_extent()
        assert bool(box.x0 >= frame.x1) == outside and bool(box.x1 <= frame.x1) == (not outside)
        if outside:
            assert box.y1 == pytest.approx(frame.y1, abs=1.0)  # its top at the axes' top
        plt.close(fig)


def test_draw_bound__in_the_colour_given_and_axes_refused_by_name():
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    line = draw_bound(ax, [1, 2], [3.0, 4.0], "b", color="tab:red")
    assert matplotlib.colors.same_color(line.get_color(), "tab:red")
    plt.close(fig)
    with pytest.raises(ValueError, match=r"^axes='cubic'; choose one of \("):
        report.plot_regret([], axes="cubic")
    for call in (lambda: report.plot_regret([], band="wide"),
                 lambda: report.curve_band(np.ones((3, 2)), "wide")):
        with pytest.raises(ValueError, match=r"^band='wide'; choose one of \("):
            call()
    mean, half = report.curve_band(np.ones((1, 2)), "simultaneous")  # one run: no band
    assert mean.tolist() == [1.0, 1.0] and np.isnan(half).all()


def test_growth_exponent_interval__percentiles_of_each_resamples_exponent_by_hand():
    rng = np.random.default_rng(3)
    t = np.array([1, 3, 10, 30, 100, 300, 1000])
    runs = np.sqrt(t) * rng.lognormal(0, 0.3, (8, 1)) + rng.normal(0, 0.5, (8, 7))
    runs[0, 0] = -1.0  # a negative mean at t = 1 in some resamples: that point left out there
    low, high = report.growth_exponent_interval(t, runs, t_min=1, level=0.8, n_boot=300, seed=9)
    idx = np.random.default_rng(9).integers(0, 8, size=(300, 8))
    slopes = [growth_exponent(t, runs[i].mean(0), t_min=1) for i in idx]
    assert (low, high) == pytest.approx(tuple(np.quantile(slopes, [0.1, 0.9])), rel=1e-12)
    assert low < growth_exponent(t, runs.mean(0), t_min=1) < high
    # t_min drops the early points, as growth_exponent's does
    low3, _ = report.growth_exponent_interval(t, runs, t_min=30, n_boot=50, seed=9)
    idx = np.random.default_rng(9).integers(0, 8, size=(50, 8))
    slopes = [growth_exponent(t, runs[i].mean(0), t_min=30) for i in idx]
    assert low3 == pytest.approx(np.quantile(slopes, 0.025), rel=1e-12)
    # one run, or a resample with fewer than two positive points: no interval
    assert np.isnan(report.growth_exponent_interval(t, runs[:1])).all()
    assert np.isnan(report.growth_exponent_interval(t, -np.abs(runs))).all()


def test_save_study__the_figure_in_the_axes_asked_and_the_default_title(swept, tmp_path,
                                                                        monkeypatch):
    asked = []
    real = report.plot_regret
    monkeypatch.setattr(report, "plot_regret",
                        lambda *a, **kw: asked.append(kw.get("axes")) or real(*a, **kw))
    files = report.save_study([swept], tmp_path, config={}, axes="linear")
    assert files["regret.png"].exists() and asked == ["linear"]
    assert report.plot_title([swept]).endswith(" runs, 95% bands")  # pointwise by default


def test_plot_regret__size_logx_runs_in_the_title_and_the_default_band(swept):
    import matplotlib.pyplot as plt

    fig = report.plot_regret([swept], axes="logx")
    assert tuple(fig.get_size_inches()) == (7.0, 4.5)
    assert fig.axes[0].get_xscale() == "log" and fig.axes[0].get_yscale() == "linear"
    plt.close(fig)
    fewer = dataclasses.replace(swept, n_runs=swept.n_runs + 1)
    assert f"mean over {swept.n_runs}/{swept.n_runs + 1} runs" in report.plot_title([swept, fewer])
    mean, half = report.curve_band(np.array([[1.0, 2.0], [3.0, 4.0]]))  # pointwise by default
    np.testing.assert_allclose(mean, [2.0, 3.0])
    np.testing.assert_allclose(half, report.mean_ci(np.array([[1.0, 2.0], [3.0, 4.0]]))[2])


def test_per_run_pieces__bounded_and_joined_equal_the_whole_tables(swept, monkeypatch):
    import pandas as pd

    from oslr import frames

    whole_curves, whole_runs = report.runs_curves_frame([swept]), report.runs_frame([swept])
    monkeypatch.setattr(frames, "PIECE_ROWS", 2 * len(swept.ckpts))  # two runs' curves a piece
    pieces = list(frames.runs_curves_pieces([swept]))
    assert max(len(p) for p in pieces) <= frames.PIECE_ROWS
    assert len(pieces) > 2 * len(swept.grid) * 3  # 5 runs: three pieces per metric and point
    pd.testing.assert_frame_equal(pd.concat(pieces, ignore_index=True), whole_curves)
    runs = list(frames.runs_pieces([swept]))
    assert max(len(p) for p in runs) <= frames.PIECE_ROWS
    pd.testing.assert_frame_equal(pd.concat(runs, ignore_index=True), whole_runs)
    monkeypatch.setattr(frames, "PIECE_ROWS", len(swept.ckpts))  # one run's curve a piece
    assert {len(p) for p in frames.runs_curves_pieces([swept]) if len(p) > 5} == {
        len(swept.ckpts)}
    # runs.csv's finals are each run's last checkpoint, in (metric, point, run) order
    regret = swept.regret_curves()
    want = np.concatenate([regret[m][g, :, -1] for m in regret for g in range(len(swept.grid))])
    np.testing.assert_array_equal(whole_runs["final"].to_numpy(), want)


def test_save_study__per_run_files_written_a_piece_at_a_time(swept, tmp_path, monkeypatch):
    import pandas as pd
    import pyarrow.parquet as pq

    from oslr import frames

    monkeypatch.setattr(frames, "PIECE_ROWS", 2 * len(swept.ckpts))
    report.save_study([swept], tmp_path / "s", plot=False)
    meta = pq.ParquetFile(tmp_path / "s" / "runs.parquet").metadata
    assert meta.num_row_groups > 1
    manifest = json.loads((tmp_path / "s" / "manifest.json").read_text())
    assert manifest["files"]["runs.parquet"]["rows"] == meta.num_rows == len(
        report.runs_curves_frame([swept]))
    assert manifest["files"]["runs.csv"]["rows"] == len(report.runs_frame([swept]))
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "s" / "runs.csv"),
                                  report.runs_frame([swept]))
