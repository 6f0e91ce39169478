"""Why a row misses its target and what would fix it, from profiles of the rows' pieces measured
apart on the 2-core CPU (jitted, vmapped, median of 30 calls; numbers in the text). Shown under
the throughput table for each row that misses a target; a row without a note says so."""

_RANK_ONE = (
    "memory-bound rank-1 (BLAS-2) work: each pass over the (runs, d, d) float32 state moves "
    "4 bytes per 2 flops, and an elementwise pass over 1.6 MB (1024 runs, d = 20) takes about "
    "0.3 ms (~11 GB/s), so a GEMM peak is out of reach by construction. "
)

_SGD = (
    "O(K d) vector work per round (about 12 K d flops, 2.5k at d = 20, K = 10): BLAS-1 passes "
    "over the (runs, K, d) width trackers and one history gather, bound by memory traffic and "
    "loop overhead, not arithmetic. Fix: none for this algorithm "
    "on a CPU; its flops per byte stay O(1) whatever the batch (see the d sweep). "
)

_STREAM = (
    "harness_share says how much of the round is the problem's stream, the protocol round and "
    "the metrics (an idle learner on the same stream, timed in turn). "
)

_SUBSET_FTPL = (
    _STREAM + "Against batched NumPy float32 (0.4-0.55x by CPU time, 2026-11-27): the row 1.41 "
    "us per run-round at 256 runs, its idle learner 0.34; NumPy's whole round is about 0.6-0.8 "
    "us, because it works on the k = 10 slots of its subset only. Here about 0.25: the "
    "learner's part is 10 Laplace perturbations, the Lemma 1 "
    "oracle on the 10 slots of its subset and the scatter of w into d = 123, a few small "
    "passes per run-round; the NumPy loop does the same on k = 10 numbers (it reads x on the "
    "subset only), while the harness hands every learner the d-vector round (static shapes). "
    "Fix: none that keeps one program for every k; a GPU (164-169x there)."
)

