"""Studies played in blocks of runs (`oslr.simulate`'s `max_memory`, `oslr.memory.fit_block`):
bit-identical to one batch of all the runs, blocks sized from the compiled programs, progress
over the whole study, and a study killed in any block resuming at its block and chunk."""

import os

import jax
import numpy as np
import pytest

import oslr
from oslr import atomic, checkpoint, memory, metrics
from tests.helpers import fake_os, run_on_host_devices, x64

# LinUCB at tiny size: 2 grid points x 11 runs = 22 elements, chunks of 10 rounds
_STUDY = {"horizon": 30, "n_runs": 11, "chunk_size": 10}


def _linucb():
    problem, pp = oslr.make_problem("linear-bandit", d=4, n_arms=3)
    learner, params = oslr.make("linucb", d=4, n_arms=3)
    labels, stacked = oslr.grid_params(params, {"kappa": [0.5, 1.0]})
    return learner, stacked, labels, problem, pp


def _run(**kw):
    learner, stacked, labels, problem, pp = _linucb()
    return oslr.simulate(learner, problem, stacked, pp, grid=labels, **{**_STUDY, **kw})


def _need() -> callable:
    """The study's own `need(size)`: bytes on each device of its compiled init and chunk at a
    block of `size` runs (as `simulate` hands it to `memory.fit_block`)."""
    got = []
    real = memory.fit_block

    def spy(need, *args):
        got.append(need)
        return real(need, *args)

    memory.fit_block = spy
    try:
        _run(max_memory=10**12)
    finally:
        memory.fit_block = real
    return got[0]


@pytest.fixture(scope="module")
def need():
    return _need()


def _assert_same(a, b):
    assert a.final.keys() == b.final.keys() and a.curves.keys() == b.curves.keys()
    for key in a.final:
        np.testing.assert_array_equal(a.final[key], b.final[key], err_msg=key)
    for key in a.curves:
        np.testing.assert_array_equal(a.curves[key], b.curves[key], err_msg=key)


@pytest.fixture(scope="module")
def whole():
    return _run()


