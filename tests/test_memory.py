"""`oslr.memory`: what a study's state costs, from shapes alone, and the refusal of one that
cannot fit, with the sizes it names."""

import types

import jax
import numpy as np
import pytest

import oslr
from oslr import memory, metrics, program


def _device(limit: int):
    return types.SimpleNamespace(platform="gpu", memory_stats=lambda: {"bytes_limit": limit})


def test_run_bytes__the_carry_and_params_of_one_run_vector_params_included():
    learner, params = oslr.make("ftpl-random-subset", d=5)
    problem, pp = oslr.make_problem("sparse-linear", d=5, k=2)
    stacked = oslr.stack_params([params])
    n_ckpt = len(metrics.checkpoint_rounds(30))
    init_b, _ = program.batched_fns(learner, problem, n_ckpt, False)
    carry = init_b(np.uint32(0), np.zeros(1, np.int32), stacked, pp)
    want = sum(a.nbytes for a in jax.tree.leaves(carry)) + sum(
        np.asarray(a).nbytes for a in jax.tree.leaves(stacked))
    assert memory.run_bytes(learner, problem, stacked, pp, n_ckpt, False) == want


def test_check_fits__refuses_naming_the_size_per_device_runs_rounded_up(monkeypatch):
    learner, params = oslr.make("ogd-full", d=4)
    problem, pp = oslr.make_problem("sparse-linear", d=4, k=2)
    stacked = oslr.stack_params([params])
    n_ckpt = len(metrics.checkpoint_rounds(10))
    per_run = memory.run_bytes(learner, problem, stacked, pp, n_ckpt, False)
    need = 2 * per_run * 2  # 3 runs over 2 devices: 2 runs on the first
    with pytest.raises(ValueError) as err:
        memory.check_fits(learner, problem, stacked, pp, 10, 3, track_stats=False,
                          devices=[_device(need - 1), _device(need - 1)])
    assert str(err.value) == (
        f"this study needs about {need / 2**30:.1f} GiB on each device for its state (3 runs x "
        f"grid points, {per_run:,} bytes a run, twice), more than the "
        f"{(need - 1) / 2**30:.1f} GiB of gpu; run fewer runs at a time (in Python: run_offset "
        "splits a study and the results combine, or fewer n_checkpoints; with oslr run: fewer "
        "--runs now, more later under another --seed, joined by `oslr merge`).")
    memory.check_fits(learner, problem, stacked, pp, 10, 3, track_stats=False,
                      devices=[_device(need), _device(need)])  # exactly enough


def test_check_fits__gib_in_the_message_are_binary_with_one_decimal():
    learner, params = oslr.make("ogd-full", d=4)
    problem, pp = oslr.make_problem("sparse-linear", d=4, k=2)
    with pytest.raises(ValueError, match=r"needs about 0\.0 GiB .* more than the 0\.0 GiB of gpu"):
        memory.check_fits(learner, problem, oslr.stack_params([params]), pp, 10, 1,
                          devices=[_device(3)])
    per_run = memory.run_bytes(learner, problem, oslr.stack_params([params]), pp,
                               len(metrics.checkpoint_rounds(10)), False)
    need = f"{2 * per_run * 2**27 / 2**30:.1f}"
    with pytest.raises(ValueError, match=rf"needs about {need} GiB .* more than the 1\.5 GiB"):
        memory.check_fits(learner, problem, oslr.stack_params([params]), pp, 10, 2**27,
                          track_stats=False, devices=[_device(3 * 2**29)])


@pytest.mark.parametrize("name,problem_name,options,want", [
    # the default: the comparator's statistics for a prediction learner when they are small
    ("ogd-full", "sparse-linear", {"d": 4, "k": 2}, (2, True)),
    # a stream without a k: no comparator sparsity, no statistics
    ("ogd-full", "a9a", {}, (None, False)),
    # a linear learner: its comparator needs no Gram statistics and no k from the problem
    ("ftpl-random-subset", "sparse-linear", {"d": 4, "k": 2}, (None, False)),
])
def test_check_fits__comparator_k_and_statistics_by_family_and_problem(name, problem_name,
                                                                       options, want):
    problem, pp = oslr.make_problem(problem_name, **options)
    learner, params = oslr.make(name, d=problem.d)
    assert memory.check_fits(learner, problem, oslr.stack_params([params]), pp, 10, 2) == want


def test_check_fits__statistics_beyond_their_limit_are_not_kept(monkeypatch):
    learner, params = oslr.make("ogd-full", d=4)
    problem, pp = oslr.make_problem("sparse-linear", d=4, k=2)
    stacked = oslr.stack_params([params])
    n_ckpt = len(metrics.checkpoint_rounds(10))
    monkeypatch.setattr(memory, "STATS_BYTES_LIMIT", memory.stats_bytes(2, n_ckpt, 4) - 1)
    assert memory.check_fits(learner, problem, stacked, pp, 10, 2) == (2, False)
    assert memory.check_fits(learner, problem, stacked, pp, 10, 1) == (2, True)
    monkeypatch.setattr(memory, "STATS_BYTES_LIMIT", memory.stats_bytes(2, n_ckpt, 4))
    assert memory.check_fits(learner, problem, stacked, pp, 10, 2) == (2, True)  # at the limit
    # asked for, on a family whose comparator has no use for them: not kept
    lin, lp = oslr.make("ftpl-random-subset", d=4)
    assert memory.check_fits(lin, problem, oslr.stack_params([lp]), pp, 10, 1,
                             comparator_k=2, track_stats=True) == (2, False)


def test_check_fits__the_memory_check_counts_the_statistics_it_keeps():
    learner, params = oslr.make("ogd-full", d=4)
    problem, pp = oslr.make_problem("sparse-linear", d=4, k=2)
    stacked = oslr.stack_params([params])
    n_ckpt = len(metrics.checkpoint_rounds(10))
    plain = 2 * memory.run_bytes(learner, problem, stacked, pp, n_ckpt, False)
    with_stats = 2 * memory.run_bytes(learner, problem, stacked, pp, n_ckpt, True)
    assert with_stats > plain
    device = _device(plain)  # room for the state without the comparator's statistics
    assert memory.check_fits(learner, problem, stacked, pp, 10, 1, track_stats=False,
                             devices=[device]) == (2, False)
    with pytest.raises(ValueError, match="this study needs about"):
        memory.check_fits(learner, problem, stacked, pp, 10, 1, track_stats=True,
                          devices=[device])
