"""Simulator: determinism, chunking, batching, sharding, streaming memory, input errors (resume:
tests/test_checkpoint.py)."""

import os
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import oslr
from oslr import checkpoint, memory, metrics, program, sim
from tests.helpers import run_on_host_devices, study_setup


# the studies of horizon 20 and 2 runs of this setup are tests/test_checkpoint.py's programs
_setup = study_setup


def _assert_same(a, b):
    for key in a.curves:
        np.testing.assert_array_equal(a.curves[key], b.curves[key], err_msg=key)
        np.testing.assert_array_equal(a.final[key], b.final[key], err_msg=key)


@pytest.mark.slow  # moved behind -m slow to keep the default run under 5 min
def test_simulate__identical_whatever_the_chunk_size():
    learner, params, problem, pp = _setup()
    # one chunk, and chunks of 7 rounds (the last one partial: 120 = 17 x 7 + 1)
    runs = [oslr.simulate(learner, problem, params, pp, horizon=120, n_runs=4, chunk_size=c)
            for c in (120, 7)]
    _assert_same(runs[0], runs[1])


def test_simulate__partial_last_chunk_stops_at_the_horizon():
    # 20 = 8 + 8 + 4: the last chunk's program runs 8 rounds and must leave the carry as it
    # was after round 20 (the only guarded program); one 20-round chunk needs no guard
    learner, params, problem, pp = _setup()
    whole, parts = (oslr.simulate(learner, problem, params, pp, horizon=20, n_runs=2,
                                  chunk_size=c) for c in (20, 8))
    for key in whole.final:
        np.testing.assert_allclose(parts.final[key], whole.final[key], rtol=1e-5, atol=1e-6,
                                   err_msg=key)
        np.testing.assert_allclose(parts.curves[key], whole.curves[key], rtol=1e-5, atol=1e-6,
                                   err_msg=key)


@pytest.mark.slow  # moved behind -m slow to keep the default run under 5 min
def test_simulate__unrolled_loop_agrees_with_the_plain_one():
    # 3 rounds per iteration over chunks of 40: 13 whole iterations and a remainder of 1
    learner, params, problem, pp = _setup("ftpl-random-subset")
    plain, unrolled = (oslr.simulate(learner, problem, params, pp, horizon=120, n_runs=3,
                                     chunk_size=40, unroll=u) for u in (1, 3))
    for key in plain.final:
        np.testing.assert_allclose(unrolled.final[key], plain.final[key], rtol=1e-5, atol=1e-6,
                                   err_msg=key)
        np.testing.assert_allclose(unrolled.curves[key], plain.curves[key], rtol=1e-5,
                                   atol=1e-6, err_msg=key)


def test_simulate__identical_however_runs_are_batched():
    learner, params, problem, pp = _setup()
    whole = oslr.simulate(learner, problem, params, pp, horizon=20, n_runs=4)
    first = oslr.simulate(learner, problem, params, pp, horizon=20, n_runs=2)
    rest = oslr.simulate(learner, problem, params, pp, horizon=20, n_runs=2, run_offset=2)
    for key in whole.final:
        np.testing.assert_array_equal(
            whole.final[key], np.concatenate([first.final[key], rest.final[key]], axis=1)
        )


def test_simulate__grid_points_share_the_stream_common_random_numbers():
    learner, params, problem, pp = _setup("ogd-full")
    labels, grid = oslr.grid_params(params, {"eta": [0.01, 0.1]})
    res = oslr.simulate(learner, problem, grid, pp, horizon=100, n_runs=3, grid=labels)
    # the true model's loss depends only on the stream: equal across grid points
    np.testing.assert_array_equal(res.final["loss_wstar"][0], res.final["loss_wstar"][1])
    assert not np.array_equal(res.final["loss"][0], res.final["loss"][1])


def test_simulate__carry_size_does_not_grow_with_horizon():
    learner, params, problem, pp = _setup()
    ck = {T: metrics.checkpoint_rounds(T) for T in (10**3, 10**6)}
    assert len(ck[10**3]) <= 51 and len(ck[10**6]) <= 51
    init_one, _ = program.make_run_fns(learner, problem, 51, True)
    shapes = jax.eval_shape(init_one, np.uint32(0), np.int32(0), params, pp)
    n_bytes = sum(np.prod(x.shape) * x.dtype.itemsize for x in jax.tree.leaves(shapes))
    assert n_bytes < 100_000  # state + running sums + 51 checkpoints, independent of T


