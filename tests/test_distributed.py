"""Studies over several processes (`jax.distributed`): two local CPU processes, one device each,
run `oslr run --distributed` and a checkpointed `simulate` that is killed after its first chunk
and resumed; the numbers equal a single-process run of the same study, process 0 alone writes the
files, and each process keeps its own checkpoint (`oslr.sim`, `oslr.cli`)."""

import json
import os
import socket
import subprocess
import sys

import jax
import numpy as np
import pandas as pd
import pytest

import oslr
from oslr.cli import main
from tests.helpers import ACROSS_PROCESSES_RTOL

_STUDY = ["--problem", "sparse-linear", "--learners", "ogd-full", "--d", "8", "--k", "2",
          "--horizon", "300", "--runs", "6", "--seed", "5", "--chunk", "100", "--no-plot",
          "--no-progress"]

_WORKER = """
import json, sys
from pathlib import Path
i, n, port, tmp = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], Path(sys.argv[4])
study = json.loads(sys.argv[5])
from oslr.cli import main
rc = main(["run", "--distributed", "--coordinator", f"localhost:{port}", "--num-processes",
           str(n), "--process-id", str(i), "--out", str(tmp / "cli"), *study])
import jax, oslr, oslr.checkpoint as checkpoint
problem, pp = oslr.make_problem("sparse-linear", d=8, k=2)
learner, params = oslr.make("ogd-full", d=8)  # the CLI's program: a compilation cache hit
real = checkpoint.save
def dying(*args):
    real(*args)
    raise KeyboardInterrupt("killed after the first chunk")
checkpoint.save = dying
try:
    oslr.simulate(learner, problem, params, pp, horizon=300, n_runs=6, chunk_size=100,
                  checkpoint_path=tmp / "ck")
except KeyboardInterrupt:
    pass
checkpoint.save = real
res = oslr.simulate(learner, problem, params, pp, horizon=300, n_runs=6, chunk_size=100,
                    checkpoint_path=tmp / "ck")
print(json.dumps({"rc": rc, "processes": jax.process_count(), "devices": len(jax.devices()),
                  "loss": res.final["loss"].tolist(),
                  "regret": res.regret_curves()["regret"].tolist()}))
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("localhost", 0))
        return s.getsockname()[1]


@pytest.mark.slow  # two processes each compiling the study (17 s); keeps the default run < 5 min
def test_two_processes__same_numbers_as_one_files_written_once(tmp_path):
    port = _free_port()
    env = dict(os.environ, JAX_PLATFORMS="cpu", JAX_COMPILATION_CACHE_DIR=str(tmp_path / "cache"),
               JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS="0",
               JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES="0")
    procs = [subprocess.Popen([sys.executable, "-c", _WORKER, str(i), "2", str(port),
                               str(tmp_path), json.dumps(_STUDY)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for i in range(2)]
    outs = [p.communicate(timeout=300) for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err[-3000:]
    got = [json.loads(out.strip().splitlines()[-1]) for out, _ in outs]
    assert [g["rc"] for g in got] == [0, 0]
    assert [g["processes"] for g in got] == [2, 2] and got[0]["devices"] == 2

    # the checkpointed study, resumed after the kill, equals one process in one go, on the CPU
    # as the two processes (on a GPU machine this process's default device is the GPU)
    problem, pp = oslr.make_problem("sparse-linear", d=8, k=2)
    learner, params = oslr.make("ogd-full", d=8)
    single = oslr.simulate(learner, problem, params, pp, horizon=300, n_runs=6, chunk_size=100,
                           devices=jax.devices("cpu")[:1])
    for g in got:  # both processes hold the whole (gathered) result
        np.testing.assert_array_equal(g["loss"], single.final["loss"])
        np.testing.assert_array_equal(g["regret"], single.regret_curves()["regret"])
    assert sorted(p.name for p in (tmp_path / "ck").iterdir()) == [
        "process-0-of-2", "process-1-of-2"]
    for part in (tmp_path / "ck").iterdir():  # each holds its own 3 runs, at the horizon
        assert sorted(p.name for p in part.iterdir()) == [  # the last two rounds
            "checkpoint-000000000200.npz", "checkpoint-000000000300.npz"]

    # oslr run --distributed: the files of a single-process run (this process's default device:
    # the CPU's bits on a CPU, float32 rounding from a GPU), written once
    assert "wrote" in outs[0][0] and "wrote" not in outs[1][0]  # by process 0 only
    assert main(["run", "--out", str(tmp_path / "single"), *_STUDY]) == 0
    dist = sorted(p.name for p in (tmp_path / "cli").iterdir())
    assert dist == sorted(p.name for p in (tmp_path / "single").iterdir())
    a, b = (pd.read_csv(tmp_path / name / "runs.csv") for name in ("cli", "single"))
    pd.testing.assert_frame_equal(a, b, check_exact=ACROSS_PROCESSES_RTOL == 0.0,
                                  rtol=ACROSS_PROCESSES_RTOL or 1e-5)


def test_cli__distributed_options_checked(capsys, tmp_path):
    assert main(["run", "--process-id", "1"]) == 2
    assert "need --distributed" in capsys.readouterr().err
    assert main(["run", "--distributed", "--num-processes", "2", "--process-id", "2",
                 "--out", str(tmp_path / "out")]) == 2
    assert "must lie in 0 .. 1" in capsys.readouterr().err