def test_blocks__a_study_four_times_its_cap_equals_one_batch_bit_for_bit(whole, need):
    blocked = _run(max_memory=need(22) // 4)
    assert "block_runs" not in whole.info
    size = blocked.info["block_runs"]
    assert need(size) <= need(22) // 4 < need(size + 1)  # the largest block that fits
    assert -(-22 // size) >= 4  # at least four blocks, the last one padded
    _assert_same(whole, blocked)


@pytest.mark.slow  # keeps the default run under 5 min (CI runs it with -m slow)
def test_blocks__sized_by_the_compiled_programs_memory_analysis(monkeypatch, need):
    # programs that need three times what they do now get blocks a third the size
    cap = need(22) // 2
    size = _run(max_memory=cap).info["block_runs"]
    real = memory.program_bytes
    monkeypatch.setattr(memory, "program_bytes", lambda c: 3 * real(c))
    smaller = _run(max_memory=cap).info["block_runs"]
    assert smaller <= size // 2 and smaller >= size // 4


@pytest.mark.slow  # keeps the default run under 5 min (CI runs it with -m slow)
def test_blocks__float64_streams_equal_in_blocks(whole, need):
    with x64():
        one = _run()
        blocked = _run(max_memory=need(22) // 4)
    assert blocked.info["block_runs"] < 22
    _assert_same(one, blocked)
    assert one.final["pseudo_regret"].dtype == np.float64
    np.testing.assert_allclose(one.final["pseudo_regret"], whole.final["pseudo_regret"],
                               rtol=1e-3, atol=1e-3)  # the float32 run's stream


def test_blocks__progress_adds_up_to_the_horizon_over_every_block(need):
    done = []
    res = _run(max_memory=need(22) // 4, progress=done.append)
    n_blocks = -(-22 // res.info["block_runs"])
    assert len(done) == n_blocks * 3  # three chunks a block
    assert sum(done) == pytest.approx(30)


class _Killed(BaseException):
    """A kill: nothing of the study runs after it."""


def _killed_at_save(monkeypatch, nth: int, before: bool):
    """Kill the study at its nth checkpoint file (a chunk or a finished block): right before
    it is renamed into place, or right after."""
    seen = []

    def replace(a, b):
        import os
        seen.append(b)
        if before and len(seen) == nth:
            raise _Killed(str(b))
        os.replace(a, b)
        if len(seen) == nth:
            raise _Killed(str(b))

    monkeypatch.setattr(atomic, "os", fake_os(replace=replace))


#: (the nth file, killed before its rename) -> the first chunk saved after the resume, and the
#: chunks saved before the kill that are not played again. The files: block 0's rounds 10, 20,
#: 30, its finished metrics, block 1's rounds 10, ...
_BLOCK_KILLS = {
    (2, False): (("block-000000", 30), 2),  # mid-block 0
    (4, True): (("block-000001", 10), 3),  # block 0 played, its metrics not yet in place
    (4, False): (("block-000001", 10), 3),  # block 0 done
    (5, False): (("block-000001", 20), 4),  # mid-block 1
}


@pytest.mark.parametrize("nth, before", list(_BLOCK_KILLS))
def test_blocks__killed_in_any_block_resumes_bit_identical_at_its_block_and_chunk(
        tmp_path, monkeypatch, whole, need, nth, before):
    cap = need(22) // 4
    with pytest.raises(_Killed):
        _killed_at_save(monkeypatch, nth, before)
        _run(max_memory=cap, checkpoint_path=tmp_path)
    monkeypatch.undo()
    (folder,) = tmp_path.iterdir()
    size = int(folder.name.removeprefix("blocks-of-"))
    played = []
    real = checkpoint.save
    monkeypatch.setattr(checkpoint, "save", lambda path, carry, t, fp: (
        played.append((path.name, t)), real(path, carry, t, fp)))
    resumed = _run(max_memory=cap, checkpoint_path=tmp_path)
    _assert_same(whole, resumed)
    assert resumed.info["block_runs"] == size
    first, skipped = _BLOCK_KILLS[nth, before]
    assert played[0] == first  # nothing saved before the kill is played again
    assert len(played) == 3 * -(-22 // size) - skipped


def test_blocks__a_damaged_finished_block_is_played_again_with_a_warning(tmp_path, whole,
                                                                        need):
    cap = need(22) // 4
    _run(max_memory=cap, checkpoint_path=tmp_path)
    (folder,) = tmp_path.iterdir()
    files = sorted(folder.glob("block-*.npz"))
    assert len(files) >= 4 and not [p for p in folder.iterdir() if p.is_dir()]  # chunks gone
    files[1].write_bytes(files[1].read_bytes()[:100])
    with pytest.warns(RuntimeWarning, match=r"finished block .*block-000001\.npz is damaged"
                      ) as warned:
        again = _run(max_memory=cap, checkpoint_path=tmp_path)
    _assert_same(whole, again)
    if "MUTANT_UNDER_TEST" not in os.environ:  # mutmut's trampolines add frames of their own
        assert {w.filename for w in warned} == {__file__}  # the warning points at the caller


def test_blocks__a_finished_block_of_another_study_is_refused(tmp_path, need):
    cap = need(22) // 4
    _run(max_memory=cap, checkpoint_path=tmp_path)
    with pytest.raises(ValueError, match="belongs to a different study"):
        _run(max_memory=cap, checkpoint_path=tmp_path, seed=1)


def test_blocks__the_block_size_counts_the_checkpoints_copy(tmp_path, need):
    checkpointed = []
    real = memory.fit_block

    def spy(need_, *args):
        checkpointed.append(need_(8))
        return real(need_, *args)

    memory.fit_block, saved = spy, memory.fit_block
    try:
        _run(max_memory=10**12, checkpoint_path=tmp_path)
    finally:
        memory.fit_block = saved
    learner, stacked, _, problem, pp = _linucb()
    n_ckpt = len(metrics.checkpoint_rounds(_STUDY["horizon"]))
    shapes, _ = memory.carry_shapes(learner, problem, stacked, pp, n_ckpt, False)
    carry = sum(a.size * a.dtype.itemsize for a in jax.tree.leaves(shapes))  # one run's
    assert checkpointed == [need(8) + 8 * carry]


_DEVICES = """
import json, sys
import numpy as np
import oslr
from oslr import memory
problem, pp = oslr.make_problem("linear-bandit", d=4, n_arms=3)
learner, params = oslr.make("linucb", d=4, n_arms=3)
labels, stacked = oslr.grid_params(params, {"kappa": [0.5, 1.0]})
per_run = memory.run_bytes(learner, problem, stacked, pp, 50, False)
res = oslr.simulate(learner, problem, stacked, pp, grid=labels, horizon=30, n_runs=11,
                    chunk_size=10, max_memory=2 * per_run * 22 // 8)  # blocks of fewer than 22
print(json.dumps({"block": res.info["block_runs"], "devices": len(res.info["devices"]),
                  "regret": res.final["pseudo_regret"].tolist()}))
"""


def test_blocks__on_several_devices_each_block_is_a_multiple_of_them(whole):
    got = run_on_host_devices(_DEVICES, 2)
    assert got["devices"] == 2 and got["block"] % 2 == 0 and got["block"] < 22
    np.testing.assert_array_equal(np.asarray(got["regret"]), whole.final["pseudo_regret"])


def test_blocks__a_finished_block_under_another_blocks_name_is_played_again(tmp_path, whole,
                                                                             need):
    cap = need(22) // 4
    _run(max_memory=cap, checkpoint_path=tmp_path)
    (folder,) = tmp_path.iterdir()
    (folder / "block-000001.npz").write_bytes((folder / "block-000000.npz").read_bytes())
    with pytest.warns(RuntimeWarning, match=r"^finished block .*block-000001\.npz holds block "
                      r"0's results, not block 1's; playing it again\.$") as warned:
        again = _run(max_memory=cap, checkpoint_path=tmp_path)
    assert len(warned) == 1
    _assert_same(whole, again)
    (folder / "block-000002.npz").write_bytes((folder / "block-000003.npz").read_bytes())
    with pytest.warns(RuntimeWarning, match=r"holds block 3's results, not block 2's"):
        _assert_same(whole, _run(max_memory=cap, checkpoint_path=tmp_path))


def test_blocks__each_run_plays_its_own_stream(whole):
    # run r of the study equals run r played alone (run_offset=r): no block shifts the run ids
    for r in (0, 5, 10):
        alone = _run(n_runs=1, run_offset=r)
        np.testing.assert_array_equal(alone.final["pseudo_regret"][:, 0],
                                      whole.final["pseudo_regret"][:, r])


def test_blocks__a_resume_under_another_cap_keeps_the_block_size_it_began_with(
        tmp_path, monkeypatch, whole, need):
    with pytest.raises(_Killed):
        _killed_at_save(monkeypatch, 2, False)
        _run(max_memory=need(22) // 4, checkpoint_path=tmp_path)
    monkeypatch.undo()
    (folder,) = tmp_path.iterdir()
    resumed = _run(max_memory=need(22) // 2, checkpoint_path=tmp_path)  # room for more now
    assert resumed.info["block_runs"] == int(folder.name.removeprefix("blocks-of-"))
    assert _run(max_memory=need(22) // 2).info["block_runs"] > resumed.info["block_runs"]
    _assert_same(whole, resumed)


def test_blocks__a_blocks_chunks_under_another_blocks_name_are_refused(tmp_path, monkeypatch,
                                                                       need):
    cap = need(22) // 4
    with pytest.raises(_Killed):
        _killed_at_save(monkeypatch, 2, False)  # block 0's rounds 10 and 20 saved
        _run(max_memory=cap, checkpoint_path=tmp_path)
    monkeypatch.undo()
    (folder,) = tmp_path.iterdir()
    (folder / "block-000000").rename(folder / "block-000001")
    with pytest.raises(ValueError, match="belongs to a different study"):
        _run(max_memory=cap, checkpoint_path=tmp_path)


def test_blocks__round_indices_go_to_the_chunk_as_int32_under_x64_too(monkeypatch, need):
    # the block's size was planned (and its chunk compiled) with an int32 start: another dtype
    # would compile the chunk again
    from oslr import blocks

    dtypes = []
    real = blocks.on_device
    monkeypatch.setattr(blocks, "on_device", lambda x, dtype=None: (dtypes.append(dtype),
                                                                     real(x, dtype))[1])
    with x64():
        _run(max_memory=need(22) // 4)
    assert dtypes and set(dtypes) == {np.int32}


def test_blocks__a_blocked_studys_rows_are_memory_maps_one_batchs_in_memory(whole, need):
    blocked = _run(max_memory=need(22) // 4)
    for res, mapped in ((blocked, True), (whole, False)):
        for key in ("pseudo_regret", "reward"):
            for arr in (res.final[key], res.curves[key]):
                assert isinstance(arr.base if arr.base is not None else arr,
                                  np.memmap) == mapped, key
    assert blocked.regret_curves()["pseudo_regret"].shape == (2, 11, len(blocked.ckpts))


def test_blocks__rows_on_the_checkpoints_disk_and_freed_memory_handed_back(tmp_path, need,
                                                                            monkeypatch):
    from oslr import spill

    asked, made, freed = [], [], []
    monkeypatch.setattr(memory, "disk_free", lambda where: asked.append(where) or 10**12)
    real = spill.Spill
    monkeypatch.setattr(spill, "Spill", lambda n, where: made.append((n, where)) or real(n, where))
    monkeypatch.setattr(memory, "release_freed", lambda: freed.append(1))
    blocked = _run(max_memory=need(22) // 4, checkpoint_path=tmp_path / "ck")
    n_blocks = -(-22 // blocked.info["block_runs"])
    assert asked == [tmp_path / "ck"]  # the check looks at the disk the rows go to
    assert made == [(22, tmp_path / "ck")]
    assert len(freed) == n_blocks  # after every block
    made.clear()
    _run(max_memory=10**12)  # one block: nothing written, nothing to hand back
    assert made == [] and len(freed) == n_blocks


def test_blocks__rows_cut_on_disk_under_a_running_study_stop_it_in_one_line(need, monkeypatch):
    from oslr import spill

    real = spill.Spill.write

    def write_then_cut(self, start, tree):
        real(self, start, tree)
        if start > 0:  # a later block: the earlier blocks' rows cut to 0 bytes
            for f in self._files:
                f.truncate(0)

    monkeypatch.setattr(spill.Spill, "write", write_then_cut)
    with pytest.raises(spill.SpillError, match=r"^the per-run results of runs 0-\d+, kept in a "
                       r"temporary file in .* changed on disk before they were read back"):
        _run(max_memory=need(22) // 4)


def test_blocks__another_studys_finished_block_under_another_index_is_refused(tmp_path, need):
    cap = need(22) // 4
    _run(max_memory=cap, checkpoint_path=tmp_path / "mine")
    _run(max_memory=cap, checkpoint_path=tmp_path / "theirs", seed=1)
    (mine,), (theirs,) = (tmp_path / "mine").iterdir(), (tmp_path / "theirs").iterdir()
    (mine / "block-000001.npz").write_bytes((theirs / "block-000000.npz").read_bytes())
    with pytest.raises(ValueError, match=r"block-000001\.npz belongs to a different study"):
        _run(max_memory=cap, checkpoint_path=tmp_path / "mine")
