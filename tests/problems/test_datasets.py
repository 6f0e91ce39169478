import shutil
from importlib import resources

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import oslr
from oslr.primitives.permutation import ROUNDS, permute
from oslr.problems import datasets

EXPECTED = {
    "a9a": (48_842, 123),
    "connect4": (61_108, 126),
    "covtype": (58_100, 54),
    "mnist35": (13_454, 784),
    "kegg": (63_608, 26),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_dataset__shape_labels_and_scaling(name):
    x, y = datasets.load_dataset(name)
    assert x.shape == EXPECTED[name] and y.shape == (EXPECTED[name][0],)
    assert x.dtype == np.float32 and np.isfinite(x).all()
    assert np.abs(x).max() <= 1.0 + 1e-6
    if name == "kegg":
        assert np.linalg.norm(x, axis=1).max() == pytest.approx(1.0, rel=1e-5)
        assert np.abs(y).max() == pytest.approx(1.0)
    else:
        assert set(np.unique(y).tolist()) == {-1.0, 1.0}


def test_dataset__column_scaling():
    x, y = datasets.load_dataset("kegg")
    p = datasets.dataset_params("kegg", scale="columns")
    xc = np.asarray(p.x, np.float64)
    # each column is x_j / max |x_j|, then every row is divided by the same largest row norm c
    col = np.abs(x.astype(np.float64)).max(axis=0)
    c = np.linalg.norm(x / col, axis=1).max()
    np.testing.assert_allclose(xc, x / col / c, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(np.abs(xc).max(axis=0), 1.0 / c, rtol=1e-5)
    assert np.linalg.norm(xc, axis=1).max() == pytest.approx(1.0, rel=1e-5)
    np.testing.assert_array_equal(np.asarray(p.y), y)
    with pytest.raises(ValueError, match="dataset kegg: scale='rows'"):
        datasets.dataset_params("kegg", scale="rows")


def test_dataset__tune_and_eval_halves_are_disjoint_equal_and_on_one_scale():
    x, y = datasets.load_dataset("a9a")
    n = len(y)
    tune, ev = datasets.part_rows(n, "tune"), datasets.part_rows(n, "eval")
    assert len(tune) == len(ev) == n // 2 and not set(tune) & set(ev)
    np.testing.assert_array_equal(datasets.part_rows(n, "all"), np.arange(n))
    full = datasets.dataset_params("a9a", scale="columns")
    half = datasets.dataset_params("a9a", scale="columns", part="eval")
    np.testing.assert_array_equal(np.asarray(half.x), np.asarray(full.x)[ev])  # the same scale
    np.testing.assert_array_equal(np.asarray(half.y), y[ev])
    # a replay of the eval half shows only its rows, each once in its first n // 2 rounds
    problem, pp = oslr.make_problem("a9a", part="eval")
    assert problem.n_rows == n // 2 and problem.info["part"] == "eval"
    state = problem.init(jax.random.key(3), pp)
    rows = np.asarray(permute(state.keys, jnp.arange(n // 2), n // 2))
    assert sorted(rows.tolist()) == list(range(n // 2))
    _, ex = problem.sample(jax.random.key(0), state, jnp.asarray(5), pp)
    np.testing.assert_array_equal(np.asarray(ex.x), x[ev][rows[5]])
    with pytest.raises(ValueError, match=r"option part='test' is not one of \['all', 'tune', "
                                         r"'eval'\]"):
        oslr.make_problem("a9a", part="test")
    with pytest.raises(ValueError, match="part='test' is not one of all, tune, eval"):
        datasets.dataset_params("a9a", part="test")  # the builder's own check behind it


def test_dataset__class_counts_match_the_sources():
    _, y = datasets.load_dataset("connect4")
    assert (y == 1).sum() == 44_473 and (y == -1).sum() == 16_635
    _, y = datasets.load_dataset("mnist35")
    assert (y == 1).sum() == 7_141 and (y == -1).sum() == 6_313
    _, y = datasets.load_dataset("a9a")
    assert (y == 1).sum() == 7_841 + 3_846


def test_dataset__missing_and_corrupt_files_name_the_file_and_the_fix(tmp_path, monkeypatch):
    monkeypatch.setenv("OSLR_DATA_DIR", str(tmp_path))
    with pytest.raises(datasets.DataError, match="mnist_3vs5.npz is missing.*git checkout"):
        datasets.data_path("mnist/mnist_3vs5.npz")
    (tmp_path / "mnist").mkdir()
    src = resources.files("oslr") / "data/mnist/mnist_3vs5.npz"
    shutil.copy(str(src), tmp_path / "mnist" / "mnist_3vs5.npz")
    with open(tmp_path / "mnist" / "mnist_3vs5.npz", "r+b") as f:
        f.seek(100)
        f.write(b"\x00\x01\x02")
    with pytest.raises(datasets.DataError, match="corrupt"):
        datasets.data_path("mnist/mnist_3vs5.npz")


def test_replay__each_run_is_a_permutation_shared_by_learners():
    problem, pp = oslr.make_problem("kegg")
    states = [problem.init(jax.random.key(s), pp) for s in (0, 1)]
    rows = jax.jit(jax.vmap(lambda st, t: problem.sample(jax.random.key(0), st, t, pp)[1].y,
                            (None, 0)))
    orders = [np.asarray(permute(s.keys, jnp.arange(problem.n_rows), problem.n_rows))
              for s in states]
    assert sorted(orders[0].tolist()) == list(range(problem.n_rows))
    assert not np.array_equal(orders[0], orders[1])
    _, ex = problem.sample(jax.random.key(5), states[0], jnp.int32(3), pp)
    x, y = datasets.load_dataset("kegg")
    np.testing.assert_array_equal(np.asarray(ex.x), x[orders[0][3]])
    assert float(ex.y) == y[orders[0][3]]
    # one pass shows every row once; a cycled horizon repeats the same order
    t = jnp.arange(2 * problem.n_rows, dtype=jnp.int32)
    ys = np.asarray(rows(states[0], t))
    np.testing.assert_array_equal(ys[: problem.n_rows], y[orders[0]])
    np.testing.assert_array_equal(ys[problem.n_rows:], ys[: problem.n_rows])
    # the state is the permutation's round keys: its size does not grow with the dataset
    assert sum(a.size for a in jax.tree.leaves(states[0])) == ROUNDS


def test_dataset_spec__factory_options_reach_the_problem_and_its_params():
    spec = datasets._spec("kegg")  # built again here: the registered one is built at import
    assert (spec.name, spec.kind) == ("kegg", "stream")
    problem, pp = spec.factory(cycle=True, n_redundant=2, delays="fixed", max_delay=3,
                               scale="columns", part="tune")
    n = 63_608 // 2
    assert (problem.d, problem.n_rows, problem.cycle, problem.max_delay) == (28, n, True, 3)
    assert problem.info["part"] == "tune" and problem.info["delay_schedule"] == "fixed"
    want = datasets.dataset_params("kegg", "columns", "tune")
    np.testing.assert_array_equal(np.asarray(pp.x), np.asarray(want.x))
    plain, _ = spec.factory()
    assert (plain.kind, plain.d, plain.cycle, plain.max_delay) == ("stream", 26, False, 1)
    assert plain.info == {"dataset": "kegg", "rows": 63_608}  # no part key for every row


def test_dataset__labels_float32_and_both_scales_the_same_dtype():
    from tests.helpers import x64

    x, y = datasets._svmlight([datasets.data_path("a9a/a9a.t.gz")], 123)  # not the cache
    assert x.dtype == y.dtype == np.float32 and x.shape == (len(y), 123)
    x, y = datasets.load_dataset("kegg")
    assert x.dtype == y.dtype == np.float32
    with x64():
        a = datasets.dataset_params("kegg", "default")
        b = datasets.dataset_params("kegg", "columns")
    assert a.x.dtype == b.x.dtype


def test_data_path__messages_name_the_provenance_and_both_digests(tmp_path, monkeypatch):
    import hashlib

    monkeypatch.setenv("OSLR_DATA_DIR", str(tmp_path))
    rel = "kegg-undirected/data.csv.gz"
    with pytest.raises(datasets.DataError, match=r"git checkout -- src/oslr/data` in a source "
                       r"checkout or reinstall oslr; see src/oslr/data/PROVENANCE\.md for its "
                       r"source\.$"):
        datasets.data_path(rel)
    (tmp_path / "kegg-undirected").mkdir()
    (tmp_path / rel).write_bytes(b"not the data")
    digest = hashlib.sha256(b"not the data").hexdigest()
    want = (f"is corrupt: sha256 {digest[:12]}... != expected "
            f"{datasets.CHECKSUMS[rel][:12]}.... ")
    with pytest.raises(datasets.DataError) as err:
        datasets.data_path(rel)
    assert want in str(err.value)
