"""A study's settings as `oslr run` reads them from its flags and a TOML file (oslr.study.settings,
oslr.cli.run.study_of)."""

import json
from pathlib import Path

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


def _docs_key_table(text: str | None = None) -> str:
    """docs/extending.md's generated table of a study's keys (`text`: replace it)."""
    import re

    guide = Path(__file__).parents[2] / "docs" / "extending.md"
    pattern = r"(<!-- study-keys:start -->\n)(.*?)(\n<!-- study-keys:end -->)"
    if text is not None:
        guide.write_text(re.sub(pattern, lambda m: m.group(1) + text + m.group(3),
                                guide.read_text(), flags=re.S))
    return re.search(pattern, guide.read_text(), flags=re.S).group(2)


def test_key_table__the_docs_table_is_the_declarations():
    # regenerate with `python -m tests.study.test_settings`
    from oslr.study import key_table

    assert _docs_key_table() == key_table()


def test_declaration__every_flag_is_a_toml_key_and_a_study_field_and_the_reverse(tmp_path):
    import dataclasses

    import oslr
    from oslr.cli import make_parser
    from oslr.study import declared, load_config
    from oslr.study.settings import flag
    from oslr.study.sources import OPTION_FLAGS

    names = list(declared())
    assert [f.name for f in dataclasses.fields(oslr.Study)] == names  # the Study's fields
    sub = next(a for a in make_parser()._actions if a.dest == "command").choices["run"]
    by_dest = {a.dest: a for a in sub._actions}
    for name in names:  # each setting's flag, with its doc as help
        assert by_dest[name].option_strings == [flag(name)]
        assert " ".join(by_dest[name].help.split()).startswith(declared()[name].doc[:20])
    own = {"help", "config", "imports", "json", "no_plot", "axes", "no_progress", "progress",
           "distributed", "coordinator", "num_processes", "process_id"}
    assert set(by_dest) == set(names) | set(OPTION_FLAGS) | own  # and the reverse
    # each is a TOML key a file may give (a table where the setting is one)
    lines = []
    for name, s in declared().items():
        value = {"problem": '"sparse-linear"', "learners": '["ogd-full"]', "out": '"o"',
                 "compare_to": '"best"', "until": '"separated"', "max_memory": '"4G"',
                 "bounds": "[-1.0, 1.0]", "normal": "true", "variance": "2.0",
                 "comparator_radius": "1.5"}.get(name, "3")
        entry = {"values": "x = [1]", "value": "y = 1"}.get(s.table, "x = 1")
        lines.append(f"[{name}]\n{entry}" if s.table else f"{name} = {value}")
    lines.sort(key=lambda line: line.startswith("["))  # the tables last
    (tmp_path / "all.toml").write_text("\n".join(lines) + "\n")
    assert set(load_config(tmp_path / "all.toml")) == set(names)
    study = oslr.Study.from_toml(tmp_path / "all.toml")  # and a Study takes every one of them
    assert (study.comparator_radius, study.max_memory, study.bounds) == (1.5, "4G", [-1.0, 1.0])


def test_cli_run__holds_no_list_of_study_keys():
    # oslr run's module reads every setting from the declaration: no literal tuple, list, set
    # or dict in it names two settings
    import ast

    from oslr.cli import run
    from oslr.study import declared

    names = set(declared())
    for node in ast.walk(ast.parse(Path(run.__file__).read_text())):
        if isinstance(node, (ast.Tuple, ast.List, ast.Set, ast.Dict)):
            items = node.keys if isinstance(node, ast.Dict) else node.elts
            said = {i.value for i in items if isinstance(i, ast.Constant)} & names
            assert len(said) < 2, ast.unparse(node)


if __name__ == "__main__":  # regenerate docs/extending.md's table of a study's keys
    from oslr.study import key_table

    _docs_key_table(key_table())


def test_study_of__a_flag_wins_over_the_files_entry_of_the_same_name(tmp_path):
    cfg = tmp_path / "s.toml"
    cfg.write_text('learners = ["ogd-full"]\n[problem_options]\nd = 7\n[params]\neta = 0.5\n'
                   "[grid]\nk = [2]\n")
    study = _study("--config", str(cfg), "--set", "eta=0.1", "--d", "9", "--grid", "k=3,4",
                   "--learners", "ogd-random-subset")
    assert study.params == {"eta": 0.1} and study.problem_options["d"] == 9
    assert study.grid == {"k": [3, 4]}
    # the file's other entries stay
    study = _study("--config", str(cfg), "--set", "zeta=1")
    assert study.params == {"eta": 0.5, "zeta": 1} and study.grid == {"k": [2]}


def test_study_of__an_entry_is_named_where_it_was_given(tmp_path, capsys):
    cfg = tmp_path / "s.toml"
    cfg.write_text('learners = ["ogd-full"]\n[params]\neta = 0.5\n')
    out = tmp_path / "o"
    assert main(["run", "--config", str(cfg), "--set", "zzz=1", "--out", str(out)]) == 2
    assert capsys.readouterr().err == ("oslr: error: --set zzz: 'zzz' is not a parameter of any "
                                       "chosen learner (ogd-full); see `oslr list`.\n")
    cfg.write_text('learners = ["ogd-full"]\n[params]\nzzz = 0.5\n')
    assert main(["run", "--config", str(cfg), "--set", "eta=0.1", "--out", str(out)]) == 2
    assert capsys.readouterr().err == (f"oslr: error: {cfg}: [params] zzz: 'zzz' is not a "
                                       "parameter of any chosen learner (ogd-full); see `oslr "
                                       "list`.\n")
    assert not out.exists()