def test_simulate__long_horizon_runs_in_bounded_memory():
    learner, params, problem, pp = _setup()
    res = oslr.simulate(learner, problem, params, pp, horizon=20_000, n_runs=2,
                        chunk_size=5000, track_stats=False)
    assert res.curves["loss"].shape == (1, 2, len(res.ckpts))
    assert res.ckpts[-1] == 20_000


_SHARD_SCRIPT = """
import json, sys, numpy as np, jax, oslr
problem, pp = oslr.make_problem("sparse-linear", d=8, k=2)
learner, params = oslr.make("ogd-random-subset", d=8, k=3)
res = oslr.simulate(learner, problem, params, pp, horizon=150, n_runs=6)
print(json.dumps({"devices": len(jax.devices()), "loss": res.final["loss"].tolist()}))
"""


@pytest.mark.slow  # moved behind -m slow to keep the default run under 5 min
def test_simulate__sharded_over_four_host_devices_matches_one_device():
    sharded = run_on_host_devices(_SHARD_SCRIPT, 4)
    assert sharded["devices"] == 4
    learner, params, problem, pp = _setup()
    single = oslr.simulate(learner, problem, params, pp, horizon=150, n_runs=6)
    np.testing.assert_allclose(np.asarray(sharded["loss"]), single.final["loss"], rtol=1e-6)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(horizon=0), "horizon"),
        (dict(n_runs=-1), "n_runs"),
        (dict(horizon=2.5), "horizon"),
        (dict(unroll=0), "unroll"),
        (dict(chunk_size=0), r"chunk_size must be a positive integer, got 0"),
        (dict(horizon=2**31), r"horizon=2147483648 must be below 2\^31"),
        (dict(run_offset=-1), r"run_offset=-1 must be an integer >= 0"),
        (dict(run_offset=2**31 - 1), r"run_offset=2147483647 .* n_runs <= 2\^31 .*n_runs=2"),
        (dict(run_offset=1.0), r"run_offset=1\.0 must be an integer"),
    ],
)
def test_simulate__bad_settings_fail_before_tracing(kwargs, match):
    learner, params, problem, pp = _setup()
    settings = {**dict(horizon=10, n_runs=2), **kwargs}
    with pytest.raises(ValueError, match=match):
        oslr.simulate(learner, problem, params, pp, **settings)


def test_simulate__bad_params_fail_with_clear_message():
    problem, pp = oslr.make_problem("sparse-linear", d=8, k=2)
    learner, params = oslr.make("ogd-random-subset", d=8, k=9)
    with pytest.raises(ValueError, match=r"k=\[9\] is out of range"):
        oslr.simulate(learner, problem, params, pp, horizon=10, n_runs=1)
    learner, params = oslr.make("ogd-full", d=8, eta=float("nan"))
    with pytest.raises(ValueError, match="NaN"):
        oslr.simulate(learner, problem, params, pp, horizon=10, n_runs=1)
    learner, params = oslr.make("ogd-full", d=8, eta=-1.0)
    with pytest.raises(ValueError, match="eta"):
        oslr.simulate(learner, problem, params, pp, horizon=10, n_runs=1)
    # a grid of two labels with params of one point: the grid axis named with its sizes
    learner, params = oslr.make("ogd-full", d=8)
    with pytest.raises(ValueError, match=r"params must have a leading grid axis of size 2; "
                                         r"got \{None\}"):
        oslr.simulate(learner, problem, params, pp, horizon=10, n_runs=1,
                      grid=[{"eta": 0.1}, {"eta": 0.2}])


def test_simulate__horizon_beyond_dataset_needs_cycle():
    problem, pp = oslr.make_problem("mnist35")
    learner, params = oslr.make("ogd-full", d=problem.d)
    with pytest.raises(ValueError, match="cycle"):
        oslr.simulate(learner, problem, params, pp, horizon=problem.n_rows + 1, n_runs=1)


