"""The benchmark suite runs (tiny sizes): rows exist, ratios are finite. No speed is asserted."""

import json
import math
from pathlib import Path

import pytest

from benchmarks.cases import BY_NAME, CASES
from benchmarks.suite import main
from benchmarks.throughput import missed_targets
from oslr.registry import LEARNERS


def test_benchmarks__a_case_for_every_registered_learner():
    assert set(BY_NAME) == set(LEARNERS)


def test_benchmarks__missed_targets_name_each_miss():
    peers = [{"peer": "river LinUCBDisjoint", "ratio": 480.0},
             {"peer": "mabwiser LinUCB", "ratio": 3000.0}]
    row = {"learner": "linucb", "ratio": 99.0, "peers": peers, "kind": "linalg",
           "pct_peak": 30.0}
    assert missed_targets(row) == ["99.0x NumPy < 100x", "480.0x river < 500x"]
    assert missed_targets({**row, "learner": "flinucb-gd", "ratio": 9.0, "pct_peak": 3.0}) == [
        "9.0x NumPy < 10x", "3.0% of peak < 25%"]
    met = [{**peers[0], "ratio": 500.0}, peers[1]]
    assert missed_targets({**row, "ratio": 100.0, "peers": met}) == []
    for learner in ("foster-hedge", "ftpsl"):
        row = {"learner": learner, "ratio": 19.9, "kind": "vector", "pct_peak": 1.0}
        assert missed_targets(row) == ["19.9x NumPy < 20x"]
        assert missed_targets({**row, "ratio": 20.0}) == []
    row = {"learner": "ogd-full", "ratio": 20.0, "kind": "vector", "pct_peak": 1.0}
    assert missed_targets({**row, "oslr_over_jax_plain": 0.99}) == ["0.99x a plain JAX scan < 1x"]
    assert missed_targets({**row, "oslr_over_jax_plain": 1.0}) == []


def test_hlo_ops__counts_a_loop_body_per_round_and_inner_loops_per_trip():
    import jax
    import jax.numpy as jnp
    from jax import lax

    from benchmarks.hlo_ops import count, parse, round_loop, summary

    def inner(v):  # 3 trips of a sort (one op the CPU backend cannot fuse away)
        return lax.fori_loop(0, 3, lambda j, u: jnp.sort(u * 1.5), v)

    def study(x):
        return lax.fori_loop(0, 11, lambda i, v: inner(jnp.sort(v) - 1.0), x)

    hlo = jax.jit(study).lower(jnp.arange(8.0)).compile().as_text()
    comps, entry = parse(hlo)
    body, trips = round_loop(comps, entry, 11)
    assert trips == 11
    ops = count(comps, body)
    assert ops["sort"] == 1 + 3 and ops["while"] == 1  # the inner loop's sort once per trip
    row = summary(hlo, 11)
    assert row["sort"] == 4 and row["control"] == 1 and row["ops_per_round"] >= 5
    with pytest.raises(ValueError, match="no loop of 12 rounds"):
        summary(hlo, 12)


def _check_rows(rows, learners):
    """Structure and finiteness only: a loaded machine may time anything (GFLOP/s and % of peak
    can round to 0), so no speed or sign of a speed is asserted."""
    assert [r["learner"] for r in rows] == list(learners)
    for r in rows:
        for key in ("ratio", "jax_run_rounds_per_s", "gflops", "pct_peak", "jax_mem_mb",
                    "harness_share"):
            assert math.isfinite(r[key]) and r[key] >= 0, (r["learner"], key, r[key])


@pytest.mark.slow  # moved behind -m slow to keep the default run under 5 min
def test_benchmarks__smoke_of_two_learners_produces_rows(tmp_path):
    # the whole smoke run (every learner, scaling, memory in fresh processes) is marked slow
    result = main(["--smoke", "--quiet", "--only", "throughput", "--learners",
                   "ogd-full,eps-greedy", "--out", str(tmp_path)])
    _check_rows(result["rows"], ["ogd-full", "eps-greedy"])
    text = (tmp_path / "RESULTS.md").read_text()
    assert "ogd-full" in text and "eps-greedy" in text
    assert (tmp_path / "results.json").exists()


