"""Paper experiments as functions and `oslr experiment NAME` ([WLL] in `wll`, [KPM] in `kpm`,
[FKK] in `foster`, [KKLP] in `kale`, [ITO] in `ito`; all of them on the same streams in
`arena`)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from oslr.experiments import arena as arena_mod
from oslr.experiments import foster, ito, kale, kpm
from oslr.experiments.kpm import (
    kpm_pege,
    kpm_replay,
    kpm_runtime,
    kpm_tracking,
    plot_curves,
    plot_runtime,
)
from oslr.experiments.wll import (
    WLL_C0S,
    WLL_ETA_SCALES,
    WLL_LEARNERS,
    WLL_RATIOS,
    WLL_RHOS,
    plot_experiment,
    plot_rate_sweep,
    wll_rate_sweep,
    wll_redundant,
    wll_reward_vs_k,
)

__all__ = [
    "ARENA_FULL", "ARENA_K", "ARENA_LONG", "ARENA_QUICK", "EXPERIMENTS", "WLL_C0S",
    "WLL_ETA_SCALES", "WLL_LEARNERS", "WLL_RATIOS", "WLL_RHOS",
    "kpm_pege", "kpm_replay", "kpm_runtime", "kpm_tracking", "plot_curves", "plot_experiment",
    "plot_rate_sweep", "plot_runtime", "run_arena", "run_experiment", "wll_rate_sweep",
    "wll_redundant", "wll_reward_vs_k",
]


EXPERIMENTS = {
    "wll-k": "FTPSL vs random/oracle-subset FTPL: cumulative reward against k/d ([WLL] Fig. 1a-d)",
    "wll-redundant": "the same against appended N(0,1) features ([WLL] Fig. 1e-f)",
    "wll-rates": "eta x gamma grid at k = 0.2 d, 100 shuffles per point, one vmapped call each",
    "kpm-tracking": "tracking error of fLinUCB-GD/-SVRG/-SAG on OBD, stream mode ([KPM] Fig. 2a-c)",
    "kpm-runtime": "ms per round of LinUCB (Sherman-Morrison) vs the SGD variants as d grows",
    "kpm-replay": "CTR of the SGD variants (and LinUCB) under OBD replay over a kappa grid",
    "kpm-pege": "PEGE vs fPEGE-GD pseudo-regret / sqrt(n) on the unit sphere",
    "foster-rate": "foster-hedge regret at T = 1e3..1e5 (k' sweep) vs sqrt(T) and Theorem 1, "
                   "beside the OGD references (E5)",
    "foster-hard": "every prediction learner on planted yes / no set-cover streams: loss vs the "
                   "T/(2mdk) decision line ([FKK] Alg. 2)",
    "ito-table1": "[ITO] Table 1: Alg 2, Alg 3, KKLP, KKLP_A (and Alg 1) regret at T = 5000, "
                  "5 and 100 instances, Fig. 1a, runtimes (E3)",
    "ito-real": "[ITO] Fig. 1b on kegg (standing in for CT): cumulative loss vs rounds, "
                "k in {4, 8, 13}, k' = k - 1, runtimes",
    "kale-calibrate": "the constant C of dantzig-poslr's lam_n: w* feasible at every solve in 95% "
                      "of E4 draws, per k0",
    "kale-dantzig": "dantzig-poslr regret vs log T and ||w_t - w*||_1 vs t, k0 in {10, 20, 50}, "
                    "RIP and correlated designs, LP share of the runtime (E4)",
    "kale-greedy": "online-greedy regret vs T (T^(2/3), Theorem 9) on agnostic streams, "
                   "d = 100 (R2) and d = 20 (R1) (E4)",
    "arena": "every limited-feature regressor on the same streams, equal tuning budget: "
             "leaderboard, regret curves with the theorems' bounds, growth exponents",
    "arena-k": "the arena's RIP stream over a k/d grid (k = 1, 2, 4 at d = 20, budget 10)",
    "arena-long": "the arena's RIP stream at T = 1e5 (budget 5): growth exponents over three "
                  "decades beside the theorems'",
}


#: The learners whose params and static options each experiment passes `--set` values to, and
#: the names the experiment sets itself (a `--set` of those would be overridden or clash).
_TAKES = {
    "wll-k": (WLL_LEARNERS, ("k", "max_k", "horizon")),
    "wll-redundant": (WLL_LEARNERS, ("k", "max_k", "horizon")),
    "wll-rates": (WLL_LEARNERS, ("k", "max_k", "horizon")),
    "kpm-tracking": (kpm.FAST, ("n_arms", "horizon", "history", "track")),
    "kpm-replay": (kpm.FAST, ("n_arms", "horizon", "history", "kappa")),
    "kpm-runtime": ((), ()),
    "kpm-pege": ((), ()),
    "foster-rate": (foster.RATE_LEARNERS, ("k", "k_query", "horizon")),
    "foster-hard": (None, ("k", "k_query", "horizon")),  # None: every prediction learner
    "ito-table1": ((), ()),
    "ito-real": ((), ()),
    "kale-calibrate": ((), ()),
    "kale-dantzig": (("dantzig-poslr",), ("k", "k0", "horizon")),
    "kale-greedy": (("online-greedy",), ("k", "k0", "horizon")),
    "arena": ((), ()),
    "arena-long": ((), ()),
    "arena-k": ((), ()),
}


def check_options(name: str, options: dict) -> None:
    """Refuse, before any work, `--set` names that no learner of experiment `name` takes."""
    from oslr.registry import LEARNERS

    learners, own = _TAKES[name]
    if learners is None:
        from oslr.types import PREDICTION

        learners = [n for n in LEARNERS if LEARNERS[n].family == PREDICTION]
    known: set[str] = {"hold_rates"} if name == "wll-redundant" else set()
    for learner in learners:
        known |= set(LEARNERS[learner].param_names) | set(LEARNERS[learner].option_names)
    clash = sorted(set(options) & set(own))
    if clash:
        raise ValueError(f"experiment {name} sets {clash} itself; remove them from --set.")
    unknown = sorted(set(options) - known)
    if unknown:
        takes = ", ".join(sorted(known - set(own))) or "no options"
        raise ValueError(f"experiment {name} does not take {unknown}; it takes: {takes}.")


def run_experiment(name: str, dataset: str, runs: int | None, seed: int, out: Path, quick: bool,
                   progress: bool, **options) -> pd.DataFrame:
    """Run experiment `name`, write `<name>-<dataset>.csv` and `.png` into `out`.

    `dataset` is the [WLL] dataset, or the OBD campaign (all, men, women) for kpm-tracking and
    kpm-replay. runs None: 5 shuffles for wll-k and wll-redundant (as in the paper), 100 for
    wll-rates, 2 for kpm-tracking, 10 for kpm-replay, 20 for kpm-pege.
    """
    if name not in EXPERIMENTS:
        raise ValueError(f"unknown experiment {name!r}; available: {', '.join(EXPERIMENTS)}.")
    check_options(name, options)
    if name.startswith("kpm-"):
        return _run_kpm(name, dataset, runs, seed, out, quick, progress, **options)
    if name.startswith("foster-"):
        return _run_foster(name, runs, seed, out, quick, progress, **options)
    if name.startswith("kale-"):
        return _run_kale(name, runs, seed, out, quick, progress, **options)
    if name.startswith("ito-"):
        return _run_ito(name, runs, seed, out, quick, progress)
    if name in ("arena", "arena-long", "arena-k"):
        sizes = {"arena": None,
                 "arena-long": ARENA_LONG if not quick else dict(ARENA_QUICK, horizon=3000),
                 "arena-k": ARENA_K if not quick else dict(ARENA_QUICK, ks=(1, 2))}[name]
        return run_arena(runs, seed, out, quick, progress, name=name, sizes=sizes)
    horizon = 5000 if quick else None
    if name == "wll-k":
        runs = runs or 5
        ratios = (0.1, 0.3, 0.5) if quick else WLL_RATIOS
        df = wll_reward_vs_k(dataset, ratios, runs, seed, horizon, progress=progress, **options)
        plot = lambda path, title: plot_experiment(df, "ratio", path, title)  # noqa: E731
    elif name == "wll-redundant":
        runs = runs or 5
        rhos = (0.5, 1.5) if quick else WLL_RHOS
        df = wll_redundant(dataset, rhos, runs=runs, seed=seed, horizon=horizon,
                           progress=progress, **options)
        plot = lambda path, title: plot_experiment(df, "rho", path, title)  # noqa: E731
    else:
        runs = runs or 100
        grids = ({"eta_scales": (1.0, 30.0), "c0s": (0.01, 1.0)} if quick else {})
        df = wll_rate_sweep(dataset, runs=runs, seed=seed, horizon=1000 if quick else 5000,
                            progress=progress, **grids, **options)
        plot = lambda path, title: plot_rate_sweep(df, path, title)  # noqa: E731
    out.mkdir(parents=True, exist_ok=True)
    stem = f"{name}-{dataset}"
    df.to_csv(out / f"{stem}.csv", index=False)
    try:
        import matplotlib.pyplot as plt

        fig = plot(out / f"{stem}.png", f"{dataset}: {runs} shuffles, T={df['horizon'].iloc[0]}")
        plt.close(fig)
    except ImportError:  # pragma: no cover - plotting is optional
        pass
    return df


def _run_kpm(name: str, campaign: str, runs: int | None, seed: int, out: Path, quick: bool,
             progress: bool, **options) -> pd.DataFrame:
    if name == "kpm-tracking":
        runs = runs or 2
        df = kpm.kpm_tracking(campaign, runs, 1000 if quick else None, seed=seed,
                              progress=progress, **options)
        plot = lambda p, t: kpm.plot_curves(df, "tracking_error", p, t)  # noqa: E731
        title = f"OBD {campaign}, stream mode: {runs} runs"
    elif name == "kpm-runtime":
        df = kpm.kpm_runtime((10, 30, 100) if quick else (10, 30, 100, 300, 1000),
                             horizon=200 if quick else 500)
        plot = lambda p, t: kpm.plot_runtime(df, p, t)  # noqa: E731
        title, campaign = "linear bandit, K = 10", "synthetic"
    elif name == "kpm-replay":
        runs = runs or 10
        df = kpm.kpm_replay(campaign, (0.3, 1.0) if quick else kpm.KAPPAS, runs, seed=seed,
                            progress=progress, **options)
        plot = None
        title = f"OBD {campaign} replay"
    else:
        runs = runs or 20
        df = kpm.kpm_pege((5, 10) if quick else (5, 10, 20, 50),
                          10_000 if quick else 100_000, runs, seed, progress)
        plot = lambda p, t: kpm.plot_curves(  # noqa: E731
            df, "regret_over_sqrt_n", p, t, by=("learner", "d"), logy=False,
            bound_label=kpm.PEGE_BOUND_LABEL)
        title, campaign = f"unit sphere: {runs} runs", "sphere"
    out.mkdir(parents=True, exist_ok=True)
    stem = f"{name}-{campaign}"
    df.to_csv(out / f"{stem}.csv", index=False)
    if plot is not None:
        try:
            import matplotlib.pyplot as plt

            plt.close(plot(out / f"{stem}.png", title))
        except ImportError:  # pragma: no cover - plotting is optional
            pass
    return df


def _run_foster(name: str, runs: int | None, seed: int, out: Path, quick: bool, progress: bool,
                **options) -> pd.DataFrame:
    if name == "foster-rate":
        runs = runs or 50
        df = foster.foster_rate((1_000, 3_000, 10_000) if quick else foster.HORIZONS,
                                (4, 6) if quick else foster.K_QUERIES, runs=runs, seed=seed,
                                progress=progress, **options)
        plot = foster.plot_rate
        title = (f"E5 stream (d=8, k=2, ||x||=1, ||w*||=1, sigma=0.1): {runs} runs per T, "
                 "95% bands")
    else:
        runs = runs or 20
        df = foster.foster_hard(horizon=2_000 if quick else 20_000, runs=runs,
                                instances=1 if quick else 3, seed=seed, progress=progress,
                                **options)
        plot = foster.plot_hard
        title = f"planted set cover (d=8, k=2, m=10, rho=0.3): {runs} runs, 95% bands"
    out.mkdir(parents=True, exist_ok=True)
    df.to_csv(out / f"{name}.csv", index=False)
    if name == "foster-hard":
        foster.hard_decisions(df).to_csv(out / f"{name}-decisions.csv", index=False)
    try:
        import matplotlib.pyplot as plt

        plt.close(plot(df, out / f"{name}.png", title))
    except ImportError:  # pragma: no cover - plotting is optional
        pass
    return df


def _run_kale(name: str, runs: int | None, seed: int, out: Path, quick: bool, progress: bool,
              **options) -> pd.DataFrame:
    out.mkdir(parents=True, exist_ok=True)
    if name == "kale-calibrate":
        df = kale.calibrate_c(horizon=2**10 if quick else 2**14, draws=runs or 200,
                              seed=kale.CALIBRATION_SEED + seed, progress=progress)
        df.to_csv(out / f"{name}.csv", index=False)
        return df
    if name == "kale-dantzig":
        runs = runs or 100
        horizon = 2**10 if quick else 2**14
        df = kale.kale_dantzig(horizon=horizon, runs=runs, seed=seed, progress=progress,
                               lp_share=not quick, **options)
        plot = kale.plot_dantzig
        title = (f"E4 (d=100, k=5, sigma=0.1): {runs} runs, 95% bands; dotted: correlated "
                 "design")
    else:
        runs = runs or 50
        df = kale.kale_greedy(horizons=(300, 1_000, 3_000) if quick else kale.GREEDY_HORIZONS,
                              runs=runs, seed=seed, progress=progress, **options)
        plot = kale.plot_greedy
        title = f"agnostic (10% flips): {runs} runs,"
    df.to_csv(out / f"{name}.csv", index=False)
    try:
        import matplotlib.pyplot as plt

        plt.close(plot(df, out / f"{name}.png", title))
    except ImportError:  # pragma: no cover - plotting is optional
        pass
    return df


def _run_ito(name: str, runs: int | None, seed: int, out: Path, quick: bool,
             progress: bool) -> pd.DataFrame:
    out.mkdir(parents=True, exist_ok=True)
    if name == "ito-table1":
        runs = runs or 100
        table, curves = ito.ito_table1(settings=ito.SETTINGS[:1] if quick else ito.SETTINGS,
                                       horizon=1000 if quick else 5000, runs=runs, seed=seed,
                                       progress=progress)
        table.to_csv(out / f"{name}.csv", index=False)
        curves.to_csv(out / f"{name}-curves.csv", index=False)
        plot = lambda path, title: ito.plot_fig1a(curves, path, title)  # noqa: E731
        title, df = "", table
    else:
        runs = runs or 5
        df = ito.ito_real(ks=(4,) if quick else (4, 8, 13), horizon=5000 if quick else None,
                          runs=runs, seed=seed, progress=progress)
        df.to_csv(out / f"{name}.csv", index=False)
        plot = lambda path, title: ito.plot_real(df, path, title)  # noqa: E731
        title = f"kegg (for CT), {runs} shuffles, 95% bands:"
    try:
        import matplotlib.pyplot as plt

        plt.close(plot(out / f"{name}.png", title))
    except ImportError:  # pragma: no cover - plotting is optional
        pass
    return df


#: The arena's sizes: full (docs/arena.md, about an hour and a half on a 2-core CPU), --quick
#: (the nine entrants on `rip`: under 2 minutes there, most of it compiling, about 10 s a cell;
#: with kegg too it took 3 min 24 s) and arena-long.
ARENA_FULL = dict(problems=("rip", "agnostic", "drifting", "correlated", "kegg", "a9a"), d=20,
                  k=2, budgets=(5, 10), horizon=20_000, runs=10)
ARENA_QUICK = dict(problems=("rip",), d=10, k=2, budgets=(5,), horizon=1000, runs=10)
ARENA_LONG = dict(problems=("rip",), d=20, k=2, budgets=(5,), horizon=100_000, runs=10)
#: The k/d grid: one arena per comparator sparsity k (`ks`), k = 2 as in ARENA_FULL.
ARENA_K = dict(problems=("rip",), d=20, ks=(1, 2, 4), budgets=(10,), horizon=20_000, runs=10)


def run_arena(runs: int | None, seed: int, out: Path, quick: bool, progress: bool,
              name: str = "arena", sizes: dict | None = None) -> pd.DataFrame:
    """`oslr experiment arena`: write NAME.csv / .json / .md, NAME-curves.csv, NAME-tuning.csv
    and one NAME-PROBLEM-bB.png per problem and budget into `out` (NAME: arena, arena-long or
    arena-k; arena-k runs one arena per k in sizes["ks"], its figures named
    NAME-PROBLEM-bB-kK.png)."""
    kw = dict(sizes or (ARENA_QUICK if quick else ARENA_FULL))
    if runs is not None:
        kw["runs"] = runs
    arena_mod.check_runs(kw["runs"])  # before the output folder is made
    out.mkdir(parents=True, exist_ok=True)
    ks, k_one = kw.pop("ks", None), kw.pop("k", 2)
    parts = []
    for k in ks or (k_one,):
        # finished cells are kept under out/NAME-cells: a rerun after an interruption resumes
        parts.append(arena_mod.arena(seed=seed, progress=progress, k=k,
                                     cells_dir=out / f"{name}-cells", **kw))
    board, curves, tuning = (pd.concat(frames, ignore_index=True) for frames in zip(*parts))
    if ks is not None:
        curves["k"] = np.concatenate([np.full(len(p[1]), k) for p, k in zip(parts, ks)])
    board.to_csv(out / f"{name}.csv", index=False)
    (out / f"{name}.json").write_text(board.to_json(orient="records", indent=1))
    (out / f"{name}.md").write_text(arena_mod.leaderboard_markdown(board))
    curves.to_csv(out / f"{name}-curves.csv", index=False)
    tuning.to_csv(out / f"{name}-tuning.csv", index=False)
    try:
        import matplotlib.pyplot as plt

        for (problem, budget, k), part in board[~arena_mod._skipped(board)].groupby(
                ["problem", "budget", "k"], sort=False):
            first = part.iloc[0]
            title = (f"{problem}: d={first['d']}, k={k}, budget {budget}, "
                     f"{first['runs']} runs, 95% bands; dashed: bounds")
            own = curves if ks is None else curves[curves["k"] == k]
            stem = f"{name}-{problem}-b{budget}" + ("" if ks is None else f"-k{k}")
            plt.close(arena_mod.plot_arena(own, problem, budget, out / f"{stem}.png", title))
    except ImportError:  # pragma: no cover - plotting is optional
        pass
    return board
