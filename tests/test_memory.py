"""`oslr.memory`: what a study's state costs, from shapes alone and from its compiled programs,
the runs per block that fit, and the refusal of a study no block makes fit, with the sizes it
names."""

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


def _room_for(nbytes: int) -> int:
    """A device limit whose budget (BUDGET_SHARE of it) is exactly `nbytes` or just above."""
    limit = int(nbytes / memory.BUDGET_SHARE)
    while int(memory.BUDGET_SHARE * limit) < nbytes:
        limit += 1
    return limit


def test_check_fits__refuses_only_when_one_run_per_device_cannot_fit():
    # more runs than fit at once are played in blocks: only a single run too big is refused
    learner, params = oslr.make("ogd-full", d=4)
    problem, pp = oslr.make_problem("sparse-linear", d=4, k=2)
    stacked = oslr.stack_params([params])
    n_ckpt = len(metrics.checkpoint_rounds(10))
    per_run = memory.run_bytes(learner, problem, stacked, pp, n_ckpt, False)
    limit = _room_for(2 * per_run)
    have = int(memory.BUDGET_SHARE * (limit - 1))
    with pytest.raises(ValueError) as err:
        memory.check_fits(learner, problem, stacked, pp, 10, 3, track_stats=False,
                          devices=[_device(limit - 1), _device(limit - 1)])
    assert str(err.value) == (
        f"one run of this study needs about {2 * per_run / 2**20:,.1f} MiB on each device (its "
        f"state, {per_run:,} bytes, twice), more than the {have / 2**20:,.1f} MiB it may use "
        "on gpu; free memory, raise max_memory (--max-memory) if you set it, or make each run "
        "smaller (fewer n_checkpoints, a smaller d).")
    memory.check_fits(learner, problem, stacked, pp, 10, 1000, track_stats=False,
                      devices=[_device(limit), _device(limit)])  # one run fits: blocks of them
    with pytest.raises(ValueError, match="one run of this study"):  # a cap the user set
        memory.check_fits(learner, problem, stacked, pp, 10, 3, track_stats=False,
                          devices=[_device(limit)], max_memory=2 * per_run - 1)


def test_check_fits__refuses_results_that_fit_neither_the_host_nor_the_disk(monkeypatch,
                                                                             tmp_path):
    learner, params = oslr.make("ogd-full", d=4)
    problem, pp = oslr.make_problem("sparse-linear", d=4, k=2)
    stacked = oslr.stack_params([params])
    n_ckpt = len(metrics.checkpoint_rounds(10))
    per_result = memory.result_bytes(learner, problem, stacked, pp, n_ckpt, False)
    assert 0 < per_result < memory.run_bytes(learner, problem, stacked, pp, n_ckpt, False)
    asked = []
    monkeypatch.setattr(memory, "_available_bytes", lambda device: _room_for(1000 * per_result))
    monkeypatch.setattr(memory, "disk_free",
                        lambda where: asked.append(where) or _room_for(2000 * per_result))
    memory.check_fits(learner, problem, stacked, pp, 10, 1000, track_stats=False)
    # beyond the host: played in blocks, their rows written to the disk (oslr.spill)
    memory.check_fits(learner, problem, stacked, pp, 10, 2000, track_stats=False,
                      results_dir=tmp_path / "new")
    assert asked[-1] == tmp_path / "new"
    with pytest.raises(ValueError, match=r"^the per-run results of this study \(2,001 runs x "
                                         r"grid points\) need about 0\.0 GiB, more than the "
                                         r"0\.0 GiB it may use on the host and the 0\.0 GiB it "
                                         r"may use on the disk of "):
        memory.check_fits(learner, problem, stacked, pp, 10, 2001, track_stats=False)


def test_disk_free__of_the_nearest_folder_that_exists(tmp_path):
    import shutil

    want = shutil.disk_usage(tmp_path).free
    got = memory.disk_free(tmp_path / "not" / "yet")
    assert abs(got - want) < 2**30  # the same disk (others may write meanwhile)
    assert memory.disk_free(None) > 0


def test_release_freed__hands_freed_memory_back_on_glibc():
    import platform

    assert memory.release_freed() is (platform.libc_ver()[0] == "glibc")


def test_fit_block__all_runs_when_they_fit_else_the_largest_multiple_of_the_devices():
    asked = []

    def need(size):  # 100 bytes a run and 1,000 fixed, on each of 4 devices
        asked.append(size)
        return 1000 + 100 * size // 4

    assert memory.fit_block(need, 10, 4, 10**6, 10**6) == 12  # rounded up to the devices
    assert memory.fit_block(need, 10, 4, 10**6, None) == 12 and asked == [12]  # none measured
    asked.clear()
    size = memory.fit_block(need, 10**6, 4, 10**6, 2 * 10**6)
    assert size % 4 == 0 and need(size) <= 2 * 10**6 and need(size + 4) > 2 * 10**6 * 0.94
    assert len(asked) <= 5  # scaled, not searched run by run
    assert memory.fit_block(need, 10**6, 4, 1, 1100) == 4  # guessed from 1 run a device
    assert memory.fit_block(lambda size: None, 10**6, 4, 8, 1) == 32  # unknown: the guess
    with pytest.raises(ValueError, match=r"^one run on each device needs about 0\.0 MiB, more "
                                         r"than the 0\.0 MiB this study may use"):
        memory.fit_block(need, 10**6, 4, 1, 1099)