@pytest.mark.slow
def test_benchmarks__smoke_produces_finite_rows_scaling_and_memory(tmp_path):
    result = main(["--smoke", "--quiet", "--out", str(tmp_path)])
    _check_rows(result["rows"], [c.learner for c in CASES])
    assert [r["runs"] for r in result["scaling_runs"]] == [1, 4]
    assert all(math.isfinite(r["run_rounds_per_s"])
               for r in result["scaling_runs"] + result["scaling_d"])
    assert [(r["runs"], r["unroll"]) for r in result["launch"]] == [(4, 1), (4, 2)]
    assert all(r["us_per_round"] > 0 for r in result["launch"])
    assert [r["T"] for r in result["memory_T"]] == [100, 1000]
    assert all(r["peak_rss_mb"] > 0 for r in result["memory_T"])
    text = (tmp_path / "RESULTS.md").read_text()
    assert all(c.learner in text for c in CASES) and "Memory vs T" in text
    assert (tmp_path / "results.json").exists() and (tmp_path / "scaling_runs.csv").exists()
    assert (tmp_path / "launch.csv").exists() and "runs x unroll" in text


def test_ftpsl_round__top_k_form_answers_as_the_rank_test_and_the_swap_is_undone():
    # the three membership forms timed by benchmarks.ftpsl_round must give the same counts
    import jax
    import jax.numpy as jnp
    import numpy as np

    from benchmarks import ftpsl_round
    from oslr.learners import ftpsl as ftpsl_module
    from oslr.primitives.topk import in_top_k

    rng = np.random.default_rng(3)
    scores = np.round(rng.normal(size=(300, 20)) * 1.5) + 0.0  # many exact ties
    scores[:60] *= np.where(rng.random((60, 20)) < 0.5, -1.0, 1.0)  # -0.0 beside +0.0
    x = jnp.asarray(scores, jnp.float32)
    for slots in (jnp.arange(20), jnp.array([7, 0, 19, 3])):
        for k in range(slots.shape[0] + 1):
            got = jax.vmap(lambda s: ftpsl_round._by_top_k(s, jnp.int32(k), slots))(x)
            want = jax.vmap(lambda s: in_top_k(s, jnp.int32(k), slots))(x)
            np.testing.assert_array_equal(np.asarray(got), np.asarray(want), err_msg=f"k={k}")
    topk = ftpsl_round.TOPK
    before = ftpsl_round.GR.in_top_k, topk.counts_in_one_pass, ftpsl_module.RANK_TEST_UP_TO
    with ftpsl_round.membership("select"):
        assert max(ftpsl_module.RANK_TEST_UP_TO.values()) < 1
    with ftpsl_round.membership("top_k"):
        assert ftpsl_round.GR.in_top_k is ftpsl_round._by_top_k
        assert min(ftpsl_module.RANK_TEST_UP_TO.values()) >= 123
    for form in ("pairs", "pass"):
        with ftpsl_round.membership(form):
            assert topk.counts_in_one_pass() is (form == "pass")
            assert min(ftpsl_module.RANK_TEST_UP_TO.values()) >= 123
    after = ftpsl_round.GR.in_top_k, topk.counts_in_one_pass, ftpsl_module.RANK_TEST_UP_TO
    assert after == before


@pytest.mark.parametrize("family", ["prediction", "linear", "bandit"])
def test_harness__idle_learner_commits_and_observes_nothing(family):
    # benchmarks.harness times each case's stream with this learner: it must play a legal round
    # of its family and look at nothing (else "harness" would include learner work)
    import jax.numpy as jnp

    from benchmarks.harness import idle_learner
    from oslr.rollout import play_round
    from oslr.types import BanditExample, StreamExample

    d = 5
    learner = idle_learner(family, d)
    example = (BanditExample(arms=jnp.eye(3, d), rewards=jnp.arange(3.0), means=jnp.zeros(3))
               if family == "bandit" else
               StreamExample(x=jnp.arange(1.0, d + 1.0), y=jnp.float32(2.0),
                             y_clean=jnp.float32(2.0)))
    state = learner.init(None, {})
    new_state, record = play_round(learner, None, state, example, {}, jnp.int32(0))
    assert int(new_state) == 1
    if family == "prediction":
        assert float(record.prediction) == 0.0 and not bool(record.query.any())
        assert int(record.n_queried) == 0 and not bool(record.over_budget)
    elif family == "linear":
        assert not bool(record.w.any()) and not bool(record.query.any())
        assert int(record.n_queried) == 0 and not bool(record.over_budget)
    else:
        assert int(record.arm) == 0


