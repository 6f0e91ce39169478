"""Learner specs (oslr.spec): declared params, one builder, one place for names and ranges."""

import jax.numpy as jnp
import numpy as np
import pytest

import oslr
from oslr.learners.ftpsl import KnapsackParams
from oslr.registry import LEARNERS
from oslr.spec import Ctx, LearnerSpec, Option, build_params, declared, param, register_params
from oslr.types import PREDICTION


@register_params
class _Demo:
    a: jnp.ndarray = param(jnp.float32, lambda c: 1.0 / c.d, lo=0.0, lo_open=True, doc="step")
    n: jnp.ndarray = param(jnp.int32, lambda c: 2 * int(c["a"] * c.d), lo=1, hi="max_n")
    mask: jnp.ndarray = param(jnp.bool_, lambda c: np.arange(c.d) < c["n"], sweepable=False,
                              shape="d")


def test_build_params__declared_dtypes_and_defaults_resolved_on_demand():
    p = build_params(_Demo, Ctx(d=4))
    assert (p.a.dtype, p.n.dtype, p.mask.dtype) == (jnp.float32, jnp.int32, jnp.bool_)
    assert float(p.a) == 0.25 and int(p.n) == 2  # n = 2 * int(0.25 * 4), from the field a
    np.testing.assert_array_equal(p.mask, [True, True, False, False])
    q = build_params(_Demo, Ctx(d=4), n=3)  # an override feeds the defaults that read it
    np.testing.assert_array_equal(q.mask, [True, True, True, False])


def test_build_params__a_float_param_follows_the_mode_an_int_keeps_its_dtype():
    import jax

    with jax.enable_x64(True):
        p = build_params(_Demo, Ctx(d=4), a=0.1)
        assert (p.a.dtype, p.n.dtype, p.mask.dtype) == (jnp.float64, jnp.int32, jnp.bool_)
        assert float(p.a) == 0.1  # the double itself, not a float32 widened
    assert build_params(_Demo, Ctx(d=4)).a.dtype == jnp.float32


def test_build_params__refuses_unknown_names_strings_and_wrong_shapes():
    with pytest.raises(ValueError, match=r"unknown parameter\(s\) \['b'\]; parameters: a, n, mask"):
        build_params(_Demo, 4, b=1.0)
    with pytest.raises(ValueError, match="must be a number"):
        build_params(_Demo, 4, a="abc")
    with pytest.raises(ValueError, match=r"shape \(4,\)"):
        build_params(_Demo, 4, mask=np.ones(3, bool))


def _spec(**kw):
    def factory(d, max_n=5, mode="x"):
        return oslr.Learner(init=None, step=None, family=PREDICTION, budget=None, name="demo")

    return LearnerSpec(name="demo", family=PREDICTION, description="", factory=factory,
                       params=_Demo,
                       options=(Option("max_n", 5), Option("mode", "x", "", ("x", "y"))), **kw)


def test_spec_make__splits_options_from_params_and_checks_declared_ranges():
    learner, params = _spec().make(4, max_n=3, n=3)
    learner.check(params, 4)
    _, too_big = _spec().make(4, max_n=3, n=4)
    with pytest.raises(ValueError, match=r"demo: parameter n=\[4\] is out of range \[1, 3\]"):
        learner.check(too_big, 4)
    with pytest.raises(ValueError, match=r"static options: max_n, mode"):
        _spec().make(4, nope=1)
    with pytest.raises(ValueError, match=r"option mode='z' is not one of \['x', 'y'\]"):
        _spec().make(4, mode="z")


def test_spec__fixed_fields_are_pinned_and_not_swept():
    spec = _spec(fixed={"n": 1})
    assert spec.sweepable == ("a",) and "n" not in spec.param_names
    with pytest.raises(ValueError, match="fixed by this learner"):
        spec.make(4, n=2)
    assert int(spec.make(4)[1].n) == 1


def test_spec__alt_params_differ_from_the_defaults_with_the_same_shapes():
    for name in LEARNERS:
        spec = LEARNERS[name]
        a, b = spec.default_params(8), spec.alt_params(8)
        leaves_a, leaves_b = declared(type(a)), declared(type(b))
        assert leaves_a == leaves_b
        assert any(not np.array_equal(np.asarray(getattr(a, f)), np.asarray(getattr(b, f)))
                   for f in leaves_a), name
        for f in leaves_a:
            assert np.shape(getattr(a, f)) == np.shape(getattr(b, f)), (name, f)


