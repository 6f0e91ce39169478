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
* `rank_us`, `top_k_us`, `select_us`: FTPSL's round with the resamples' membership of the
  selected slots tested three exact ways, each compiled and timed after the other (not
  interleaved): by rank (`in_top_k`, what FTPSL does at
  max_k <= 16), by `lax.top_k`'s first k indices, and by each draw's whole mask (`top_k_mask`,
  what FTPSL does above 16). All three give the same counts (tests/primitives).

Nothing here is asserted.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import sys

import jax
import jax.numpy as jnp
from jax import lax

from benchmarks.cases import BY_NAME
from benchmarks.throughput import interleaved, time_jax
from oslr.learners import ftpsl as ftpsl_module
from oslr.rollout import LEARNER_ROUNDS, run_keys

GR = sys.modules["oslr.primitives.geometric_resampling"]
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
    """FTPSL built inside tests its resamples by `form`: "rank", "top_k" or "select"."""
    saved = GR.in_top_k, ftpsl_module.RANK_TEST_UP_TO
    GR.in_top_k = _by_top_k if form == "top_k" else saved[0]
    ftpsl_module.RANK_TEST_UP_TO = -1 if form == "select" else saved[1]
    try:
        yield
    finally:
        GR.in_top_k, ftpsl_module.RANK_TEST_UP_TO = saved


def round_us(case, runs: int) -> float:
    r = time_jax(case, runs, HORIZON, 3)
    return round(1e6 * r["seconds"] / HORIZON, 1)


def measure(runs: int) -> dict:
    ftpsl = BY_NAME["ftpsl"]
    m1 = dataclasses.replace(ftpsl, make_opts={**ftpsl.make_opts, "n_resamples": 1})
    row = {"runs": runs, "device": jax.devices()[0].device_kind, "T": HORIZON,
           "noise_us": round(1e6 * noise_seconds(runs), 1),
           "ftpsl_us": round_us(ftpsl, runs), "ftpsl_m1_us": round_us(m1, runs),
           "harness_us": round_us(BY_NAME["ftpl-random-subset"], runs)}
    for form in ("rank", "top_k", "select"):
        with membership(form):
            row[f"{form}_us"] = round_us(ftpsl, runs)
    return row


def main(argv=None) -> list[dict]:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.ftpsl_round",
                                     description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runs", help="comma-separated numbers of parallel runs")
    parser.add_argument("--out", default=None, help="JSON file for the rows")
    args = parser.parse_args(argv)
    rows = []
    for runs in (int(r) for r in args.runs.split(",")):
        rows.append(measure(runs))
        print(json.dumps(rows[-1]), flush=True)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(rows, f, indent=1)
    return rows


if __name__ == "__main__":
    main()