NOTES: dict[str, str] = {
    "ogd-full": (
        _STREAM + "Against batched NumPy (issue 26, process CPU time per run-round, timed in "
        "turn on the 2-core AMD EPYC, 2026-11-27): the row 0.76 us, its idle learner 0.40; the "
        "stream's 65 normals alone 0.36 us (NumPy's float32 normals alone 0.53 us, so our "
        "draws are not the bound) and the OGD arithmetic alone 0.02 us; the protocol's budget "
        "truncation of the query costs 0.24 us (the row with it removed: 0.52 us): x_obs = "
        "where(keep, x, 0) with a keep that depends on the traced budget stops XLA from fusing "
        "the stream into the prediction, whatever computes the prefix counts (jnp.cumsum or "
        "the triangular product, equal here). NumPy float32's whole round: 0.62 us. Fixed "
        "2026-11-28 (issue 36): a budget that is a Python int covering every coordinate "
        "(ogd-full's d) skips the truncation at trace time (`oslr.protocol._truncate`), and "
        "the row went from 0.77x to 1.14x batched NumPy float32 (1.29e6 -> 1.61e6 run-rounds/s, "
        "0.62 us a run-round) and is 2.2x the plain JAX scan; what remains is mostly the "
        "stream's 65 normals (0.36 us). On one core (`OSLR_CPUS=0`, the table \"On all cores "
        "and on one\", 2026-12-05) XLA's threads cost no CPU time: 1.71x batched NumPy float32 "
        "by CPU time (1.14x on both cores). Fix for the rest: a GPU (328x NumPy there)."
    ),
    "ogd-random-subset": (
        _STREAM + "The stream and the budget truncation as for ogd-full (see there), plus the "
        "k = 8 Floyd draws of the queried subset (8 threefry integers). Fix: as for ogd-full "
        "(647x NumPy on the GPU)."
    ),
    "ftpl-random-subset": _SUBSET_FTPL,
    "ftpl-oracle-subset": _SUBSET_FTPL,
    "ito-projection": (
        _STREAM + "The round is [ITO] Alg. 3's OMP on the m = 2 d = 20 projections every round "
        "(max_observed - 1 = 3 greedy steps, k' = 2 active) and the forms A^T x. Against batched "
        "NumPy float32 (issue 26, CPU time, 2026-11-27) it was 0.14x: each OMP step solved a "
        "masked 20 x 20 system (batched LU) where NumPy solves the support's 2 x 2 block; OMP "
        "now solves its slots' 3 x 3 Gram block by an unrolled Cholesky "
        "(`primitives.sparse_approx.spd_solve`): 193k -> 946k run-rounds/s (4.9x), 0.68x "
        "NumPy. What is left: the harness (0.31 of the row: the sphere stream, keys, metrics) "
        "and three greedy steps whose last is inactive at k' = 2 (the static bound). Fix: a "
        "GPU (852x the one-run loop there, before this change)."
    ),
    "ftpsl-knapsack": (
        "each of the 11 draws of a round solves an exact knapsack (a DP over the 123 items "
        "and 21 capacities) and a greedy fill (the items in the order of z, each taken if it "
        "fits). Measured on one round's 2,816 draws (256 runs x 11, CPU time, 2026-11-27): "
        "oslr's greedy fill 32.9 ms (a sort of 123 scores per draw, then a 123-step scan), "
        "NumPy's 3.5 ms (argsort of the (2816, 123) block and a loop over the 123 positions "
        "on (2816,) vectors); the DP 16.4 ms against NumPy's 8.3; the row's round 51 ms "
        "against NumPy float32's 17: the fill is what loses. XLA's CPU sort of many short "
        "rows is slow. Fix: a fill without a full sort (only the exploring draws, probability "
        "gamma, need it: compact them first), or a GPU."
    ),
    "ito-block-bandit": (
        _STREAM + "Against batched NumPy float32 (0.66x by CPU time, 2026-11-27): the row "
        "0.96 us per run-round, its idle learner 0.50 (the sphere stream's 10 normals and "
        "norm, the clip, the keys, the metrics); NumPy's whole round 0.63 us. The learner's "
        "part is VAW on the k = 4 observed values (a 4 x 4 Sherman-Morrison step) and, once "
        "per block of 3 rounds, an Exp3 draw and update over the 210 subsets (under vmap "
        "computed every round, kept on block ends). Fix: as for ogd-full (the stream and the "
        "protocol), a GPU."
    ),
    "dantzig-poslr": (
        "the LPs: the E4 study of docs/kale-results.md (300 runs, T = 2^14, C = 0.3) took "
        "201 s with its 14 batched solves per run and 88 s with t0 moved past T (about 56% in "
        "the LPs; 82% on the correlated design, whose LPs need more PDHG iterations and lambda "
        "doublings); the NumPy loop solves its LPs with HiGHS (a C++ simplex), which on these "
        "small dense LPs is far faster than a first-order method on a CPU. Fix: warm-starting "
        "PDHG from the previous solution, or a GPU, where batched PDHG is the method of "
        "choice."
    ),
    "online-greedy": (
        _RANK_ONE + "Per run-round the batch statistics are a 10 x 10 rank-1 update and VAW a "
        "10 x 10 Sherman-Morrison step; per batch of 4 rounds, 10 symmetric eliminations of size "
        "10 score the candidate supports. All of it is small per-run linear algebra (the 20x "
        "NumPy target is met); a matmul peak is out of reach by construction."
    ),
    "uniform-subset": (
        _STREAM + "The round is the stream, the k = 8 Floyd draws of the subset and the "
        "protocol's truncation of the play's support (as for ogd-full, see there); the NumPy "
        "loop is little else than its draws. Fix: as for ogd-full (401x NumPy on the GPU)."
    ),
    "ftpsl": (
        "the table \"FTPSL's round, piece by piece\" (`python -m benchmarks.ftpsl_round 256`, "
        "2026-12-05, on one core and on both) splits a round of 256 runs, beside the batched "
        "NumPy float32 anchor's parts on the same shapes. On one core (this row, `OSLR_CPUS=0`) "
        "a round costs 2.26 ms against NumPy's 4.46 (each without its setup: NumPy's by "
        "differencing studies of 200 and 400 rounds), 1.97x; the whole study at T = 800 "
        "2.22x by CPU time (this row; 2.21x in the table \"On all cores and on one\"). Two "
        "changes of 2026-12-05 "
        "made it: the perturbations take two words per threefry block (`oslr.prng.paired_bits`; "
        "1.32 -> 0.86 ms), and the resamples' rank test counts in one pass on order keys "
        "(`in_top_k` on one core: key_j + [j < i] > key_i for every slot at once, 0.47 ms) "
        "instead of comparing all (10 slots x 123) pairs of each draw at once, which XLA "
        "stored as a (256, 10, 10, 123) int32 array and summed by a reduce-window (1.17 ms): "
        "the round went 2.91 -> 2.21 ms. On both cores the pairs are quicker by wall time "
        "(1.67 against 1.90 ms: one large fusion spread over the threads, against a loop of "
        "small steps) and the same by CPU time, so `in_top_k` takes the pass on one CPU core "
        "only. On both cores FTPSL is 2.69x NumPy by wall time but 1.42x by CPU time: the "
        "pairs are more work than the pass (2.91 against 2.21 ms a round on one core) and "
        "XLA's two threads add about 0.36 ms of CPU a round (3.29 ms with the pairs on both "
        "cores against 2.94 on one, in turn), so CPU-time comparisons here are made on one "
        "core. What is left on one core: the threefry hash (0.49 ms), the "
        "scores and their keys (0.29), the play's `lax.top_k` (0.30), the harness (0.30). "
        "Tried before: the `rbg` keys (no faster under vmap, and their batching rule draws a "
        "batch from one key, so vmap would no longer equal a loop); the unrolled hash for the "
        "resample draws (2.3x slower in the round than JAX's loop). Fix for more: fewer "
        "resamples where the theory allows (M enters linearly) or a GPU."
    ),
    "ftpsl-delayed": (
        "the same round as ftpsl (the play's selection, 10 resample draws of 124 words and a "
        "rank test each) plus an (8, 123) ring-buffer update per run: 2.14x "
        "batched NumPy float32 by CPU time on one core (this row), as ftpsl."
    ),
    "pege": (
        _STREAM + "Against batched NumPy (0.24x by CPU time, 2026-11-27): PEGE's round is "
        "almost no work (an exploration round reads one coordinate, an exploitation round one "
        "inner product), and the NumPy anchor, whose phases are the same in every run, spends "
        "0.025 us per run-round on its uniforms and sums. oslr's row costs 0.105 us, of which "
        "the idle learner's program (the run-round's keys, the noise draw, the protocol round, "
        "the compensated sums and their 50 checkpoint copies) is 0.057 us: the harness's floor "
        "alone is twice NumPy's whole round. Fix: a cheaper harness (fewer key derivations, "
        "metrics copied only at checkpoints); a GPU. The copies are made only at the checkpoints "
        "on a CPU since 2026-12-01 (`oslr.metrics._write_slot`, a conditional on the round "
        "index): the row ran 2.8e6 -> 6.7e6 run-rounds/s, timed in turn with the old program "
        "(256 runs, T = 2,000, process CPU time); not yet rerun in this table."
    ),
    "fpege-gd": (
        _STREAM + "As pege (see there; 0.25x batched NumPy by CPU time): the harness's floor "
        "of about 0.06 us per run-round bounds a learner this cheap, and the fOLS-GD step adds a "
        "gather and a scatter into the (runs, capacity) history. Its tracker steps only on "
        "exploration rounds (a cond on the round index). Fix: as for pege."
    ),
    "ito-dual-averaging": (
        _STREAM + "Against batched NumPy float32 (0.54x by CPU time, 2026-11-27): the row "
        "0.53 us per run-round, its idle learner 0.34 (the E3 stream: 10 normals normalised "
        "onto the sphere, the noise and the clip, the keys and the metrics), NumPy's whole "
        "round 0.30. The learner's part (0.2 us) is the dual-averaging point, the (k - 1)-subset "
        "draw and the protocol's truncation of the query (see ogd-full). Fix: as for ogd-full."
    ),
    "linucb": (
        "on these fixed arms LinUCB runs its O(K d) form (u_a = A^-1 x_a, widths and means "
        "updated by Sherman-Morrison; no d x d state), and so do the NumPy loop, the batched "
        "NumPy and the numba anchors. Process CPU time per run-round (1,024 runs, timed in "
        "turn, 2026-11-27): the row 0.20 us, its idle learner 0.043 (harness share 0.22, the "
        "target 0.25 met; it was 0.19 us, 0.55 of the round, before the key hash was unrolled, "
        "`oslr/prng.py`), so the learner's update is 0.16 us, about numba's whole round "
        "(0.16 us). The update is a gather of u_j, c = X v and the (K, d) rank-1 step, "
        "elementwise passes over the (runs, K, d) state; measured alternatives inside the row: "
        "c as an elementwise product and sum 1.2x slower, one-hot gathers and scatters 1.6x "
        "slower. So oslr runs at 0.79-0.93x numba and 1.1-1.3x batched NumPy float32 here, "
        "bounded by XLA's CPU code for these small batched passes. The 500x river target is "
        "met. The plain JAX scan of the same study (`benchmarks/plain_jax.py`, 2026-11-28) "
        "runs at parity with oslr: 0.94-1.01x in three measurements timed in turn, inside the "
        "run-to-run spread (1.15-1.31x in three on 2026-12-01's slower AMD EPYC host, "
        "ANCHORS.md), so the harness costs nothing measurable against it and the bound "
        "is XLA's CPU code for the update in both. Much of the gap was XLA's threads: on one "
        "core (`OSLR_CPUS=0`, the table \"On all cores and on one\", 2026-12-05) the same "
        "program runs 5.9e6 run-rounds/s by CPU time against 3.8e6 on both cores, 1.23x numba "
        "(0.77x on both cores) at 95% of its two-core wall rate. Fix for the rest: a fused "
        "kernel of the update; a GPU (1.35x numba on 16 host cores there)."
    ),
    "eps-greedy": (
        "one Sherman-Morrison update of A^-1 (runs, d, d) and one A^-1 b per round (6 d^2 + "
        "2 K d flops, 2.8k at d = 20): " + _RANK_ONE + "Batched NumPy float32 makes the same "
        "passes with einsum (oslr 1.1-1.3x it). Fix: Woodbury block updates every B rounds "
        "(rank-B, BLAS-3)."
    ),
    "flinucb-gd": _SGD + "Against batched NumPy float32: 1.13x by CPU time (2026-11-27).",
    "flinucb-svrg": _SGD + "SVRG adds an O(n d) full gradient at rounds 1, 2, 4, 8, ...: it "
    "passed over the whole history capacity each time (0.49x batched NumPy float32, 744k "
    "run-rounds/s), and now over the stored samples only (1.72M, 1.2x NumPy, 2026-11-27).",
    "flinucb-sag": _SGD + "SAG adds two residual scatters into the (runs, capacity) table and "
    "a second read of the history per round: its row costs 1.08 us per run-round against "
    "fLinUCB-GD's 0.50 (0.62x batched NumPy float32, whose scatters are fancy-index "
    "assignments on the same table); not split further.",
}