def test_simulate__family_mismatch_is_refused():
    problem, pp = oslr.make_problem("linear-bandit", d=4)
    learner, params = oslr.make("ogd-full", d=4)
    with pytest.raises(ValueError, match="cannot run"):
        oslr.simulate(learner, problem, params, pp, horizon=10, n_runs=1)


def test_sweep__labels_every_grid_point_in_one_call():
    learner, params, problem, pp = _setup()
    res = oslr.sweep(learner, problem, params, pp, {"k": [1, 3], "eta": [0.01, 0.1]},
                     horizon=50, n_runs=3)
    assert res.grid == [{"k": 1, "eta": 0.01}, {"k": 1, "eta": 0.1}, {"k": 3, "eta": 0.01},
                        {"k": 3, "eta": 0.1}]
    table = res.summary_table(full=True)
    assert list(table[table.primary]["params"]) == [
        "k=1, eta=0.01", "k=1, eta=0.1", "k=3, eta=0.01", "k=3, eta=0.1"]
    shown = res.summary_table()  # what print shows: every column, none hidden behind "..."
    assert list(shown) == ["learner", "params", "metric", "mean", "sem", "ci_low", "ci_high",
                           "n_runs"]
    assert "..." not in str(shown) and "columns]" not in str(shown)
    queries = res.final["queries"][:, 0] / 50
    np.testing.assert_allclose(queries, [1, 1, 3, 3])
    assert set(res.curves_table()["t"]) == set(res.ckpts)


def test_simulate__arguments_in_the_wrong_order_get_one_clear_line():
    import oslr

    problem, pp = oslr.make_problem("sparse-linear", d=4, k=2)
    learner, params = oslr.make("ogd-full", d=4)
    made = oslr.make("ogd-full", d=4)
    for args, message in [((problem, learner, params, pp), "the learner and the problem are "
                                                           "swapped"),
                          ((learner, problem, made, pp), "params is a tuple, not a params "
                                                        "pytree"),
                          ((params, problem, params, pp),
                           r"the first argument must be a Learner \(from oslr.make\), got "
                           f"{type(params).__name__}: "),
                          ((learner, pp, params, pp),
                           r"the second argument must be a Problem \(from oslr.make_problem\), "
                           f"got {type(pp).__name__}: ")]:
        with pytest.raises(ValueError, match=message):
            oslr.simulate(*args, horizon=5, n_runs=2)


def test_simulate__run_offset_at_the_last_allowed_run_is_accepted():
    learner, params, problem, pp = _setup()
    res = oslr.simulate(learner, problem, params, pp, horizon=20, n_runs=2,
                        run_offset=2**31 - 2)
    assert res.n_runs == 2


@pytest.mark.parametrize("grid,match", [
    ({"k": []}, r"grid k=\[\] must be a non-empty list of values"),
    ({"k": 3}, r"grid k=3 must be a non-empty list of values, e.g. \{'k': \[3\]\}"),
    ({"k": "3"}, r"grid k='3' must be a non-empty list"),
])
def test_sweep__an_empty_or_scalar_grid_is_refused_in_one_line(grid, match):
    learner, params, problem, pp = _setup()
    with pytest.raises(ValueError, match=match):
        oslr.sweep(learner, problem, params, pp, grid, horizon=5, n_runs=2)


@pytest.mark.parametrize("sigma,ok", [(1e6, True), (0.0, True), (1.1e6, False), (1e30, False),
                                      (-0.1, False), (float("nan"), False)])
def test_make_problem__sigma_beyond_float32_losses_is_refused(sigma, ok):
    if ok:
        oslr.make_problem("sparse-linear", d=4, k=2, sigma=sigma)
        return
    with pytest.raises(ValueError, match=r"option sigma=.* is out of range \[0, 1e\+06\] \(label "
                                         r"noise .*squared losses .* overflow float32"):
        oslr.make_problem("sparse-linear", d=4, k=2, sigma=sigma)


