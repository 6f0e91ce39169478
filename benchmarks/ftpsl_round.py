"""Where an FTPSL round's time goes, and which exact membership test of the resamples is fastest.

`python -m benchmarks.ftpsl_round RUNS[,RUNS...] [--out FILE]` prints one JSON line per number of
runs (a9a, k = 10, M = 10, T = 200 rounds, median of 3 after a warm-up, one device):

* `noise_us`: the round's random numbers alone, M + 1 draws of `perturbation_noise` (d + 1
  threefry words each, their Laplace transform) for every run, keys split and folded as a study
  does;
* `ftpsl_us`, `ftpsl_m1_us`: a whole round of FTPSL with M = 10 and M = 1 resamples, so
  (ftpsl_us - ftpsl_m1_us) / 9 is the cost of one resample draw;
* `harness_us`: a round of `ftpl-random-subset` on the same stream (the a9a replay, the metrics
  and a cheap FTPL play on 10 coordinates; the idle learner's round alone is each throughput
  row's `harness_share`);
* `pairs_us`, `pass_us`, `top_k_us`, `select_us`: FTPSL's round with the resamples'
  membership of the selected slots tested four exact ways, each compiled and timed after the
  other (not interleaved): by rank (`in_top_k`) with all pairs compared at once and with one
  pass on order keys (`ftpsl_us` is the one this machine takes: the pass on one CPU core), by
  `lax.top_k`'s first k indices, and by each draw's whole mask (`top_k_mask`, what FTPSL does
  above `RANK_TEST_UP_TO`). All four give the same counts (tests/primitives);
* `np_noise_us`, `np_select_us`, `np_round_us`: the batched NumPy float32 anchor
  (`benchmarks.anchors`) on the same shapes: its M + 1 perturbation draws (uniforms, Laplace
  transform, v = eta S - z), its selection of every draw with the resamples' membership test
  (argpartition, the first resample holding each selected coordinate), and its whole round.

Nothing here is asserted.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import statistics
import sys

import jax
import jax.numpy as jnp
from jax import lax

from benchmarks.cases import BY_NAME
from benchmarks.machine import cores
from benchmarks.throughput import interleaved, time_jax
from oslr.learners import ftpsl as ftpsl_module
from oslr.rollout import LEARNER_ROUNDS, run_keys

GR = sys.modules["oslr.primitives.geometric_resampling"]
TOPK = sys.modules["oslr.primitives.topk"]
HORIZON, D, M = 200, 123, 10


def noise_seconds(runs: int, horizon: int = HORIZON, repeats: int = 3) -> float:
    """Seconds per round of the M + 1 perturbation draws of `runs` runs (nothing else)."""
    noise = ftpsl_module.perturbation_noise(D)

    def study(seed):
        keys = jax.vmap(lambda r: run_keys(seed, r))(jnp.arange(runs))

        def body(acc, t):
            def one(keys_r):
                z, u = noise(jax.random.fold_in(keys_r[LEARNER_ROUNDS], t), (M + 1,))
                return jnp.sum(z) + jnp.sum(u)
            return acc + jax.vmap(one)(keys), None

        return lax.scan(body, jnp.zeros(runs), jnp.arange(horizon))[0]

    f = jax.jit(study)
    seed = jnp.uint32(0)
    call = lambda: jax.block_until_ready(f(seed))  # noqa: E731
    call()  # warm-up (compile)
    return interleaved({"noise": call}, repeats, 0.0)["noise"] / horizon


def _by_top_k(score, k, idx):
    """Membership of `idx` in `lax.top_k`'s first k indices (`top_k_mask`'s rule)."""
    m = idx.shape[0]
    _, top = lax.top_k(jnp.where(score == 0, jnp.zeros_like(score), score), m)
    return jnp.any((top[None, :] == idx[:, None]) & (jnp.arange(m) < k)[None, :], axis=1)


@contextlib.contextmanager
def membership(form: str):
    """FTPSL built inside tests its resamples by `form`: "pairs" or "pass" (`in_top_k` counting
    all pairs at once or in one pass, whatever the machine), "top_k" or "select"."""
    saved = GR.in_top_k, TOPK.counts_in_one_pass, ftpsl_module.RANK_TEST_UP_TO
    GR.in_top_k = _by_top_k if form == "top_k" else saved[0]
    if form in ("pairs", "pass"):
        TOPK.counts_in_one_pass = lambda: form == "pass"
    limit = -1 if form == "select" else 1 << 30
    ftpsl_module.RANK_TEST_UP_TO = {True: limit, False: limit}
    try:
        yield
    finally:
        GR.in_top_k, TOPK.counts_in_one_pass, ftpsl_module.RANK_TEST_UP_TO = saved


def round_us(case, runs: int) -> float:
    r = time_jax(case, runs, HORIZON, 3)
    return round(1e6 * r["seconds"] / HORIZON, 1)


def numpy_parts(runs: int, horizon: int = HORIZON, repeats: int = 3) -> dict:
    """Microseconds per round of the batched NumPy float32 anchor (`benchmarks.anchors`) and of
    two of its parts on the same shapes: the M + 1 perturbation draws (`_perturbed_draws`: the
    uniforms, the Laplace transform, v = eta S - z) and the selection of every draw with the
    resamples' membership test (argpartition, then the first resample holding each selected
    coordinate), timed in turn (`benchmarks.throughput.interleaved`); the round as the study
    over 2T rounds less the study over T (its setup does not count), median of `repeats`."""
    import time

    import numpy as np

    from benchmarks import anchors

    rng = np.random.default_rng(0)
    f32 = np.float32
    s = rng.normal(size=(runs, D)).astype(f32)
    eta, gamma = (f32(v) for v in anchors.ftpsl_rates(D, anchors.FTPSL_K, 800))
    k, steps = anchors.FTPSL_K, np.arange(1, M + 1)

    def draws():
        return anchors._perturbed_draws(rng, s, eta, gamma, M + 1)

    z, explore, v = draws()

    def select():
        score = np.where(explore[..., None], z, np.abs(v))
        top = np.argpartition(-score, k - 1, axis=-1)[..., :k]
        inq = (top[:, 1:, :, None] == top[:, :1, None, :]).any(axis=2)
        return np.where(inq.any(1), steps[np.argmax(inq, axis=1)], M)

    def whole():  # the study over 2T rounds less the study over T: its setup cancels
        t0 = time.perf_counter()
        anchors.numpy_batched("ftpsl", runs, horizon, f32)()
        t1 = time.perf_counter()
        anchors.numpy_batched("ftpsl", runs, 2 * horizon, f32)()
        return (time.perf_counter() - t1) - (t1 - t0)

    parts = interleaved({"noise": draws, "select": select}, repeats, max_calls=horizon)
    anchors.numpy_batched("ftpsl", runs, 1, f32)()  # warm-up: a9a read, the first calls
    rounds = statistics.median(whole() for _ in range(repeats))
    return {"np_noise_us": round(1e6 * parts["noise"], 1),
            "np_select_us": round(1e6 * parts["select"], 1),
            "np_round_us": round(1e6 * rounds / horizon, 1)}


def measure(runs: int) -> dict:
    ftpsl = BY_NAME["ftpsl"]
    m1 = dataclasses.replace(ftpsl, make_opts={**ftpsl.make_opts, "n_resamples": 1})
    row = {"runs": runs, "device": jax.devices()[0].device_kind, "T": HORIZON,
           "noise_us": round(1e6 * noise_seconds(runs), 1),
           "ftpsl_us": round_us(ftpsl, runs), "ftpsl_m1_us": round_us(m1, runs),
           "harness_us": round_us(BY_NAME["ftpl-random-subset"], runs)}
    for form in ("pairs", "pass", "top_k", "select"):
        with membership(form):
            row[f"{form}_us"] = round_us(ftpsl, runs)
    return {**row, **numpy_parts(runs)}


def main(argv=None) -> list[dict]:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.ftpsl_round",
                                     description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runs", help="comma-separated numbers of parallel runs")
    parser.add_argument("--out", default=None, help="JSON file for the rows")
    parser.add_argument("--results", default=None, metavar="JSON",
                        help="also merge the rows into this results.json (key `ftpsl_round`, one "
                             "row per runs and cores: RESULTS.md's table); OSLR_CPUS=0 in the "
                             "environment measures on core 0 (`oslr.cpus`)")
    args = parser.parse_args(argv)
    rows = []
    for runs in (int(r) for r in args.runs.split(",")):
        rows.append({**measure(runs), "cpus": cores()})
        print(json.dumps(rows[-1]), flush=True)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(rows, f, indent=1)
    if args.results:
        from pathlib import Path

        from benchmarks.suite import merge_rows

        merge_rows(Path(args.results), "ftpsl_round", rows,
                   same=lambda r: (r["runs"], r["device"], r.get("cpus")))
    return rows


if __name__ == "__main__":
    main()