@pytest.mark.slow  # compiles every harness variant (12 s); keeps the default run under 5 min
def test_harness_parts__every_variant_timed_and_metrics_restored():
    from benchmarks import harness_parts
    from oslr import metrics

    update, compensated = metrics.update, metrics.compensated
    rows = harness_parts.measure("ogd-full", runs=2, horizon=10, repeats=1)
    assert [r["program"] for r in rows] == ["row", "idle", *harness_parts.VARIANTS]
    assert all(r["us_wall"] > 0 and r["us_cpu"] >= 0 for r in rows)
    assert (metrics.update, metrics.compensated) == (update, compensated)


def test_first_result__the_readmes_sweep_timed_from_the_process_start(tmp_path):
    import sys

    from benchmarks import first_result
    from benchmarks.suite import to_markdown

    body = first_result._quickstart_body()
    assert "oslr.sweep" in body and body.index("MARK import") < body.index("oslr.sweep")
    assert body.rstrip().endswith('print("MARK result", time.time())')
    tiny = first_result._TIMED.format(body="import os\nprint('MARK import', time.time())")
    marks = first_result._marks([sys.executable, "-c", tiny], tmp_path / "cache", tmp_path)
    assert 0 < marks["start"] <= marks["import"] <= marks["exit"]
    rows = [{"case": "quickstart", "cache": "warm", "repeats": 1, "import_s": 1.0,
             "result_s": 2.0}]
    shipped = json.loads((Path(__file__).parents[1] / "benchmarks" / "results.json").read_text())
    text = to_markdown({**shipped, "first_result": rows}, None)
    assert "## Time to a first result" in text and "| quickstart | warm | 1 | 1.0 | 2.0 |" in text


def test_first_result__the_readmes_study_to_its_folder_read_back():
    from benchmarks import first_result

    body = first_result._study_body()
    assert "oslr.Study(" in body and "study.run()" in body
    assert body.rstrip().endswith('print("MARK result", time.time())')


def test_machinery__costs_counted_from_the_source_and_the_gain_as_measured(monkeypatch):
    from benchmarks import machinery
    from benchmarks.suite import to_markdown

    costs = machinery.costs()
    assert set(costs) == {"store", "threefry", "one-pass counting", "option probes"}
    assert all(c["lines"] > 10 and c["jax_apis"] for c in costs.values())
    monkeypatch.setattr(machinery, "first_results", lambda settings, repeats: {
        case: {"store": 2.0, "no store": 3.0, "rolled": 2.5}
        for case in ("sweep, 100 runs", "Study", "oslr run")})
    monkeypatch.setattr(machinery, "headline", lambda name, runs, horizon, settings, repeats: {
        label: {"cpu_rate": 200.0 if i == 0 else 100.0, "wall_rate": 1.0}
        for i, label in enumerate(settings)})
    monkeypatch.setattr(machinery, "probe_seconds", lambda repeats: 0.5)
    rows = machinery.measure(repeats=1)
    by = {(r["piece"], r["study"]): r for r in rows}
    assert by[("store", "Study")]["gain_pct"] == 50.0  # 3 s without, 2 s with
    assert by[("threefry", "sweep, 100 runs")]["gain_pct"] == 25.0
    assert by[("threefry", "ogd-full, 256 runs x 2000")]["gain_pct"] == 100.0  # twice the rate
    assert by[("one-pass counting", "ftpsl, 256 runs x 800, one core")]["gain_pct"] == 100.0
    assert by[("option probes", "sweep, 100 runs")]["gain_pct"] == -25.0  # 0.5 s of 2 s
    shipped = json.loads((Path(__file__).parents[1] / "benchmarks" / "results.json").read_text())
    assert "## What each piece of JAX-internals machinery pays" in to_markdown(shipped, None)
    assert {r["piece"] for r in shipped["machinery"]} == set(costs)
