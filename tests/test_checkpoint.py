"""Checkpointed studies (`oslr.sim`, `checkpoint_path=`): a study killed at any point of a
checkpoint write and called again ends bit-identical to an uninterrupted one, or the resume is
refused with one line; a checkpoint of other settings is refused."""

import dataclasses
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import oslr
from oslr import atomic, blocks, checkpoint
from tests.helpers import (assert_same_across_processes, fake_os, run_on_host_devices,
                           study_setup)

# 250 rounds in chunks of 50: the kill comes in the second save (round 100), when the first
# (round 50) is on disk
_STUDY = {"horizon": 250, "n_runs": 3, "chunk_size": 50}


class _Killed(BaseException):
    """A kill: no code of the study runs after it (not an Exception: no handler catches it)."""


_setup = study_setup  # test_sim.py's too: one program per study shape


def _assert_same(a, b):
    assert a.curves.keys() == b.curves.keys()
    for key in a.curves:
        np.testing.assert_array_equal(a.curves[key], b.curves[key], err_msg=key)
        np.testing.assert_array_equal(a.final[key], b.final[key], err_msg=key)


def _saved(folder):
    return sorted(p.name for p in folder.iterdir())


@pytest.fixture(scope="module")
def reference():
    learner, params, problem, pp = _setup()
    return oslr.simulate(learner, problem, params, pp, **_STUDY)


def _fake_os(kill):
    """`os` for `oslr.atomic` in which `kill(name, args)` runs before (and, for "after-" names,
    after) fsync and replace."""

    def fsync(fd):
        what = "dir" if os.path.isdir(os.readlink(f"/proc/self/fd/{fd}")) else "file"
        kill(f"fsync-{what}", fd)
        os.fsync(fd)
        kill(f"after-fsync-{what}", fd)

    def replace(a, b):
        kill("replace", a)
        os.replace(a, b)
        kill("after-replace", b)

    return fake_os(fsync=fsync, replace=replace)