def test_simulate__labels_diagnostics_at_the_horizon_and_devices(capsys):
    # foster-hedge reports max_subset_prob at every checkpoint; final = the horizon's value
    problem, pp = oslr.make_problem("sparse-linear", d=5, k=2)
    learner, params = oslr.make("foster-hedge", d=5, k=2, k_query=4, horizon=60)
    res = oslr.simulate(learner, problem, params, pp, horizon=60, n_runs=2, n_checkpoints=4,
                        progress=True)
    err = capsys.readouterr().err  # the bar counts rounds up to the horizon
    assert "60/60" in err and "foster-hedge" in err
    curve = res.curves["max_subset_prob"]
    np.testing.assert_array_equal(res.final["max_subset_prob"], curve[:, :, -1])
    assert not np.array_equal(curve[:, :, -1], curve[:, :, -2])  # it moved: the check bites
    # the value at T is the learner's state after round T (not before it), as an independent
    # rollout of each run computes it
    from oslr.rollout import episode_fn

    run = jax.jit(episode_fn(learner, problem, 60))
    for r in range(2):
        state, _ = run(jnp.uint32(0), jnp.int32(r), params, pp)
        want = learner.diagnostics(state, params)["max_subset_prob"]
        np.testing.assert_allclose(res.final["max_subset_prob"][0, r], want, rtol=1e-6)
    assert res.info["devices"] == [str(d) for d in jax.devices()] and res.info["d"] == 5
    assert res.comparator_k == 2  # a prediction learner: the problem's k by default


def test_simulate__a_list_inside_params_is_refused_before_tracing():
    import dataclasses

    learner, params, problem, pp = _setup()
    listed = dataclasses.replace(params, eta=[0.1, 0.2])
    with pytest.raises(ValueError, match=r"^params.eta is a Python list; each params field holds "
                                         r"one value .* oslr.sweep\(learner, problem, params, "
                                         r"problem_params, \{'eta': \[...\]\}, ...\)\.$"):
        oslr.simulate(learner, problem, listed, pp, horizon=5, n_runs=2)
    with pytest.raises(ValueError, match=r"^problem_params.k is a Python tuple"):
        oslr.simulate(learner, problem, params, dataclasses.replace(pp, k=(1, 2)), horizon=5,
                      n_runs=2)


def test_simulate__a_dict_as_params_is_refused_in_one_line_naming_the_fix():
    import dataclasses

    learner, params, problem, pp = _setup()
    fix = r"\): pass the params that oslr.{} returns, changing a value with dataclasses.replace\({}, "
    with pytest.raises(ValueError, match=r"^params is a dict that learner 'ogd-random-subset' "
                       r"cannot read \('dict' object has no attribute 'eta'" +
                       fix.format("make", "params") + r"name=value\)\.$"):
        oslr.simulate(learner, problem, dataclasses.asdict(params), pp, horizon=5, n_runs=2)
    with pytest.raises(ValueError, match=r"^problem_params is a dict that problem 'sparse-linear' "
                       r"cannot read \('dict' object has no attribute '\w+'" +
                       fix.format("make_problem", "problem_params")):
        oslr.simulate(learner, problem, params, dataclasses.asdict(pp), horizon=5, n_runs=2)
    # a learner without a check whose init reads the dict's missing field: the abstract trace
    bare = learner._replace(check=None, init=lambda key, p: p.radius * np.zeros(3))
    with pytest.raises(ValueError, match=r"^params is a dict that learner 'ogd-random-subset' "
                       r"cannot read \('dict' object has no attribute 'radius'\)"):
        oslr.simulate(bare, problem, {"eta": 0.1}, pp, horizon=5, n_runs=2)


def test_simulate__a_history_shorter_than_the_horizon_is_refused_before_tracing():
    from oslr.types import Requirements

    learner, params, problem, pp = _setup()
    short = learner._replace(requires=Requirements(capacity=9))
    with pytest.raises(ValueError, match=r"keeps a history of 9 samples but the horizon is 10; "):
        oslr.simulate(short, problem, params, pp, horizon=10, n_runs=2)


