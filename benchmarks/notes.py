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
    _STREAM + "Here about 0.3: the learner's part is 10 Laplace perturbations, the Lemma 1 "
    "oracle on the 10 slots of its subset and the scatter of w into d = 123, a few small "
    "passes per run-round; the NumPy loop does the same on k = 10 numbers (it reads x on the "
    "subset only), while the harness hands every learner the d-vector round (static shapes). "
    "Fix: none that keeps one program for every k; a GPU (164-169x there)."
)

NOTES: dict[str, str] = {
    "ogd-full": (
        _STREAM + "Here about 0.75: the sparse-linear stream draws 64 Gaussian features and a "
        "noise per run-round with threefry (20-30 ns a number on this CPU), which the NumPy "
        "loop draws with PCG64 at a few ns; the OGD step is two passes over d = 64. Fix: a "
        "cheaper generator for the stream, which would move every study on it; a GPU (328x "
        "there)."
    ),
    "ogd-random-subset": (
        _STREAM + "Here about 0.45: the stream as for ogd-full, plus the k = 8 Floyd draws of "
        "the queried subset (8 threefry integers) and the OGD step. Fix: as for ogd-full (647x "
        "on the GPU)."
    ),
    "ftpl-random-subset": _SUBSET_FTPL,
    "ftpl-oracle-subset": _SUBSET_FTPL,
    "ito-projection": (
        _STREAM + "Here under 0.1: the round is [ITO] Alg. 3's OMP on the m = 2 d = 20 "
        "projections every round (k' = 2 greedy steps, each a correlation update and a small "
        "solve) and the forms A^T x, small per-run linear algebra that the NumPy loop does in "
        "LAPACK calls of the same size. Fix: a GPU (852x there)."
    ),
    "fpege-gd": (
        _STREAM + "Its tracker steps only on exploration rounds (a cond on the round index); "
        "it ran 2.8x NumPy while every round's horizon guard copied its (capacity,) history, "
        "3.3x slower than now. Fix: a GPU (120x there)."
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
        "random numbers are the round: for 256 runs the stream's 64 normals per run take about "
        "0.47 ms and the k = 8 Floyd draws 0.37 ms (each timed apart, with its call overhead) "
        "against a 0.5-0.8 ms round; "
        "threefry costs 20-30 ns per number here against a few ns for NumPy's PCG64, and the "
        "NumPy loop is little else than those draws (harness_share about 0.55). The ratio moved "
        "7-22x across five invocations (oslr 2.4e5-5.1e5 run-rounds/s, NumPy 23k-47k "
        "rounds/s). Tried: the `rbg` key implementation is no faster under vmap (uniforms 0.45 "
        "vs 0.76 ms, Laplace 3x slower). Fix: a GPU (401x there), or fewer random numbers per "
        "round in the stream."
    ),
    "ftpsl": (
        "the table \"FTPSL's round, piece by piece\" (`python -m benchmarks.ftpsl_round 256`, "
        "a 6.9 ms round of 256 runs there, harness_share 0.03) splits it: the M + 1 = 11 "
        "perturbation draws' threefry words and Laplace transform 3.3 ms; one resample draw "
        "0.43 ms (its noise 0.30 ms, the rest its score and the rank test of the 10 selected "
        "coordinates, 10 x 123 comparisons); a round of ftpl-random-subset on the same stream "
        "(the harness and a cheap play) 0.89 ms. Of three exact "
        "membership tests the rank test is the fastest (a 6.9 ms round, against 12.7 ms by "
        "`lax.top_k`'s indices and 13.6 ms by whole masks). Tried: dropping the tie term (no "
        "faster); the `rbg` keys (no faster under vmap, see uniform-subset, and their batching "
        "rule draws a batch from one key, so vmap would no longer equal a loop). Fix: fewer "
        "resamples where the theory allows (M enters linearly) or a GPU; on this CPU the "
        "threefry words and the comparisons bound the round."
    ),
    "ftpsl-delayed": (
        "the same round as ftpsl (the play's selection, 10 resample draws of 124 threefry words "
        "and a rank test each) plus an (8, 123) ring-buffer update per run. Fix: as for ftpsl."
    ),
    "linucb": (
        "on these fixed arms LinUCB runs its O(K d) form (u_a = A^-1 x_a, widths and means "
        "updated by Sherman-Morrison; no d x d state), and so does the NumPy loop. A round of "
        "1024 runs takes about 1 ms: measured apart, the update 0.47-0.52 ms (a gather of u_j, "
        "c = X v and the (K, d) rank-1 step: elementwise passes over the (runs, K, d) state, "
        "memory-bound at a few GFLOP/s; one-hot forms of the gathers measured 0.58-0.82 ms), the "
        "UCB argmax 0.11 ms, and the stream and the harness the rest (threefry numbers for the "
        "K noises and the keys of each run-round). The 500x river target is met; 100x NumPy is "
        "not: the NumPy loop in the same O(K d) form runs 28k-30k rounds/s (14k-25k in the "
        "A^-1 form), and the harness alone is 0.6 of the round (harness_share): with a learner "
        "that cost nothing the ratio would be 1 / 0.6 = 1.7 times what it is, still short of "
        "100x. Fix: fewer random numbers per round in the stream, or a GPU."
    ),
    "eps-greedy": (
        "one Sherman-Morrison update and one A^-1 b per round (6 d^2 + 2 K d flops, 2.8k at "
        "d = 20): "
        + _RANK_ONE
        + "Fix: Woodbury block updates every B rounds (rank-B, BLAS-3); the 10x NumPy target is "
        "met."
    ),
    "flinucb-gd": _SGD,
    "flinucb-svrg": _SGD + "SVRG adds an O(n d) full gradient at rounds 1, 2, 4, 8, ...",
    "flinucb-sag": _SGD + "SAG adds a residual scatter into the (runs, capacity) table.",
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