def _dies_at(point, nth=2):
    """A `kill` for `_fake_os` that kills the study at the nth time it reaches `point` (of the
    nth save: each point is reached once a save); at "fsync-file" it first cuts the temporary
    file to half its size (the power went while the data was being written)."""
    seen = []

    def kill(name, arg):
        if name != point:
            return
        seen.append(1)
        if len(seen) == nth:
            if name == "fsync-file":
                os.ftruncate(arg, os.fstat(arg).st_size // 2)
            raise _Killed(name)

    return kill


#: kill point -> the checkpoint files left (the temporary and the rounds saved)
_KILLS = {
    # the new file half written: only its temporary is incomplete
    "fsync-file": [f".checkpoint-000000000100.npz.{os.getpid()}.tmp",
                   "checkpoint-000000000050.npz"],
    # complete on disk, not yet renamed
    "replace": [f".checkpoint-000000000100.npz.{os.getpid()}.tmp",
                "checkpoint-000000000050.npz"],
    # renamed, the folder not yet flushed, round 50 not yet removed
    "after-replace": ["checkpoint-000000000050.npz", "checkpoint-000000000100.npz"],
    # flushed, round 50 not yet removed
    "after-fsync-dir": ["checkpoint-000000000050.npz", "checkpoint-000000000100.npz"],
    # all done: killed before the third chunk (the last two rounds are kept)
    "between-chunks": ["checkpoint-000000000050.npz", "checkpoint-000000000100.npz"],
}


@pytest.mark.parametrize("point", list(_KILLS))
def test_checkpoint__killed_at_every_step_of_a_write_resumes_bit_identical(
        tmp_path, monkeypatch, reference, point):
    learner, params, problem, pp = _setup()
    folder = tmp_path / "ck"
    monkeypatch.setattr(atomic, "os", _fake_os(_dies_at(point)))
    real_save, saves = checkpoint.save, []

    def save(*args):
        real_save(*args)
        saves.append(1)
        if point == "between-chunks" and len(saves) == 2:
            raise _Killed(point)

    monkeypatch.setattr(checkpoint, "save", save)
    with pytest.raises(_Killed):
        oslr.simulate(learner, problem, params, pp, **_STUDY, checkpoint_path=folder)
    assert _saved(folder) == _KILLS[point]
    monkeypatch.undo()
    # resumed with another chunk size where the kill left a whole checkpoint of round 100
    chunk = 30 if point == "between-chunks" else 50
    resumed = oslr.simulate(learner, problem, params, pp, **{**_STUDY, "chunk_size": chunk},
                            checkpoint_path=folder)
    _assert_same(reference, resumed)
    kept = [p for p in _saved(folder) if not p.startswith(".")]
    assert len(kept) == 2 and kept[-1] == "checkpoint-000000000250.npz"


def test_checkpoint__resume_uses_the_last_whole_round(tmp_path, monkeypatch, reference):
    # killed right after round 100 was renamed into place, with round 50 still there: the resume
    # starts at 100 (one from 50 would also end right; this pins that no chunk is played twice)
    learner, params, problem, pp = _setup()
    folder = tmp_path / "ck"
    monkeypatch.setattr(atomic, "os", _fake_os(_dies_at("after-replace")))
    with pytest.raises(_Killed):
        oslr.simulate(learner, problem, params, pp, **_STUDY, checkpoint_path=folder)
    monkeypatch.undo()
    assert _saved(folder) == ["checkpoint-000000000050.npz", "checkpoint-000000000100.npz"]
    played = []
    real_program = blocks.chunk_program

    def counting(*args, **kwargs):
        chunk_c = real_program(*args, **kwargs)
        return lambda carry, start, *rest: (played.append(int(start)),
                                            chunk_c(carry, start, *rest))[1]

    monkeypatch.setattr(blocks, "chunk_program", counting)
    resumed = oslr.simulate(learner, problem, params, pp, **_STUDY, checkpoint_path=folder)
    assert played == [100, 150, 200]
    _assert_same(reference, resumed)


def test_checkpoint__damaged_file_is_refused_in_one_line(tmp_path):
    learner, params, problem, pp = _setup()
    folder = tmp_path / "ck"
    oslr.simulate(learner, problem, params, pp, horizon=20, n_runs=2, checkpoint_path=folder)
    (file,) = folder.iterdir()
    data = file.read_bytes()
    file.write_bytes(data[:len(data) // 2])  # e.g. a power loss on a file system without fsync
    with pytest.raises(ValueError, match=r"checkpoint .*checkpoint-000000000020\.npz is damaged"
                                         r" .*delete .*ck to start the study afresh\.$"):
        oslr.simulate(learner, problem, params, pp, horizon=20, n_runs=2, checkpoint_path=folder)


def _one_saved_round(tmp_path):
    """(learner, params, problem, pp), the checkpoint folder, its one file and the file's
    blocks (meta included) of a 20-round, 2-run study."""
    learner, params, problem, pp = _setup()
    folder = tmp_path / "ck"
    oslr.simulate(learner, problem, params, pp, horizon=20, n_runs=2, checkpoint_path=folder)
    (file,) = folder.iterdir()
    with np.load(file) as z:
        blocks = {name: z[name] for name in z.files}
    return (learner, params, problem, pp), folder, file, blocks


def _resume(args, folder):
    learner, params, problem, pp = args
    return oslr.simulate(learner, problem, params, pp, horizon=20, n_runs=2,
                         checkpoint_path=folder)


def test_checkpoint__blocks_missing_for_this_process_are_refused_naming_the_runs(tmp_path):
    # e.g. a folder saved under jax.distributed by a process that held other runs: whole and
    # with a valid digest, but without this process's rows of some leaf
    args, folder, file, blocks = _one_saved_round(tmp_path)
    meta = json.loads(blocks.pop("meta").tobytes())
    del blocks["0/0-2"]  # the first leaf's only block
    meta["sha256"] = checkpoint.blocks_digest(blocks)
    blocks["meta"] = np.frombuffer(json.dumps(meta).encode(), np.uint8)
    np.savez(file, **blocks)
    with pytest.raises(ValueError, match=r"checkpoint in .*ck lacks runs 0-2 of this process"):
        _resume(args, folder)


def test_checkpoint__older_layout_is_refused(tmp_path):
    # format 3 kept the carry and the round in two files (carry.npz, meta.json): the torn pair
    # resumed silently wrong, so such a folder is never read
    learner, params, problem, pp = _setup()
    (tmp_path / "meta.json").write_text(json.dumps({"t_done": 10, "format": 3}))
    with pytest.raises(ValueError, match="older oslr"):
        oslr.simulate(learner, problem, params, pp, horizon=20, n_runs=2,
                      checkpoint_path=tmp_path)
    (tmp_path / "meta.json").unlink()  # either file of the pair alone is refused too
    (tmp_path / "carry.npz").write_bytes(b"")
    with pytest.raises(ValueError, match="older oslr"):
        oslr.simulate(learner, problem, params, pp, horizon=20, n_runs=2,
                      checkpoint_path=tmp_path)


def test_checkpoint__format_change_is_refused(tmp_path, monkeypatch):
    learner, params, problem, pp = _setup()
    monkeypatch.setattr(checkpoint, "FORMAT", 3)
    oslr.simulate(learner, problem, params, pp, horizon=20, n_runs=2, checkpoint_path=tmp_path)
    monkeypatch.undo()
    with pytest.raises(ValueError, match=r"older oslr \(format 3\)"):
        oslr.simulate(learner, problem, params, pp, horizon=20, n_runs=2,
                      checkpoint_path=tmp_path)


#: settings that are `simulate` arguments -> the changed value
_SIMULATE_CHANGES = {"horizon": {"horizon": 60}, "runs": {"n_runs": 3}, "seed": {"seed": 1},
                     "run_offset": {"run_offset": 2}, "unroll": {"unroll": 2},
                     "n_checkpoints": {"n_checkpoints": 10}, "track_stats": {"track_stats": False}}


def _changed(setting):
    """(learner, params, problem, pp, simulate kwargs) of the base study with one change."""
    learner, params, problem, pp = _setup()
    kw = {"horizon": 40, "n_runs": 2, "chunk_size": 20, **_SIMULATE_CHANGES.get(setting, {})}
    if setting == "learner":
        learner, params, _, _ = _setup("ogd-full")
    elif setting == "learner-name":
        learner = learner._replace(name="another")
    elif setting == "static-option":
        learner, params, _, _ = _setup(max_k=4)
    elif setting == "params":
        params = dataclasses.replace(params, eta=params.eta * 2)
    elif setting == "problem-params":
        pp = dataclasses.replace(pp, sigma=pp.sigma * 2)
    elif setting == "problem":
        problem, pp = oslr.make_problem("agnostic", d=8, k=2)
    elif setting == "problem-static-option":  # same name, params and state; another design
        problem, pp = oslr.make_problem("sparse-linear", d=8, k=2, design="rademacher")
    elif setting == "problem-name":  # the same functions under another name
        problem = problem._replace(name="another")
    elif setting == "learner-info":  # a static setting recorded in info (e.g. FTPSL's b)
        learner = learner._replace(info={**(learner.info or {}), "b": 3})
    elif setting == "carry-layout":  # the same name and settings, another state (edited code)
        init = learner.init
        learner = learner._replace(init=lambda key, p: jax.tree.map(
            lambda x: jnp.stack([x, x]), init(key, p)))
    return learner, params, problem, pp, kw


@pytest.fixture(scope="module")
def base_study(tmp_path_factory):
    """The checkpoints of the base study of `_changed` (simulated once, copied per test)."""
    folder = tmp_path_factory.mktemp("base-study")
    learner, params, problem, pp, kw = _changed(None)
    oslr.simulate(learner, problem, params, pp, **kw, checkpoint_path=folder)
    return folder


@pytest.mark.parametrize("setting", [
    "horizon", "runs", "seed", "run_offset", "unroll", "n_checkpoints", "track_stats",
    "learner", "learner-name", "learner-info", "static-option", "params", "problem-params",
    "problem", "problem-static-option", "problem-name", "carry-layout"])
def test_checkpoint__of_other_settings_is_refused(base_study, tmp_path, setting):
    shutil.copytree(base_study, tmp_path, dirs_exist_ok=True)
    learner, params, problem, pp, kw = _changed(setting)
    with pytest.raises(ValueError, match="different study"):
        oslr.simulate(learner, problem, params, pp, **kw, checkpoint_path=tmp_path)


def test_checkpoint__chunk_size_change_is_accepted(tmp_path):
    # results do not depend on the chunk size, so a resume may use another one
    learner, params, problem, pp, kw = _changed(None)
    a = oslr.simulate(learner, problem, params, pp, **kw, checkpoint_path=tmp_path)
    b = oslr.simulate(learner, problem, params, pp, **{**kw, "chunk_size": 10},
                      checkpoint_path=tmp_path)
    _assert_same(a, b)


# ------------------------------------------------------------------------- real process kills

# the case: sparse-linear d = 12, ogd-random-subset, 32 runs, chunks of 300
_WORKER = """
import os, sys
import jax
import jax.numpy as jnp
import numpy as np
import oslr
from oslr import atomic
folder, horizon, chunk, die_after_rename = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), \\
    sys.argv[4] == "1"
if die_after_rename:  # the second checkpoint renamed into place, then the process is gone
    real, n = os.replace, []
    def replace(a, b):
        real(a, b)
        n.append(1)
        if len(n) == 2:
            os._exit(137)
    atomic.os = type("os", (), {**{k: getattr(os, k) for k in dir(os) if not k.startswith("_")},
                               "replace": staticmethod(replace)})
problem, pp = oslr.make_problem("sparse-linear", d=12, k=3)
learner, params = oslr.make("ogd-random-subset", d=12)
res = oslr.simulate(learner, problem, params, pp, horizon=horizon, n_runs=32, chunk_size=chunk,
                    checkpoint_path=folder)
np.savez(os.path.join(folder, "..", "result.npz"), **res.final)
print("done")
"""


def _uninterrupted(horizon):
    problem, pp = oslr.make_problem("sparse-linear", d=12, k=3)
    learner, params = oslr.make("ogd-random-subset", d=12)
    return oslr.simulate(learner, problem, params, pp, horizon=horizon, n_runs=32,
                         chunk_size=horizon).final


def _worker(folder, horizon, chunk, die_after_rename=False, **kw):
    return subprocess.Popen([sys.executable, "-c", _WORKER, str(folder), str(horizon),
                             str(chunk), "1" if die_after_rename else "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


@pytest.mark.slow  # subprocesses (9 s); the in-process kill at every step stays in the default run
def test_checkpoint__process_killed_right_after_a_rename_resumes_bit_identical(tmp_path):
    horizon = 600
    p = _worker(tmp_path / "ck", horizon, 100, die_after_rename=True)
    _, err = p.communicate(timeout=240)
    assert p.returncode == 137, err[-2000:]
    assert _saved(tmp_path / "ck") == ["checkpoint-000000000100.npz",
                                       "checkpoint-000000000200.npz"]
    problem, pp = oslr.make_problem("sparse-linear", d=12, k=3)
    learner, params = oslr.make("ogd-random-subset", d=12)
    resumed = oslr.simulate(learner, problem, params, pp, horizon=horizon, n_runs=32,
                            chunk_size=100, checkpoint_path=tmp_path / "ck").final
    ref = _uninterrupted(horizon)
    for key in ref:  # bit for bit on a CPU (tests/helpers.py says what a GPU promises)
        assert_same_across_processes(resumed[key], ref[key], err_msg=key)


def _newest_round(folder) -> int:
    rounds = [int(p.stem.split("-")[1]) for p in folder.glob("checkpoint-*.npz")] if \
        folder.exists() else []
    return max(rounds, default=0)


@pytest.mark.slow
def test_checkpoint__sigkill_at_random_moments_resumes_bit_identical(tmp_path):
    # the study (chunks of 300) at T = 30,000 (about 100 chunks), killed with SIGKILL at
    # random moments until it finishes; every restart is the same call. Each kill comes a random
    # 0-400 ms after the restart has saved a chunk of its own (not at a wall-clock time, which a
    # loaded machine may reach before any chunk): every restart makes progress, and the kills
    # land before, during and after the next chunk's write.
    horizon, folder, rng = 30_000, tmp_path / "ck", random.Random(0)
    kills = 0
    for _ in range(60):
        start = _newest_round(folder)
        p = _worker(folder, horizon, 300)
        deadline = time.time() + 300
        while p.poll() is None and _newest_round(folder) <= start:
            assert time.time() < deadline, "no chunk saved in 300 s"
            time.sleep(0.01)
        if kills < 8:  # after 8 kills the study is left to finish
            time.sleep(rng.uniform(0.0, 0.4))
            if p.poll() is None:
                p.send_signal(signal.SIGKILL)
                p.communicate()
                kills += 1
                continue
        _, err = p.communicate()
        assert p.returncode == 0, err[-2000:]
        break
    else:
        pytest.fail("the study never finished")
    assert kills >= 3, "too few kills to test anything"
    got = np.load(tmp_path / "result.npz")
    ref = _uninterrupted(horizon)
    for key in ref:  # bit for bit on a CPU (tests/helpers.py says what a GPU promises)
        assert_same_across_processes(got[key], ref[key], err_msg=key)


def _two_rounds(tmp_path):
    learner, params, problem, pp = _setup()
    folder = tmp_path / "ck"
    run = dict(horizon=40, n_runs=2, chunk_size=10)
    whole = oslr.simulate(learner, problem, params, pp, **run)
    calls = []
    real = checkpoint.save

    def dying(*args):
        real(*args)
        calls.append(1)
        if len(calls) == 2:
            raise _Killed("after two chunks")
    import pytest as _pt
    mp = _pt.MonkeyPatch()
    mp.setattr(checkpoint, "save", dying)
    with pytest.raises(_Killed):
        oslr.simulate(learner, problem, params, pp, **run, checkpoint_path=folder)
    mp.undo()
    assert _saved(folder) == ["checkpoint-000000000010.npz", "checkpoint-000000000020.npz"]
    return (learner, problem, params, pp), run, folder, whole


@pytest.mark.parametrize("damage", ["truncated", "one_value_changed", "wrong_round"])
def test_checkpoint__newest_round_damaged_falls_back_to_the_older_one_with_a_warning(
        tmp_path, damage):
    args, run, folder, whole = _two_rounds(tmp_path)
    newest = folder / "checkpoint-000000000020.npz"
    if damage == "truncated":
        newest.write_bytes(newest.read_bytes()[:100])
    elif damage == "wrong_round":  # a copy of round 10 under round 20's name
        newest.write_bytes((folder / "checkpoint-000000000010.npz").read_bytes())
    else:  # re-saved with one value changed and the same metadata: only the SHA-256 sees it
        with np.load(newest) as z:
            arrays = {n: z[n].copy() for n in z.files}
        name = next(n for n in arrays if n != "meta" and arrays[n].dtype.kind == "f")
        arrays[name].flat[0] += 1.0
        with open(newest, "wb") as f:
            np.savez(f, **arrays)
    with pytest.warns(RuntimeWarning, match=r"checkpoint .*" + newest.name + r" is damaged \(.*"
                      r"\); resuming from round 10 instead"):
        resumed = oslr.simulate(*args, **run, checkpoint_path=folder)
    _assert_same(whole, resumed)


def test_checkpoint__every_round_damaged_is_refused_naming_each(tmp_path):
    args, run, folder, _ = _two_rounds(tmp_path)
    for f in folder.iterdir():
        f.write_bytes(b"junk")
    with pytest.raises(ValueError, match=r"checkpoint .*020\.npz is damaged \(ValueError: not an \.npz archive\), "
                                         r"and so is every older round \(.*010\.npz is damaged"):
        oslr.simulate(*args, **run, checkpoint_path=folder)


def test_checkpoint__another_runtime_resumes_with_a_one_line_warning(tmp_path, monkeypatch):
    args, run, folder, whole = _two_rounds(tmp_path)
    real = checkpoint.runtime()
    assert set(real) == {"jax", "jaxlib", "backend", "device_kind", "xla_flags", "x64"}
    assert real["xla_flags"] == os.environ.get("XLA_FLAGS", "")
    monkeypatch.setattr(checkpoint, "runtime", lambda: {**real, "xla_flags": "--other"})
    with pytest.warns(RuntimeWarning, match=r"saved by another runtime \(xla_flags .* -> "
                                            r"'--other'\): the resumed study equals an "
                                            r"uninterrupted one only to float rounding"):
        resumed = oslr.simulate(*args, **run, checkpoint_path=folder)
    _assert_same(whole, resumed)



_SHARDED_RESUME = """
import glob, json, sys, numpy as np, jax, oslr
problem, pp = oslr.make_problem("sparse-linear", d=6, k=2)
learner, params = oslr.make("ogd-random-subset", d=6, k=2)
study = dict(horizon=60, n_runs=8, chunk_size=20, progress=False)
folder, mode = sys.argv[1], sys.argv[2]

class Stop(Exception):
    pass

def stop_after_first_chunk(rounds):
    raise Stop

out = {"devices": len(jax.devices())}
if mode == "stop":
    try:
        oslr.simulate(learner, problem, params, pp,
                      **dict(study, progress=stop_after_first_chunk), checkpoint_path=folder)
    except Stop:
        pass
    files = sorted(glob.glob(folder + "/**/checkpoint-*.npz", recursive=True))
    with np.load(files[-1]) as z:
        out["rows"] = sorted({name.split("/")[1] for name in z.files if name != "meta"})
    out["saved"] = [f[-9:-4] for f in files]
else:
    whole = oslr.simulate(learner, problem, params, pp, **study)
    resumed = oslr.simulate(learner, problem, params, pp, **study, checkpoint_path=folder)
    out["same"] = all(np.array_equal(whole.final[k], resumed.final[k]) for k in whole.final)
print(json.dumps(out))
"""


@pytest.mark.slow  # keeps the default run under 5 min (CI runs it with -m slow)
def test_checkpoint__saved_on_two_devices_resumes_on_four_bit_identical(tmp_path):
    # each of two devices saves its runs' blocks (rows 0-4 and 4-8 of every leaf); four devices
    # resuming read two rows each from inside those blocks (rows 4-6 are rows 0-2 of the second)
    def run(n_devices, mode):
        return run_on_host_devices(_SHARDED_RESUME, n_devices, str(tmp_path / "ck"), mode)

    assert run(2, "stop") == {"devices": 2, "rows": ["0-4", "4-8"], "saved": ["00020"]}
    assert run(4, "resume") == {"devices": 4, "same": True}
    # in this process too (so that the mutation tool maps this test to the loader): a folder
    # without a checkpoint resumes nothing
    assert checkpoint.load(tmp_path / "none", {}, "fingerprint", None) is None


def test_blocks_digest__names_shapes_and_dtypes_are_hashed_not_only_the_bytes():
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    digest = checkpoint.blocks_digest({"0/0-4": x})
    assert digest == checkpoint.blocks_digest({"0/0-4": x.copy()})
    for other in ({"1/0-4": x}, {"0/0-4": x.reshape(3, 4)}, {"0/0-4": x.view(np.int32)},
                  {"0/0-4": x.reshape(12)}):
        assert checkpoint.blocks_digest(other) != digest


def test_checkpoint__a_block_saved_under_another_shape_is_damaged(tmp_path):
    # the same bytes re-saved reshaped (or viewed as another dtype): the digest refuses it
    args, folder, file, blocks = _one_saved_round(tmp_path)
    name = next(n for n in blocks if n != "meta" and blocks[n].ndim == 2)
    blocks[name] = blocks[name].reshape(blocks[name].shape[::-1])
    np.savez(file, **blocks)
    with pytest.raises(ValueError, match=r"is damaged \(its arrays do not match their "
                                         r"SHA-256\)"):
        _resume(args, folder)


@pytest.mark.parametrize("key", ["sha256", "runtime", "sha256, runtime"])
def test_checkpoint__one_without_its_sha256_or_runtime_is_an_older_oslrs(tmp_path, key):
    # saved before the digest and the runtime were recorded (the same format number): not
    # resumed silently under another runtime
    args, folder, file, blocks = _one_saved_round(tmp_path)
    meta = json.loads(blocks["meta"].tobytes())
    for k in key.split(", "):
        del meta[k]
    blocks["meta"] = np.frombuffer(json.dumps(meta).encode(), np.uint8)
    np.savez(file, **blocks)
    with pytest.raises(ValueError, match=rf"^checkpoint .*020\.npz was written by an older oslr "
                                         rf"\(no {key} recorded\); delete .*ck to start the "
                                         r"study afresh\.$"):
        _resume(args, folder)


def test_checkpoint__warnings_point_at_the_callers_line_and_name_each_changed_setting(
        tmp_path, monkeypatch):
    args, run, folder, whole = _two_rounds(tmp_path)
    newest = folder / "checkpoint-000000000020.npz"
    newest.write_bytes((folder / "checkpoint-000000000010.npz").read_bytes())
    real = checkpoint.runtime()
    monkeypatch.setattr(checkpoint, "runtime",
                        lambda: {**real, "x64": not real["x64"], "xla_flags": "--other"})
    with pytest.warns(RuntimeWarning) as record:
        resumed = oslr.simulate(*args, **run, checkpoint_path=folder)
    _assert_same(whole, resumed)
    damaged, other = (str(w.message) for w in record)
    assert damaged == (f"checkpoint {newest} is damaged (it holds round 10, its name says 20); "
                       "resuming from round 10 instead (the rounds after it are played again).")
    assert other == (f"checkpoint in {folder} was saved by another runtime (x64 {real['x64']!r} "
                     f"-> {not real['x64']!r}, xla_flags {real['xla_flags']!r} -> '--other'): "
                     "the resumed study equals an uninterrupted one only to float rounding, "
                     "not bit for bit.")
    if "MUTANT_UNDER_TEST" not in os.environ:  # mutmut's trampolines add frames of their own
        assert [w.filename for w in record] == [__file__] * 2  # the line that called simulate


def test_checkpoint__a_resume_killed_before_its_first_save_keeps_the_round_it_resumed(tmp_path,
                                                                                      monkeypatch):
    args, run, folder, whole = _two_rounds(tmp_path)

    def killed(*a):
        raise _Killed("before the first save")
    monkeypatch.setattr(checkpoint, "save", killed)
    with pytest.raises(_Killed):
        oslr.simulate(*args, **run, checkpoint_path=folder)
    assert _saved(folder) == ["checkpoint-000000000010.npz", "checkpoint-000000000020.npz"]
    # a damaged newest round: the older one is resumed and the newer one removed, not the older
    (folder / "checkpoint-000000000020.npz").write_bytes(b"junk")
    with pytest.warns(RuntimeWarning, match="resuming from round 10"), pytest.raises(_Killed):
        oslr.simulate(*args, **run, checkpoint_path=folder)
    assert _saved(folder) == ["checkpoint-000000000010.npz"]


def test_fallback_rounds__older_rounds_newest_first_and_none_under_distributed(tmp_path,
                                                                                monkeypatch):
    for t in (10, 20, 30):
        checkpoint.file_of(tmp_path, t).write_bytes(b"")
    assert checkpoint.fallback_rounds(tmp_path, 30) == [20, 10]
    assert checkpoint.fallback_rounds(tmp_path, 20) == [10]
    monkeypatch.setattr(checkpoint.jax, "process_count", lambda: 2)
    assert checkpoint.fallback_rounds(tmp_path, 30) == []


def test_keep_studies__none_inside_turns_it_off_and_outside_nothing_is_kept(tmp_path):
    problem, pp = oslr.make_problem("sparse-linear", d=4, k=2)
    learner, params = oslr.make("ogd-full", d=4)
    run = dict(horizon=20, n_runs=2, chunk_size=10)
    with checkpoint.keep_studies(tmp_path / "k") as kept:
        with checkpoint.keep_studies(None):
            oslr.simulate(learner, problem, params, pp, **run)
        assert not (tmp_path / "k").exists()
        first = oslr.simulate(learner, problem, params, pp, **run)
        (folder,) = (tmp_path / "k").iterdir()
        assert sorted(p.name for p in folder.iterdir()) == [
            "checkpoint-000000000010.npz", "checkpoint-000000000020.npz"]
        again = oslr.simulate(learner, problem, params, pp, **run)  # finished: loaded
        assert kept.resumed == [("ogd-full", 20)]
        other = oslr.simulate(learner, problem, params, pp, **{**run, "horizon": 30})
        assert len(list((tmp_path / "k").iterdir())) == 2  # another study, another folder
        checkpoint.forget_studies()
        assert not (tmp_path / "k").exists()
        checkpoint.forget_studies()  # nothing kept: no error
    np.testing.assert_array_equal(first.final["loss"], again.final["loss"])
    assert other.horizon == 30 and checkpoint.study_path("x") is None


def test_identity__its_digest_reads_the_fields_in_the_formats_order():
    # the order is the checkpoint format: a study saved before the record existed resumes
    from oslr.checkpoint import Identity, fingerprint

    assert Identity._fields == (
        "learner", "learner_info", "options", "problem", "d", "horizon", "seed", "run_offset",
        "n_total", "stats", "n_checkpoints", "unroll", "params", "problem_params",
        "problem_info", "carry")
    parts = ("ogd-full", "None", {"max_k": 3}, "sparse-linear", 8, 100, 0, 0, 6, True, 50, 1,
             {"eta": np.float32([0.1, 0.2])}, {"k": np.int32(2)}, "{'design': 'x'}",
             (((6, 8), "float32"),))
    identity = Identity(*parts)
    assert identity.digest() == fingerprint(*parts)
    for i, name in enumerate(Identity._fields):  # every field is read
        other = list(parts)
        other[i] = {"eta": np.float32([0.1, 0.3])} if name == "params" else (
            {"k": np.int32(3)} if name == "problem_params" else ("changed", 1))
        assert Identity(*other).digest() != identity.digest(), name