def test_resume_round__the_last_round_every_process_saved(monkeypatch, tmp_path):
    """Under jax.distributed: each process sends its newest two rounds, padded with -1."""
    rows = {}
    monkeypatch.setattr(jax, "process_count", lambda: 2)
    monkeypatch.setattr(checkpoint, "saved_rounds", lambda folder: rows["mine"])
    monkeypatch.setattr(checkpoint.multihost_utils, "process_allgather",
                        lambda mine: np.stack([mine, rows["other"]]))
    for mine, other, want in (([10, 20], [-1, -1], "error"), ([], [-1, -1], None),
                              ([10, 20], [10, -1], 10), ([20, 30], [20, 30], 30),
                              ([10], [-1, -1], "error")):
        rows.update(mine=mine, other=np.array(other))
        if want == "error":
            with pytest.raises(ValueError, match=r"the processes saved no round in common"):
                checkpoint.resume_round(tmp_path, tmp_path)
        else:
            assert checkpoint.resume_round(tmp_path, tmp_path) == want


def test_batch_layout__grid_major_runs_padded_to_the_devices():
    from oslr.sim import batch_layout

    run_ids, pidx = batch_layout(2, 3, 10, 4)  # 6 elements padded to 8 for 4 devices
    assert run_ids.tolist() == [10, 11, 12, 10, 11, 12, 12, 12] and run_ids.dtype == np.int32
    assert pidx.tolist() == [0, 0, 0, 1, 1, 1, 1, 1]
    assert batch_layout(1, 5, 0, 4)[0].tolist() == [0, 1, 2, 3, 4, 4, 4, 4]  # pad 3, not 1
    assert batch_layout(2, 2, 0, 4)[0].tolist() == [0, 1, 0, 1]  # a multiple: no padding
    assert batch_layout(1, 3, 0, 1)[1].tolist() == [0, 0, 0]


def test_simulate__fifty_checkpoints_by_default_and_a_bar_that_does_not_stay(monkeypatch):
    import tqdm

    learner, params, problem, pp = _setup()
    bars = []

    class Bar:
        def __init__(self, **kwargs):
            bars.append(kwargs)

        def update(self, n):
            pass

        def refresh(self):
            pass

        def close(self):
            pass

    monkeypatch.setattr(tqdm, "tqdm", Bar)
    monkeypatch.setitem(__import__("sys").modules, "ipywidgets", None)  # the text bar
    res = oslr.simulate(learner, problem, params, pp, horizon=200, n_runs=2, progress=True)
    from oslr.metrics import checkpoint_rounds

    assert res.ckpts.tolist() == checkpoint_rounds(200, 50).tolist()  # the default n = 50
    assert res.ckpts.tolist() != checkpoint_rounds(200, 51).tolist()
    assert bars == [{"total": 200, "unit": "round", "desc": learner.name, "leave": False}]


def test_warn_diagnostics__names_the_learner_the_count_and_the_runs():
    from types import SimpleNamespace

    from oslr.sim import _warn_diagnostics

    learner = SimpleNamespace(name="ftpsl-knapsack",
                              warn_if_nonzero={"lp_failures": "LP solves failed"})
    with pytest.warns(RuntimeWarning, match=r"^ftpsl-knapsack: 3 LP solves failed \(2 of 4 runs; "
                                            r"diagnostic 'lp_failures'\)\.$"):
        _warn_diagnostics(learner, {"lp_failures": np.array([[0, 1], [2, 0]])})
    _warn_diagnostics(learner, {"lp_failures": np.zeros((2, 2))})  # all zero: silent


def test_grid_params__an_unknown_name_lists_the_learners_parameters():
    learner, params, problem, pp = _setup()
    with pytest.raises(ValueError, match=r"^grid key 'zz' is not a parameter of this learner; "
                                         r"parameters: eta, k, radius\.$"):
        oslr.grid_params(params, {"zz": [1]})


def test_stats_bytes__compensated_float32_twice_plain_float64():
    from oslr.memory import stats_bytes
    from tests.helpers import x64

    if not jax.config.jax_enable_x64:
        assert stats_bytes(10, 4, 3) == 10 * 5 * 9 * 4 * 2  # a sum and its rounding error
    with x64():
        assert stats_bytes(10, 4, 3) == 10 * 5 * 9 * 8  # plain float64 sums


def test_simulate__no_progress_bar_unless_asked(monkeypatch):
    import tqdm

    def no_bar(**kwargs):
        raise AssertionError("a bar was made")

    monkeypatch.setattr(tqdm, "tqdm", no_bar)
    monkeypatch.setitem(__import__("sys").modules, "ipywidgets", None)
    learner, params, problem, pp = _setup()
    assert oslr.simulate(learner, problem, params, pp, horizon=20, n_runs=2).n_runs == 2


