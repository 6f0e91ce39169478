"""A study's settings as `oslr run` reads them from its flags and a TOML file (oslr.study.settings, oslr.cli.run.study_of)."""

import json

from oslr.cli import main
from tests.cli.helpers import _study, _small


def test_study_of__every_problem_flag_reaches_the_problem_options():
    study = _study("--d", "9", "--k", "3", "--sigma", "0.2", "--design", "correlated",
                   "--n-redundant", "4", "--n-arms", "6", "--delays", "fixed", "--max-delay",
                   "3", "--cycle")
    assert study.problem_options == {
        "d": 9, "k": 3, "sigma": 0.2, "design": "correlated", "n_redundant": 4, "n_arms": 6,
        "delays": "fixed", "max_delay": 3, "cycle": True}
    # --problem-option reads each value as the problem declares it
    study = _study("--problem", "switching", "--problem-option", "period=7",
                   "--problem-option", "sigma=1", "--problem-option", "clip_y=true")
    assert study.problem_options == {"period": 7, "sigma": 1.0, "clip_y": True}
    assert [type(study.problem_options[k]) for k in ("period", "sigma", "clip_y")] == [
        int, float, bool]


def test_study_of__another_problem_on_the_command_line_drops_the_configs_settings(tmp_path):
    from oslr.study import DEFAULT_STUDY

    cfg = tmp_path / "study.toml"
    cfg.write_text('problem = "sparse-linear"\nlearners = ["ogd-full"]\n'
                   '[problem_options]\nd = 7\n[params]\neta = 0.5\n')
    study = _study("--config", str(cfg))
    assert study.params == {"eta": 0.5} and study.problem_options["d"] == 7
    # the config's params and options were for its problem: another one starts afresh
    study = _study("--config", str(cfg), "--problem", "linear-bandit")
    assert study.params == {} and study.problem_options == {}
    # the default study's own settings go as soon as the user describes a study
    assert DEFAULT_STUDY["params"] == {"k": 4}
    assert _study("--learners", "ogd-full").params == {}
    assert _study().params == {"k": 4}


def test_study_of__an_integral_float_count_in_the_config_is_an_integer(tmp_path):
    cfg = tmp_path / "s.toml"
    cfg.write_text("horizon = 2e3\nruns = 4.0\nchunk = 5e2\nseed = 1e1\n")
    study = _study("--config", str(cfg))
    assert (study.horizon, study.runs, study.chunk, study.seed) == (2000, 4, 500, 10)
    assert all(type(getattr(study, k)) is int for k in ("horizon", "runs", "chunk", "seed"))


def test_study_of__the_default_sparsities_fit_a_small_d_and_config_keys_are_checked(
        tmp_path, capsys):
    from oslr.study import declared

    for d, k in [(3, 3), (2, 2), (16, 4)]:
        study = _study("--d", str(d))
        assert study.params["k"] == k and study.problem_options["k"] == min(3, d)
    # a config may name every setting, the comparator's k and radius and max_memory too
    cfg = tmp_path / "s.toml"
    cfg.write_text("comparator_k = 2\ncomparator_radius = 1.0\nmax_memory = '4G'\n")
    study = _study("--config", str(cfg))
    assert (study.comparator_k, study.comparator_radius, study.max_memory) == (2, 1.0, "4G")
    cfg.write_text("horizon = 10\nzzz = 1\n")
    assert main(["run", "--config", str(cfg)]) == 2
    assert capsys.readouterr().err == (
        f"oslr: error: {cfg}: unknown key(s) ['zzz']; a study's keys: {list(declared())}.\n")
    # --json: one JSON record per row, indented by one space
    assert main([*_small(), "--out", str(tmp_path / "j")]) == 0
    assert capsys.readouterr().out.startswith('[\n {\n  "learner":"ogd-full",')