def test_budget__a_share_of_what_is_available_and_at_most_the_cap():
    dev = _device(1000)
    assert memory.budget(dev) == int(memory.BUDGET_SHARE * 1000)
    assert memory.budget(dev, 100) == 100 and memory.budget(dev, 10**6) == 800
    used = types.SimpleNamespace(memory_stats=lambda: {"bytes_limit": 1000, "bytes_in_use": 500})
    assert memory.budget(used) == int(memory.BUDGET_SHARE * 500)  # what is left of the limit


def test_program_bytes__arguments_outputs_and_temporaries_less_the_aliased():
    m = types.SimpleNamespace(argument_size_in_bytes=10, output_size_in_bytes=20,
                              temp_size_in_bytes=30, alias_size_in_bytes=5)
    assert memory.program_bytes(types.SimpleNamespace(memory_analysis=lambda: m)) == 55
    assert memory.program_bytes(types.SimpleNamespace(memory_analysis=lambda: None)) is None
    f = jax.jit(lambda x: x * 2).lower(jax.ShapeDtypeStruct((1000,), np.float32)).compile()
    assert memory.program_bytes(f) >= 8000  # its argument and its output, on this backend


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
    device = _device(_room_for(plain))  # room for one run without the statistics
    assert memory.check_fits(learner, problem, stacked, pp, 10, 1, track_stats=False,
                             devices=[device]) == (2, False)
    with pytest.raises(ValueError, match="one run of this study needs about"):
        memory.check_fits(learner, problem, stacked, pp, 10, 1, track_stats=True,
                          devices=[device])


def test_refusals__name_their_sizes_in_binary_units(monkeypatch):
    # one run too large (a9a's d x d comparator statistics), all runs' results too large for
    # the host, and a block that cannot shrink below one run a device: sizes in MiB / GiB
    problem, pp = oslr.make_problem("a9a")
    learner, params = oslr.make("ogd-full", d=problem.d)
    stacked = oslr.stack_params([params])
    monkeypatch.setattr(memory, "_available_bytes", lambda device: 10**6)
    with pytest.raises(ValueError, match=r"^one run of this study needs about 8\.1 MiB on each "
                                         r"device \(its state, 4,272,564 bytes, twice\), more "
                                         r"than the 0\.8 MiB it may use on cpu;"):
        memory.check_fits(learner, problem, stacked, pp, 100, 2, comparator_k=3)
    monkeypatch.setattr(memory, "_available_bytes", lambda device: 3 * 2**30)
    n_ckpt = len(metrics.checkpoint_rounds(100))
    per_result = memory.result_bytes(learner, problem, stacked, pp, n_ckpt, False)
    runs = int(2.4 * 2**30 // per_result) * 2
    monkeypatch.setattr(memory, "disk_free", lambda where: 2 * 2**30)
    with pytest.raises(ValueError, match=r"need about 4\.8 GiB, more than the 2\.4 GiB it may use "
                                         r"on the host and the 1\.6 GiB it may use on the disk"):
        memory.check_fits(learner, problem, stacked, pp, 100, runs)
    with pytest.raises(ValueError, match=r"^one run on each device needs about 5\.0 MiB, more "
                                         r"than the 3\.0 MiB this study may use;"):
        memory.fit_block(lambda size: 5 * 2**20 * size // 4, 100, 4, 1, 3 * 2**20)


def test_check_fits__results_are_measured_against_the_hosts_memory(monkeypatch):
    # the per-run results are gathered on the host: its memory, not the device's, bounds them
    asked = []
    real_devices = jax.devices

    def devices(backend=None):
        asked.append(backend)
        return real_devices(backend)

    monkeypatch.setattr(memory.jax, "devices", devices)
    learner, params = oslr.make("ogd-full", d=4)
    problem, pp = oslr.make_problem("sparse-linear", d=4, k=2)
    memory.check_fits(learner, problem, oslr.stack_params([params]), pp, 10, 2,
                      devices=real_devices())
    assert asked == ["cpu"]


def test_meminfo_and_cgroup__kilobytes_and_a_cgroup_past_its_limit(monkeypatch):
    import io

    monkeypatch.setattr(memory, "open", lambda path, *a, **k: io.StringIO(
        "MemTotal: 4000 kB\nMemAvailable:    1000 kB\n"), raising=False)
    assert memory._meminfo_available() == 1000 * 1024
    files = {"memory.max": "300\n", "memory.current": "1000\n"}
    monkeypatch.setattr(memory.Path, "read_text", lambda self, *a, **k: files[self.name])
    assert memory._cgroup_available() == 0  # over its limit: nothing left