def test_available_bytes__what_the_accelerator_or_the_host_has_left(monkeypatch, tmp_path):
    import os
    from types import SimpleNamespace

    gpu = SimpleNamespace(memory_stats=lambda: {"bytes_limit": 123, "bytes_in_use": 23})
    assert memory._available_bytes(gpu) == 100
    cpu = SimpleNamespace(memory_stats=lambda: None)
    monkeypatch.setattr(memory, "_meminfo_available", lambda: 5000)
    monkeypatch.setattr(memory, "_cgroup_available", lambda: None)
    assert memory._available_bytes(cpu) == 5000
    monkeypatch.setattr(memory, "_cgroup_available", lambda: 4000)  # the cgroup allows less
    assert memory._available_bytes(SimpleNamespace()) == 4000
    monkeypatch.setattr(memory, "_meminfo_available", lambda: None)
    monkeypatch.setattr(memory, "_cgroup_available", lambda: None)
    host = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    assert memory._available_bytes(cpu) == host  # neither known: the physical memory


def test_meminfo_and_cgroup__read_from_their_files(monkeypatch, tmp_path):
    monkeypatch.undo()
    got = memory._meminfo_available()
    if os.path.exists("/proc/meminfo"):
        with open("/proc/meminfo") as f:
            kb = [int(line.split()[1]) for line in f if line.startswith("MemAvailable:")]
        assert got is not None and abs(got - kb[0] * 1024) < 2**30  # it moves between reads
    real = Path.read_text
    files = {"memory.max": "1000\n", "memory.current": "300\n"}
    monkeypatch.setattr(Path, "read_text", lambda self, *a, **k: files[self.name]
                        if self.name in files else real(self, *a, **k))
    assert memory._cgroup_available() == 700
    files["memory.max"] = "max\n"  # no limit
    assert memory._cgroup_available() is None


def test_simulate__checks_memory_on_the_first_device_of_the_study(monkeypatch):
    seen = []
    monkeypatch.setattr(memory, "_check_memory", lambda *a: seen.append(a[8]))  # the device
    learner, params, problem, pp = _setup()
    oslr.simulate(learner, problem, params, pp, horizon=20, n_runs=2)
    assert seen == [jax.devices()[0]]


def test_warn_diagnostics__a_diagnostic_missing_from_the_sums_is_zero(recwarn):
    from types import SimpleNamespace

    learner = SimpleNamespace(name="x", warn_if_nonzero={"lp_fail": "failed solves"})
    sim._warn_diagnostics(learner, {})  # not recorded: nothing to warn about, no error
    assert not recwarn.list
    with pytest.warns(RuntimeWarning, match=r"^x: 3 failed solves \(2 of 3 runs; diagnostic "
                                            r"'lp_fail'\)\.$"):
        sim._warn_diagnostics(learner, {"lp_fail": np.array([1.0, 0.0, 2.0])})


def test_save_checkpoint__an_old_round_already_removed_is_no_error(tmp_path, monkeypatch):
    # two savers of one folder (or a user) may remove an old round first: the save goes on
    carry = {"a": jax.numpy.arange(4.0)}
    real = checkpoint.saved_rounds
    monkeypatch.setattr(checkpoint, "saved_rounds", lambda folder: [1, 2, 3] + real(folder))
    checkpoint.save(tmp_path, carry, 10, "fp")
    assert [p.name for p in tmp_path.glob("checkpoint-*")] == [checkpoint.file_of(
        tmp_path, 10).name]


@pytest.mark.skipif(jax.default_backend() == "cpu",
                    reason="compares this machine's accelerator with its CPU (none here)")