def test_registered_defaults__pinned_to_hand_computed_values():
    # ogd: eta = 0.5 / d, k = d // 4; ftpsl-delayed: c0 = 2; knapsack: k = budget // min cost;
    # fols-gd inside fPEGE: c = 6 d; linucb variants: the tracker defaults (svrg: 0.1 / L)
    assert float(oslr.make("ogd-random-subset", d=20)[1].eta) == pytest.approx(0.025)
    assert int(oslr.make("ogd-random-subset", d=20)[1].k) == 5
    assert int(oslr.make("ogd-full", d=20)[1].k) == 20
    assert float(oslr.make("ftpsl-delayed", d=8)[1].c0) == 2.0
    assert float(oslr.make("ftpsl", d=8, horizon=777)[1].horizon) == 777.0
    kp = oslr.make("ftpsl-knapsack", d=8, costs=[2, 3, 2, 5, 4, 2, 6, 3], budget=7)[1]
    assert isinstance(kp, KnapsackParams) and int(kp.k) == 3  # 7 // 2
    assert float(oslr.make("fpege-gd", d=5)[1].c_gamma) == 30.0
    assert float(oslr.make("flinucb-svrg", d=5)[1].step_scale) == pytest.approx(0.1)
    assert float(oslr.make("linucb", d=5)[1].lam0) == 1.0
    assert LEARNERS["flinucb-gd"].make(5, n_arms=7)[0].requires.n_arms == 7


def test_list_learners__shows_defaults_and_ranges_from_the_declaration():
    rows = {r["name"]: r for r in oslr.list_learners(d=16)}
    k = next(p for p in rows["ogd-random-subset"]["params"] if p["name"] == "k")
    assert (k["default"], k["range"], k["sweepable"]) == (4, "[1, 16]", True)
    eta = next(p for p in rows["ogd-full"]["params"] if p["name"] == "eta")
    assert (eta["default"], eta["range"]) == (pytest.approx(0.5 / 16), "(0, inf)")
    assert [p["name"] for p in rows["ogd-full"]["params"]] == ["eta", "radius"]  # k pinned
    costs = next(p for p in rows["ftpsl-knapsack"]["params"] if p["name"] == "costs")
    assert costs["sweepable"] is False
    assert {o["name"] for o in rows["linucb"]["options"]} >= {"n_arms", "horizon", "history"}


# ------------------------------------------------------------ declarations and specs, pinned
def test_param__declares_the_leaf_with_closed_bounds_by_default():
    from oslr.spec import _META, param

    f = param(jnp.float32, 1.0, lo=0.5, hi=2.0, doc="x")
    p = f.metadata[_META]
    assert (p.default, p.sweepable, p.lo, p.hi, p.lo_open, p.hi_open, p.doc, p.shape) == (
        1.0, True, 0.5, 2.0, False, False, "x", None)
    q = param(jnp.int32, 2, sweepable=False, lo=1, lo_open=True, hi_open=True).metadata[_META]
    assert (q.sweepable, q.lo, q.hi, q.lo_open, q.hi_open) == (False, 1, None, True, True)


def test_ctx_bound__numbers_names_and_functions_of_the_context():
    from oslr.spec import Ctx

    ctx = Ctx(d=6, options={"max_k": 3})
    assert (ctx.bound(2), ctx.bound("d"), ctx.bound("max_k"), ctx.bound(lambda c: c.d - 1)) == (
        2, 6, 3, 5)


def test_learner_spec_make__max_k_bounds_options_recorded_and_the_learners_own_check():
    from oslr.registry import LEARNERS

    spec = LEARNERS["ogd-random-subset"]
    learner, _ = spec.make(6, max_k=1)  # the smallest bound
    assert learner.options == {"max_k": 1}
    for bad in (0, 7):
        with pytest.raises(ValueError, match=rf"^max_k={bad} must satisfy 1 <= max_k <= d=6\.$"):
            spec.make(6, max_k=bad)
    # the spec's check runs the declared ranges, then the learner's own check on the params
    import dataclasses

    oracle, params = LEARNERS["ftpl-oracle-subset"].make(6, k=2)
    oracle.check(params, 6)
    with pytest.raises(ValueError, match="the subset mask must hold exactly k entries"):
        oracle.check(dataclasses.replace(params, subset=jnp.ones(6, bool)), 6)


def test_learner_spec_describe__derived_defaults_docs_and_choices():
    from oslr.registry import LEARNERS

    text = LEARNERS["flinucb-gd"].describe()
    options = {o["name"]: o for o in text["options"]}
    assert options["horizon"]["default"] == "derived"
    assert options["schedule"]["choices"] == [None, "power", "kpm"]
    assert "choices" not in options["track"]
    params = {p["name"]: p for p in text["params"]}
    assert params["c_gamma"]["doc"] == "step constant c of gamma_n"
    assert LEARNERS["ogd-full"].describe()["params"][0]["default"] == "derived"  # eta = 0.5 / d


def test_experiment_spec__options_of_every_learner_and_its_description():
    from oslr.spec import ExperimentSpec

    spec = ExperimentSpec("x", "an experiment", lambda a: None,
                          learners=("ogd-random-subset", "linucb"))
    from oslr.registry import LEARNERS

    spec.check_options({"eta": 0.1, "kappa": 2.0}, LEARNERS)  # one from each learner
    with pytest.raises(ValueError, match=r"^experiment x does not take \['zz'\]"):
        spec.check_options({"zz": 1}, LEARNERS)
    assert spec.describe()["learners"] == ["ogd-random-subset", "linucb"]
    assert ExperimentSpec("y", "", lambda a: None, learners=None).describe()["learners"] is None


