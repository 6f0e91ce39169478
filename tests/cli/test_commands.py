"""`oslr list`, `plot`, `compare` and `merge` (oslr.cli.commands)."""

import json

import numpy as np
import pytest

from oslr.cli import main
from tests.cli.helpers import _study


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
    sparse = out.index(next(line for line in out if line.startswith("  sparse-linear ")))
    assert out[sparse + 1].startswith(" " * 24 + "d            = 16         in [1, inf)")
    assert out[sparse + 2].startswith(" " * 24 + "k            = 3          in [1, d]")
    seen = []
    monkeypatch.setattr(cli.commands, "cmd_list", lambda args: seen.append(args.command_line) or 0)
    monkeypatch.setattr(sys, "argv", ["oslr", "list", "--d", "8"])
    assert main() == 0 and seen == ["oslr list --d 8"]


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


def test_plot__the_axes_reach_the_figure(tmp_path, monkeypatch, capsys):
    from oslr.saved import SavedStudy
    from tests.test_saved import _study

    out, _ = _study(tmp_path)
    seen = []
    monkeypatch.setattr(SavedStudy, "plot", lambda self, path, **kw: seen.append(kw))
    assert main(["plot", str(out), "--axes", "logx"]) == 0
    assert seen == [{"metric": None, "axes": "logx", "band": "pointwise"}]