def test_simulate__linucb_on_the_accelerator_matches_its_cpu_as_documented():
    # LinUCB, d = 20, K = 10, 256 runs, T = 2,000, seed 0 (the GPU differed by 1% before every
    # product ran at HIGHEST). Runs whose argmax meets a near-tie may pull another arm after a
    # rounding difference, so docs/reproducibility.md promises the mean of the final
    # pseudo-regret to 1% and the first rounds (before any trajectory can part) to 1e-5.
    problem, pp = oslr.make_problem("linear-bandit", d=20, n_arms=10)
    learner, params = oslr.make("linucb", d=20, n_arms=10)
    study = dict(horizon=2000, n_runs=256, seed=0)
    here = oslr.simulate(learner, problem, params, pp, **study)
    cpu = oslr.simulate(learner, problem, params, pp, **study, devices=jax.devices("cpu"))
    mean_here, mean_cpu = (r.final["pseudo_regret"].mean() for r in (here, cpu))
    assert abs(mean_here - mean_cpu) <= 0.01 * mean_cpu, (mean_here, mean_cpu)
    first = here.ckpts <= 10
    np.testing.assert_allclose(here.curves["pseudo_regret"][..., first],
                               cpu.curves["pseudo_regret"][..., first], rtol=1e-5, atol=1e-6)


def test_simulate__bad_unroll_and_a_fractional_grid_value_are_named(monkeypatch):
    learner, params, problem, pp = _setup()
    with pytest.raises(ValueError, match=r"^unroll must be a positive integer, got 0\.$"):
        oslr.simulate(learner, problem, params, pp, horizon=20, n_runs=2, unroll=0)
    with pytest.raises(ValueError, match=r"^grid: parameter k=1\.5 must be a whole number "
                                         r"\(it counts something\); give e\.g\. k=1 or k=2\.$"):
        oslr.grid_params(params, {"k": [1.5]})


def test_simulate__checks_memory_on_the_devices_it_was_given(monkeypatch):
    seen = []
    real = sim.check_fits
    monkeypatch.setattr(sim, "check_fits", lambda *a: (seen.append(a[9]), real(*a))[1])
    learner, params, problem, pp = _setup()
    mine = [jax.devices()[0]]
    oslr.simulate(learner, problem, params, pp, horizon=20, n_runs=2, devices=mine)
    assert seen == [mine] and seen[0] is not None


def test_simulate__the_result_keeps_its_settings_and_is_recorded():
    from oslr.result import recording

    learner, params, problem, pp = _setup()
    with recording() as seen:
        res = oslr.simulate(learner, problem, params, pp, horizon=20, n_runs=2, n_checkpoints=5,
                            comparator_radius=0.5)
    assert res.comparator_radius == 0.5 and res.realizable is True
    np.testing.assert_array_equal(res.ckpts, metrics.checkpoint_rounds(20, 5))
    assert len(seen) == 1 and seen[0].learner == learner.name and seen[0].n_runs == 2


def test_stack_params__grid_points_along_a_new_leading_axis_vectors_included():
    from oslr.sim import stack_params

    stacked = stack_params([{"w": np.arange(3.0, dtype=np.float32), "k": np.int32(2)},
                            {"w": np.arange(3.0, dtype=np.float32) + 10, "k": np.int32(5)}])
    assert stacked["w"].shape == (2, 3) and stacked["k"].shape == (2,)
    np.testing.assert_array_equal(stacked["w"][1], [10.0, 11.0, 12.0])
    assert stacked["w"].dtype == np.float32 and stacked["k"].dtype == np.int32


def test_execution__the_chunk_within_the_horizon_the_unroll_within_the_chunk():
    # a study's chunk and unroll as it plays them (and as its checkpoints record them): an
    # unroll past the chunk is the chunk's, so both calls are one study
    from types import SimpleNamespace

    from oslr.sim import _execution

    what = SimpleNamespace(horizon=25)
    how = _execution(what, None, 100, None, "1M", None, False)
    assert (how.chunk_size, how.unroll, how.max_memory) == (25, 25, 2**20)
    assert how.devices == jax.devices()
    assert (_execution(what, 10, 100, None, None, None, False).unroll,
            _execution(what, 10, 3, None, None, None, False).unroll,
            _execution(what, 10, 10, None, None, None, False).unroll) == (10, 3, 10)
    assert _execution(what, 40, 1, None, None, None, False).chunk_size == 25
    for bad in (0, -1):
        with pytest.raises(ValueError, match=r"^unroll must be a positive integer"):
            _execution(what, 10, bad, None, None, None, False)