_GPU_LINALG = (
    "on the GPU the yardstick is the float32 matmul at JAX's default precision, which runs on "
    "tensor cores (TF32, about 330-370 TFLOP/s measured on the H200); the learners' per-run "
    "d x d and K x d matrices (d = 20) are batched matrix-vector products and rank-1 updates, no "
    "tensor-core work. What bounds them at 4,096 runs is the round itself: LinUCB's round costs "
    "150-190 us at 1,024 and at 4,096 runs alike (the launch table), kernel launches and loop "
    "overhead rather than work, and its rate keeps growing with runs to 3.4e8 run-rounds/s at "
    "262,144. Fix: more runs per device; fewer kernels per round (a fused round kernel)."
)

_GPU_UNPROFILED = (
    "not profiled on the GPU. A round of its 4,096 runs costs runs / rate = 320-390 us, 2x the "
    "150-190 us that LinUCB's round costs whatever its runs (the launch table): a share of a "
    "tensor-core peak is the wrong yardstick for per-run vector work."
)

#: The same, for rows measured on an accelerator.
NOTES_ACCELERATOR: dict[str, str] = {
    **{name: _GPU_LINALG for name in ("eps-greedy", "linucb", "flinucb-gd", "flinucb-svrg",
                                      "flinucb-sag")},
    **{name: _GPU_UNPROFILED for name in ("online-greedy", "ito-projection", "dantzig-poslr")},
}
