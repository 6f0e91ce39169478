"""Shared test helpers: regenerate a run's stream exactly as the simulator sees it."""

import json
import os
import subprocess
import sys

import jax

from oslr.rollout import learner_round_keys as learner_keys  # noqa: F401  (re-used by tests)
from oslr.rollout import stream  # noqa: F401
from tests import FAST_BUILD_FLAGS, USERS_BUILD_OPTIONS


def subprocess_env(**extra: str) -> dict:
    """The environment for a child Python that imports the modules this process imports (under
    the mutation tool, the mutated copy), with `extra` variables set."""
    path = os.pathsep.join(os.path.abspath(p) for p in sys.path if p)
    return dict(os.environ, PYTHONPATH=path, **extra)


def default_build_env(**extra: str) -> dict:
    """`subprocess_env` for a child that compiles with XLA's own optimised build, the one users
    get, not the suite's faster level-0 build (tests/conftest.py, `OSLR_TEST_BUILD`)."""
    flags = os.environ.get("XLA_FLAGS", "")
    for flag in FAST_BUILD_FLAGS:
        flags = flags.replace(flag, "")
    # not an xdist worker: a child pytest keeps its compilation cache in its own folder; oslr's
    # own unrolled threefry, as users get (the fast build's rolled one left out)
    env = subprocess_env(OSLR_TEST_BUILD="default", XLA_FLAGS=" ".join(flags.split()),
                         PYTEST_XDIST_WORKER="", **extra)
    if os.environ.get("OSLR_TEST_BUILD", "fast") == "fast" and "OSLR_THREEFRY" not in extra:
        env.pop("OSLR_THREEFRY", None)
    return env


#: What numbers computed in another process (a resume in a new process, a study split over
#: processes) are promised to equal: on a CPU the bits; on a GPU float32 rounding, since each
#: process compiles and autotunes its own kernels. docs/reproducibility.md says what holds where.
ACROSS_PROCESSES_RTOL = 0.0 if jax.default_backend() == "cpu" else 1e-5


def study_setup(name="ogd-random-subset", d=8, **options):
    """(learner, params, problem, problem_params) of the simulator tests' common study: `name`
    (k = 3 unless ogd-full) on sparse-linear (d, k = 2). tests/test_sim.py and
    tests/test_checkpoint.py both use it, so their studies of one shape are one program (the
    suite's compilation cache compiles it once)."""
    import oslr

    problem, pp = oslr.make_problem("sparse-linear", d=d, k=2)
    learner, params = oslr.make(name, d=d, **({} if name == "ogd-full" else {"k": 3}), **options)
    return learner, params, problem, pp


def users_build(fn):
    """`jax.jit(fn)` compiled as XLA's default (optimised) build compiles it, the one users get,
    in this process whatever the suite's build (`tests.USERS_BUILD_OPTIONS`, per program): a
    result that only that build gets wrong shows without a child process (as topk.in_top_k's
    tie rule did). Each call lowers and compiles anew: for a few calls of one program."""
    jitted = jax.jit(fn)

    def call(*args):
        return jitted.lower(*args).compile(compiler_options=USERS_BUILD_OPTIONS)(*args)

    return call


def assert_same_across_processes(got, want, err_msg: str = "") -> None:
    """`got` (from another process) equals `want` as promised on this platform: bit for bit on a
    CPU, to `ACROSS_PROCESSES_RTOL` of the largest |want| elsewhere."""
    import numpy as np

    got, want = np.asarray(got), np.asarray(want)
    if ACROSS_PROCESSES_RTOL == 0.0:
        np.testing.assert_array_equal(got, want, err_msg=err_msg)
    else:
        scale = float(np.max(np.abs(want))) if want.size else 0.0
        np.testing.assert_allclose(got, want, rtol=ACROSS_PROCESSES_RTOL,
                                   atol=ACROSS_PROCESSES_RTOL * scale, err_msg=err_msg)


def run_child(script: str, *args: str, **env: str) -> dict:
    """Run `script` (with `args` as sys.argv[1:]) in a fresh Python (`subprocess_env` with `env`
    set); return the JSON object its last printed line holds."""
    out = subprocess.run([sys.executable, "-c", script, *args], env=subprocess_env(**env),
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def run_on_host_devices(script: str, n_devices: int, *args: str) -> dict:
    """`run_child` with `n_devices` CPU devices."""
    # the suite's own compile flags (tests/conftest.py) kept: the same build as this process
    flags = f"{os.environ.get('XLA_FLAGS', '')} --xla_force_host_platform_device_count={n_devices}"
    return run_child(script, *args, XLA_FLAGS=flags.strip(), JAX_PLATFORMS="cpu")


def x64():
    """Context manager enabling float64 (jax.enable_x64 on new JAX, jax.experimental on old)."""
    if hasattr(jax, "enable_x64"):
        return jax.enable_x64(True)
    from jax.experimental import enable_x64  # pragma: no cover - older JAX

    return enable_x64()


def fake_os(**overrides):
    """A stand-in for the `os` module (every public name of it) with some functions replaced:
    monkeypatch a module's `os` with it to inject a fault into that module's file steps only."""
    import types

    names = {n: getattr(os, n) for n in dir(os) if not n.startswith("_")}
    return types.SimpleNamespace(**{**names, **overrides})


def dot_precisions(text: str) -> set:
    """The precision pair of every float32 dot_general in a lowered program's text (on a GPU a
    float32 product without one runs at TF32)."""
    import re

    dots = [line for line in text.splitlines() if "stablehlo.dot_general" in line
            and "f32>" in line]
    assert dots, "no float32 matrix product in the program: the check would pass vacuously"
    return {re.search(r"precision = \[(\w+), (\w+)\]", line).groups() if "precision" in line
            else ("DEFAULT", "DEFAULT") for line in dots}


def interrupt_after_saves(monkeypatch, n: int) -> None:
    """Make the n-th checkpoint save of the process raise KeyboardInterrupt once it is on disk
    (a Ctrl-C right after a chunk was saved); `monkeypatch.undo()` or setting
    `oslr.checkpoint.save` back ends it."""
    from oslr import checkpoint

    real, saves = checkpoint.save, []

    def dying(*args):
        real(*args)
        saves.append(args[2])
        if len(saves) == n:
            raise KeyboardInterrupt

    monkeypatch.setattr(checkpoint, "save", dying)


def as_older_oslr(folder) -> None:
    """Make the finished `folder` as an oslr from before manifests left it: no manifest.json,
    no seal in config.json (`oslr.folder.unseal`)."""
    from pathlib import Path

    from oslr.folder import SEAL

    folder = Path(folder)
    (folder / "manifest.json").unlink()
    config = json.loads((folder / "config.json").read_text())
    config.pop(SEAL, None)
    (folder / "config.json").write_text(json.dumps(config, indent=1))


def reseal(folder) -> None:
    """Seal `folder`'s config.json again over its manifest as it is now (a test that changes a
    manifest record to reach a later check)."""
    from pathlib import Path

    from oslr import folder as folder_mod

    folder = Path(folder)
    config = json.loads((folder / "config.json").read_text())
    config.pop(folder_mod.SEAL, None)
    if (folder / "manifest.json").exists():  # else an older oslr's folder: no seal
        config[folder_mod.SEAL] = {"manifest_sha256": folder_mod.sha256(folder / "manifest.json")}
        config[folder_mod.SEAL]["config_sha256"] = folder_mod._config_digest(config)
    (folder / "config.json").write_text(json.dumps(config, indent=1))