def test_build_params__a_fractional_count_is_refused_naming_the_field():
    from oslr.learners.ogd import OgdParams

    with pytest.raises(ValueError, match=r"k=2\.5 must be a whole number"):
        build_params(OgdParams, 6, {}, k=2.5)
    assert int(build_params(OgdParams, 6, {}, k=2).k) == 2


# ------------------------------------------------- a declared option of a learner or a problem

def test_option_check__types_and_ranges_at_their_edges():
    number = Option("x", 0.5, "a share", type=float, lo=0.0, hi=1.0)
    assert number.check(1, {}, "p") == 1.0 and type(number.check(1, {}, "p")) is float
    assert number.check(np.float32(0.25), {}, "p") == 0.25  # a NumPy number as Python's
    for edge in (0.0, 1.0):  # the bounds themselves are in range
        assert number.check(edge, {}, "p") == edge
    for bad in (float("nan"), -1e-9, 1.0 + 1e-9, float("inf")):
        with pytest.raises(ValueError, match=r"^p: option x=.* is out of range \[0, 1\] "
                                             r"\(a share\)\.$"):
            number.check(bad, {}, "p")
    count = Option("n", 2, "a count", type=int, lo=1, hi="d")
    assert count.check(np.int64(3), {"d": 3}, "p") == 3
    with pytest.raises(ValueError, match=r"option n=4 is out of range \[1, d=3\]"):
        count.check(4, {"d": 3}, "p")  # a bound named by another option: its value
    for flag in (True, False, np.bool_(True)):  # a bool is no number
        for option in (number, count):
            with pytest.raises(ValueError, match=r"must be of type (float|int)"):
                option.check(flag, {"d": 3}, "p")
    with pytest.raises(ValueError, match=r"option n=2\.0 must be of type int"):
        count.check(2.0, {"d": 3}, "p")
    switch = Option("on", False, "a switch", type=bool)
    assert switch.check(np.bool_(True), {}, "p") is True
    with pytest.raises(ValueError, match=r"option on=1 must be of type bool"):
        switch.check(1, {}, "p")
    choice = Option("mode", "a", "a mode", ("a", "b"), str)
    with pytest.raises(ValueError, match=r"^p: option mode='c' is not one of \['a', 'b'\]\.$"):
        choice.check("c", {}, "p")


@pytest.mark.parametrize("text,value", [("true", True), ("TRUE", True), ("1", True),
                                        ("false", False), ("False", False), ("0", False)])
def test_option_parse__a_bool_from_its_text(text, value):
    assert Option("on", False, type=bool).parse(text) is value


def test_option_parse__each_declared_type_and_a_refusal():
    assert Option("on", False, type=bool).parse("1") is True
    with pytest.raises(ValueError, match=r"option on='yes' must be true or false"):
        Option("on", False, type=bool).parse("yes")
    assert Option("n", 2, type=int).parse("1e3") == 1000
    assert type(Option("x", 0.5, type=float).parse("2")) is float
    assert Option("s", "a", type=str).parse("0") == "0"
    assert Option("n", 2).parse("7") == 7  # no type: the default's
    with pytest.raises(ValueError, match=r"option n='2\.5' must be a whole number"):
        Option("n", 2, type=int).parse("2.5")


def test_problem_spec_make__a_bound_named_by_another_option_reads_the_given_value():
    problem, pp = oslr.make_problem("sparse-linear", d=20, k=18)  # k <= the given d, not 16
    assert problem.d == 20 and int(pp.k) == 18
    with pytest.raises(ValueError, match=r"option k=18 is out of range \[1, d=16\]"):
        oslr.make_problem("sparse-linear", k=18)  # the default d where none is given


def test_problems__declared_ranges_of_their_sparsities_and_comparators():
    from oslr.registry import PROBLEMS

    ranges = {(n, o.name): o.range_text() for n in ("sparse-linear", "set-cover", "ito-synthetic")
              for o in PROBLEMS[n].options if o.name == "k"}
    assert set(ranges.values()) == {"[1, d]"}
    # set-cover: k up to d by its declaration; the factory's own check asks k <= m too
    with pytest.raises(ValueError, match=r"^cover size k=15 must satisfy 1 <= k <= min\(d=20, "
                                         r"m=12\)"):
        oslr.make_problem("set-cover", d=20, k=15, m=12)
    # each synthetic stream's comparator is w*'s own sparsity, the params' k
    for name in ("sparse-linear", "agnostic", "drifting", "switching", "ito-synthetic"):
        problem, pp = oslr.make_problem(name, d=12, k=3)
        assert problem.sparsity == "k" and problem.comparator_sparsity(pp) == 3
