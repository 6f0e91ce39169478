"""Replay of the vendored real datasets (docs/algorithms.md section 5) as labelled streams.

Each run replays the rows in its own random order (a keyed permutation computed on the fly from
the run's problem key, `primitives.permutation`: no per-run copy of the order), one row per round;
all learners in a comparison see the same order. The arrays travel as the
problem's params (broadcast, never batched), not as constants baked into the compiled program.

| id | rows x d | labels | preprocessing |
|---|---|---|---|
| a9a | 48,842 x 123 | +-1 | train + test, `n_features=123` |
| connect4 | 61,108 x 126 | +-1 | draws (label 0) dropped |
| covtype | 58,100 x 54 | +-1 | vendored fixed-seed subset; columns / max abs; y = 2y - 1 |
| mnist35 | 13,454 x 784 | +-1 | X / 255; digit 3 -> +1, 5 -> -1 |
| kegg | 63,608 x 26 | real | column 9 dropped; x / max row norm; y / max abs y |
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import os
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from oslr.checks import unknown_name
from oslr.primitives.permutation import permutation_keys, permute
from oslr.problems.delays import DELAY_OPTIONS, maybe_delayed
from oslr.problems.synthetic import add_redundant_features
from oslr.spec import Option, ProblemSpec
from oslr.types import Array, Problem, StreamExample

# file -> sha256 (see src/oslr/data/PROVENANCE.md)
CHECKSUMS = {
    "a9a/a9a.gz": "b301f3e87350539f3ebc751d07b4691a8c66f0bf38c1d179c86bbf5e2d9623b2",
    "a9a/a9a.t.gz": "92967561181c73a60149cc8221b936eb746573fda8cbf483115d673f42b26c3f",
    "connect-4/connect-4.libsvm.gz": (
        "6089ccd3872c0b411161b91ff2081043c0810472856c4ec41230ee5c48a25af1"
    ),
    "covtype-binary/covtype_binary_58100.npz": (
        "56804272d7dd73df55a92b7a2c2cf1ced073d7e5628cf5802536f01a77922287"
    ),
    "mnist/mnist_3vs5.npz": "be57307f72777d9ceabc27222ed62dbb234968593071e03acad180b9f6fcc216",
    "kegg-undirected/data.csv.gz": (
        "117419270e50f581df18bf996ffc8b6bf1bb76c9f3640331ac9d6e64cff63d4e"
    ),
    "obd/random/all/all.csv.gz": "e5f7284292d0a9906e54a1019a8c392cde0106610dbd6dff73af7b7836123bfc",
    "obd/random/all/item_context.csv.gz": (
        "d8e57e36f03fb5255865768e6ca003e20efd60013ec5125b233135bf64148da0"
    ),
    "obd/random/men/men.csv.gz": "1d506bbe0c2fef46e42cdcb1f84f60d965daa6bb16b3e560e92b5bfd58c29da6",
    "obd/random/men/item_context.csv.gz": (
        "d7e13dd33f628425840b214e2c3c58cfa5a2bd71d05749f7ad2fc60efbb93f88"
    ),
    "obd/random/women/women.csv.gz": (
        "83e9f38cd0246c73a765206adb8829a28d66b8aed5d3c42b64b49b997ad48c7a"
    ),
    "obd/random/women/item_context.csv.gz": (
        "ff9bce665250160bb6c1c261d9328eed87a5bb760303a3d4059db465746d4b4d"
    ),
}

DATASETS = ("a9a", "connect4", "covtype", "mnist35", "kegg")


class DataError(RuntimeError):
    """A vendored data file is missing, corrupt or unreadable."""


def data_dir() -> Path:
    """Folder holding the vendored files (override with the OSLR_DATA_DIR environment variable)."""
    env = os.environ.get("OSLR_DATA_DIR")
    return Path(env) if env else Path(str(resources.files("oslr") / "data"))


def data_path(rel: str, root: Path | None = None) -> Path:
    """Absolute path of a vendored file, after checking that it exists and its sha256 matches."""
    path = (root or data_dir()) / rel
    fix = (
        "Restore it with `git checkout -- src/oslr/data` in a source checkout or reinstall oslr; "
        "see src/oslr/data/PROVENANCE.md for its source."
    )
    if not path.is_file():
        raise DataError(f"dataset file {path} is missing. {fix}")
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest != CHECKSUMS[rel]:
        raise DataError(
            f"dataset file {path} is corrupt: sha256 {digest[:12]}... != expected "
            f"{CHECKSUMS[rel][:12]}.... {fix}"
        )
    return path


def _svmlight(paths: list[Path], n_features: int) -> tuple[np.ndarray, np.ndarray]:
    try:
        from sklearn.datasets import load_svmlight_file
    except ImportError as err:  # pragma: no cover - depends on the environment
        raise DataError(
            "reading LIBSVM files needs scikit-learn: pip install 'oslr[data]'."
        ) from err
    xs, ys = [], []
    for p in paths:
        x, y = load_svmlight_file(str(p), n_features=n_features)
        xs.append(np.asarray(x.todense(), np.float32))
        ys.append(np.asarray(y, np.float32))
    return np.concatenate(xs), np.concatenate(ys)


def _check_finite(name: str, x: np.ndarray, y: np.ndarray) -> None:
    if not (np.isfinite(x).all() and np.isfinite(y).all()):
        raise DataError(f"dataset {name!r} contains NaN or inf after loading; the file is damaged.")


@functools.lru_cache(maxsize=None)
def load_dataset(name: str) -> tuple[np.ndarray, np.ndarray]:
    """Load and preprocess a vendored dataset.

    Args:
      name: one of `DATASETS`.

    Returns:
      x: (n, d) float32; y: (n,) float32. Read-only arrays (cached).
    """
    if name not in DATASETS:
        raise ValueError(unknown_name("dataset", name, DATASETS))
    if name == "a9a":
        x, y = _svmlight([data_path("a9a/a9a.gz"), data_path("a9a/a9a.t.gz")], 123)
    elif name == "connect4":
        x, y = _svmlight([data_path("connect-4/connect-4.libsvm.gz")], 126)
        keep = y != 0  # drop draws: 44,473 wins + 16,635 losses = 61,108 rows
        x, y = x[keep], y[keep]
    elif name == "covtype":
        with np.load(data_path("covtype-binary/covtype_binary_58100.npz")) as z:
            x = z["X"].astype(np.float32)
            y = 2.0 * z["y"].astype(np.float32) - 1.0
        col_max = np.abs(x).max(axis=0)
        x = x / np.where(col_max > 0, col_max, 1.0)
    elif name == "mnist35":
        with np.load(data_path("mnist/mnist_3vs5.npz")) as z:
            x = z["X"].astype(np.float32) / 255.0
            y = np.where(z["digit"] == 3, 1.0, -1.0).astype(np.float32)
    else:  # kegg
        with gzip.open(data_path("kegg-undirected/data.csv.gz"), "rt") as f:
            raw = np.loadtxt(f, delimiter=",", dtype=np.float64)
        x = np.delete(raw[:, :27], 9, axis=1)
        y = raw[:, 27]
        x = x / np.linalg.norm(x, axis=1).max()
        y = y / np.abs(y).max()
        x, y = x.astype(np.float32), y.astype(np.float32)
    _check_finite(name, x, y)
    x.setflags(write=False)
    y.setflags(write=False)
    return x, y


@jax.tree_util.register_dataclass
@dataclass(frozen=True)
class DatasetParams:
    """Attributes: x: (n, d) float32 rows; y: (n,) float32 labels (broadcast across runs)."""

    x: Array
    y: Array


SCALES = ("default", "columns")
#: Row sets of a dataset: every row, or one of two disjoint halves (`part_rows`), so that a
#: study can tune on one half and evaluate on the other.
PARTS = ("all", "tune", "eval")
#: Seed of the fixed split into halves (the same split in every study and run).
PART_SEED = 2026


def part_rows(n: int, part: str) -> np.ndarray:
    """Sorted row indices of `part` of n rows: all of them, or the first ("tune") or second
    ("eval") floor(n / 2) of one fixed random permutation (seed `PART_SEED`): disjoint halves
    of equal size (so a tuning and an evaluation study have the same shapes)."""
    if part not in PARTS:
        raise ValueError(f"part={part!r} is not one of {', '.join(PARTS)}.")
    if part == "all":
        return np.arange(n)
    half = n // 2
    order = np.random.default_rng(PART_SEED).permutation(n)
    return np.sort(order[:half] if part == "tune" else order[half:2 * half])


def dataset_params(name: str, scale: str = "default", part: str = "all") -> DatasetParams:
    """The preprocessed arrays of dataset `name` as problem params.

    scale: "default" (the table above) or "columns": each column divided by its largest |value|,
      then every row by the largest row norm (so ||x||_2 <= 1 with every feature on the same
      scale; on kegg the default leaves the median row at ||x|| = 0.005, this at 0.29).
    part: "all" rows, or the "tune" or "eval" half (`part_rows`); the scaling is that of the
      whole data, so both halves are on one scale.
    """
    if scale not in SCALES:
        raise ValueError(f"dataset {name}: scale={scale!r} is not one of {', '.join(SCALES)}.")
    x, y = load_dataset(name)
    if scale == "columns":
        col_max = np.abs(x).max(axis=0)
        x = x / np.where(col_max > 0, col_max, 1.0)
        x = (x / np.linalg.norm(x, axis=1).max()).astype(np.float32)
    rows = part_rows(len(y), part)
    return DatasetParams(x=jnp.asarray(x[rows]), y=jnp.asarray(y[rows]))


class ReplayState(NamedTuple):
    """Attributes: keys: (ROUNDS,) uint32, the round keys of this run's permutation of the rows
    (round t shows row permute(keys, t mod n, n); 96 bytes a run whatever n)."""

    keys: Array


def dataset_replay(name: str, cycle: bool = False, part: str = "all") -> Problem:
    """Replay dataset `name`, shuffled per run; round t shows row pi(t mod n), pi the run's keyed
    permutation of the rows (`primitives.permutation.permute`).

    Args:
      name: one of `DATASETS`.
      cycle: allow horizons longer than the dataset (rows repeat in the same order).
      part: "all" rows or one half ("tune", "eval": `part_rows`); its params must be
        `dataset_params(name, ..., part)`.
    """
    x, _ = load_dataset(name)
    n, d = len(part_rows(x.shape[0], part)), x.shape[1]

    def init(key: Array, params: DatasetParams) -> ReplayState:
        del params
        return ReplayState(keys=permutation_keys(key))

    def sample(key: Array, state: ReplayState, t: Array, params: DatasetParams):
        del key
        row = permute(state.keys, jnp.mod(t, n), n)
        y = params.y[row]
        return state, StreamExample(x=params.x[row], y=y, y_clean=y)

    return Problem(
        init=init,
        sample=sample,
        kind="stream",
        d=d,
        name=name,
        n_rows=n,
        cycle=cycle,
        info={"dataset": name, "rows": n, **({} if part == "all" else {"part": part})},
    )


# --------------------------------------------------------------------------- registered problems

_DATASET_TEXT = {
    "a9a": "LIBSVM a9a (UCI Adult), 48,842 x 123, +-1 labels",
    "connect4": "UCI Connect-4 one-hot without draws, 61,108 x 126, +-1 labels",
    "covtype": "covtype.binary fixed-seed subset, 58,100 x 54, +-1 labels",
    "mnist35": "MNIST 3 vs 5, 13,454 x 784, +-1 labels",
    "kegg": "UCI KEGG metabolic network (undirected), 63,608 x 26, real target",
}


def _spec(name: str) -> ProblemSpec:

    def factory(cycle: bool = False, n_redundant: int = 0, delays: str | None = None,
                max_delay: int = 1, scale: str = "default", part: str = "all"):
        problem = add_redundant_features(dataset_replay(name, cycle=cycle, part=part),
                                         n_redundant)
        return maybe_delayed(problem, delays, max_delay), dataset_params(name, scale, part)

    return ProblemSpec(name, "stream", f"replay of {_DATASET_TEXT[name]}", factory, (
        Option("cycle", False, "allow horizons longer than the data (rows repeat)", type=bool),
        Option("n_redundant", 0, "standard-normal features appended", type=int, lo=0),
        *DELAY_OPTIONS,
        Option("scale", "default", "the features' scale", SCALES, str),
        Option("part", "all", "all rows, or the tune or eval half", PARTS, str)))


A9A, CONNECT4, COVTYPE, MNIST35, KEGG = (_spec(n) for n in DATASETS)
