"""The `oslr` command itself: its parser, help texts, entry point, signals, backend and one-line
errors (oslr.cli, oslr.cli.parser)."""

import json
from pathlib import Path

import pytest

from oslr.cli import main
from tests.helpers import subprocess_env
from tests.cli.helpers import _with_func, _small, _oslr, _catches, _all_help


def test_main__ctrl_c_anywhere_is_one_line_and_exit_130(capsys, monkeypatch):
    import oslr.cli as cli

    def interrupted(args):
        raise KeyboardInterrupt
    monkeypatch.setattr(cli.commands, "cmd_list", interrupted)
    parser = cli.make_parser
    monkeypatch.setattr(cli, "make_parser", lambda: _with_func(parser(), interrupted))
    assert main(["list"]) == 130
    assert capsys.readouterr().err.strip().count("\n") == 0


def test_quiet_when_the_reader_leaves__141_and_stdout_on_dev_null(monkeypatch, tmp_path):
    import os
    import sys

    from oslr import cli

    # stdout on a file of its own (a real descriptor, as a pipe's would be)
    out = open(tmp_path / "out", "w")
    monkeypatch.setattr(sys, "stdout", out)

    def broken():
        raise BrokenPipeError(32, "Broken pipe")

    try:
        assert cli._quiet_when_the_reader_leaves(broken) == 141
        # the descriptor now writes to /dev/null: the interpreter's last flush cannot fail
        null, now = os.stat(os.devnull), os.fstat(out.fileno())
        assert (now.st_dev, now.st_ino, now.st_rdev) == (null.st_dev, null.st_ino, null.st_rdev)
    finally:
        out.close()
    out = open(tmp_path / "out2", "w")
    monkeypatch.setattr(sys, "stdout", out)
    try:
        def fine():
            print("written", end="")
            return 3

        assert cli._quiet_when_the_reader_leaves(fine) == 3  # the status, the output flushed
        assert (tmp_path / "out2").read_text() == "written"
    finally:
        out.close()


def test_entry__handlers_first_then_main_whose_status_it_exits_with(monkeypatch):
    from oslr import cli

    calls = []
    monkeypatch.setattr(cli, "_install_signal_handlers", lambda: calls.append("handlers"))
    monkeypatch.setattr(cli, "main", lambda: calls.append("main") or 7)
    with pytest.raises(SystemExit) as stop:
        cli.entry()
    assert stop.value.code == 7 and calls == ["handlers", "main"]


def test_oslr_command__a_reader_that_left_is_no_traceback_and_status_141():
    """`oslr list | head`: the pipe's reader gone before we write (its read end closed here, so
    the first write fails whatever the timing) ends quietly as a SIGPIPE'd tool would."""
    import os
    import subprocess
    import sys

    read_fd, write_fd = os.pipe()
    os.close(read_fd)
    try:
        p = subprocess.run([sys.executable, "-m", "oslr.cli", "list"], stdout=write_fd,
                           stderr=subprocess.PIPE, text=True, timeout=120, env=subprocess_env())
    finally:
        os.close(write_fd)
    assert p.returncode == 141, p.stderr
    assert p.stderr == ""


@pytest.mark.parametrize("signame,code", [("SIGTERM", 143), ("SIGHUP", 129), ("SIGINT", 130)])
def test_oslr_command__a_signal_at_start_up_is_one_line_and_its_exit_status(tmp_path, signame,
                                                                           code):
    import signal
    import time

    p = _oslr(["run", "--out", str(tmp_path / "d"), "--no-progress"])
    # as soon as the handler is installed (first thing, before the heavy imports: a signal
    # before that ends Python with the system's default, whatever the program): the signal
    # then lands inside the imports or the study's set-up
    signum = getattr(signal, signame)
    deadline = time.time() + 60
    while not _catches(p.pid, signal.SIGTERM):  # the last of the three handlers installed
        assert time.time() < deadline and p.poll() is None, "no handler installed"
        time.sleep(0.005)
    p.send_signal(signum)
    _, err = p.communicate(timeout=60)
    assert p.returncode == code, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert lines[-1].startswith(f"oslr: stopped by {signame} (exit status {code})"), err
    assert "Traceback" not in err


@pytest.mark.slow  # keeps the default run under 5 min (CI runs it with -m slow)
@pytest.mark.parametrize("signame,code", [
    ("SIGTERM", 143),
    pytest.param("SIGHUP", 129, marks=pytest.mark.slow),
    pytest.param("SIGINT", 130, marks=pytest.mark.slow)])
def test_oslr_command__a_signal_mid_compile_is_one_line_and_its_exit_status(tmp_path, signame,
                                                                           code):
    import signal

    # the study's header is printed after the checks, just before the first learner is traced
    # and compiled: the signal lands in tracing or in XLA's compiler (C++, no Python frame)
    p = _oslr([*_small(horizon=200, chunk=50), "--out", str(tmp_path / "d")])
    line = p.stderr.readline()
    while line and not line.startswith("oslr run: "):
        line = p.stderr.readline()
    assert line, "the study never started"
    p.send_signal(getattr(signal, signame))
    _, err = p.communicate(timeout=60)
    assert p.returncode == code, err
    assert err.strip().splitlines()[-1].startswith(f"oslr: stopped by {signame} (exit status "
                                                   f"{code})"), err
    assert "Traceback" not in err and not (tmp_path / "d" / "config.json").exists()


@pytest.mark.slow  # a subprocess study (9 s); Ctrl-C mid-study is tested in-process by default
@pytest.mark.parametrize("signame,code", [("SIGTERM", 143), ("SIGHUP", 129), ("SIGINT", 130)])
def test_oslr_command__a_signal_mid_study_keeps_the_chunks_and_the_rerun_resumes(tmp_path,
                                                                                 signame, code):
    import signal
    import time

    out = tmp_path / "d"
    args = [*_small(horizon=400, chunk=10), "--out", str(out)]
    p = _oslr(args)
    deadline = time.time() + 120
    while not list((out / ".checkpoints").rglob("checkpoint-*.npz")):  # a chunk is saved
        assert time.time() < deadline and p.poll() is None
        time.sleep(0.05)
    p.send_signal(getattr(signal, signame))
    _, err = p.communicate(timeout=60)
    assert p.returncode == code, err
    assert err.strip().splitlines()[-1] == (
        f"oslr: stopped by {signame} (exit status {code}); every finished chunk is saved in "
        f"{out / '.checkpoints'}: run the same command again (same --out) to resume.")
    assert not (out / "config.json").exists()
    p = _oslr(args)
    outs, err = p.communicate(timeout=300)
    assert p.returncode == 0 and "resuming" in err, err


def test_make_parser__program_name_flags_and_help_texts():
    from oslr.cli import make_parser
    from oslr.registry import EXPERIMENTS

    parser = make_parser()
    assert parser.prog == "oslr" and parser.format_usage().startswith("usage: oslr ")
    sub = next(a for a in parser._actions if a.dest == "command").choices
    run_help = " ".join(sub["run"].format_help().split())
    assert "--json print the summary as JSON" in run_help
    assert "--n-arms N_ARMS arms (bandit problems)" in run_help
    exp_help = " ".join(sub["experiment"].format_help().split())
    assert "one of: " + ", ".join(EXPERIMENTS) in exp_help
    rep_help = " ".join(sub["reproduce"].format_help().split())
    assert "--list list the steps and their files" in rep_help
    args = parser.parse_args(["run", "--n-arms", "5", "--design", "correlated"])
    assert args.n_arms == 5 and args.design == "correlated"
    args = parser.parse_args(["experiment", "wll-redundant", "--hold-rates"])
    assert args.hold_rates is True
    args = parser.parse_args(["reproduce", "--out", "x", "--list"])
    assert (args.out, args.list) == ("x", True)
    assert parser.parse_args(["reproduce"]).out == "oslr-reproduce"


def test_install_signal_handlers__all_three_set_and_the_wakeup_pipe_non_blocking():
    import os
    import signal

    from oslr.cli import SIGNAL_EXIT, _install_signal_handlers

    names = list(SIGNAL_EXIT)
    before = {n: signal.getsignal(getattr(signal, n)) for n in names}
    old_fd = signal.set_wakeup_fd(-1)
    try:
        _install_signal_handlers()
        fd = signal.set_wakeup_fd(-1)
        assert fd >= 0 and not os.get_blocking(fd)
        for n in names:
            assert signal.getsignal(getattr(signal, n)) not in (before[n], signal.SIG_DFL)
        import threading  # the waiting thread, named for a stack dump

        assert any(t.name == "oslr-signals" and t.daemon for t in threading.enumerate())
    finally:
        for n, h in before.items():
            signal.signal(getattr(signal, n), h)
        signal.set_wakeup_fd(old_fd)


def test_backend__a_missing_jax_platform_is_one_line(capsys, monkeypatch):
    import jax

    def no_gpu():
        raise AssertionError  # what jax raises for JAX_PLATFORMS=cuda without a GPU

    monkeypatch.setattr(jax, "devices", no_gpu)
    monkeypatch.setenv("JAX_PLATFORMS", "cuda")
    for argv in (["run"], ["experiment", "kpm-pege", "--quick"], ["reproduce"]):
        assert main(argv) == 2
        assert capsys.readouterr().err == (
            "oslr: error: JAX cannot start the backend that JAX_PLATFORMS='cuda' asks for (no "
            "such device or plugin here); unset JAX_PLATFORMS (or set it to cpu), or install the "
            "jax build for that device.\n")
    assert main(["list", "--json"]) == 0  # listing needs no backend


def test_info__versions_backend_devices_x64_and_memory(capsys):
    assert main(["info", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["runtime"]["x64"] is False and data["runtime"]["backend"] == "cpu"
    assert main(["info"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith(f"oslr {data['oslr']} (commit {data['commit']}")
    assert lines[2] == "backend cpu (cpu), float64 mode off, XLA_FLAGS " + (
        data["runtime"]["xla_flags"] or "(none)")
    assert lines[3] == "device 0: cpu cpu" and lines[4].startswith("host: ")
    assert lines[5].startswith("packages: optax ")


def test_make_parser__the_new_commands_help_and_choices():
    from oslr.cli import make_parser

    parser = make_parser()
    sub = next(a for a in parser._actions if a.dest == "command").choices
    text = {name: " ".join(sub[name].format_help().split())
            for name in ("plot", "compare", "merge", "info", "run")}
    assert "--json print JSON" in text["compare"] and "--json print JSON" in text["info"]
    assert "folders written by oslr run" in text["merge"]
    assert "at T against a swept parameter" in " ".join(parser.format_help().split())
    assert "the best, on the same runs" in text["run"]
    assert "printed and compare.csv" in text["run"]
    assert parser.parse_args(["run", "--progress", "jsonl"]).progress == "jsonl"


def test_cli_help__every_help_text_as_pinned(request):
    # the words a user reads: every subcommand's --help, pinned in tests/cli/cli_help.txt (a change
    # there is deliberate: regenerate with `python -m tests.cli.test_main`)
    assert _all_help() == (Path(__file__).parent / "cli_help.txt").read_text()


def test_cli_texts__list_reproduce_list_look_lines_and_the_bar_postfix(capsys):
    from oslr.study import StudyProgress
    from oslr.study import look_line as _look_line

    assert main(["experiment", "--list", "--json"]) == 0
    assert {e["name"] for e in json.loads(capsys.readouterr().out)} >= {"arena", "wll-k"}
    assert main(["list"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "Problems:" in out
    assert main(["reproduce", "--list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert any(line.split()[:2] == ["arena", "arena"] for line in lines)
    assert _look_line(2, 5, ["b", "c"]) == "  look 2: 10 runs; undecided: b, c"
    assert _look_line(3, 5, []) == "  look 3: 15 runs; every comparison decided"
    import io

    progress = StudyProgress("bar", io.StringIO())
    progress.add(10)
    progress.for_learner("ogd-full")(5)
    assert progress.bar.postfix == "ogd-full" and progress.done == 5
    assert progress.bar.desc == "study" and progress.bar.unit == "round"
    progress.close()


def test_oslr_cli__importing_the_command_loads_nothing_heavy_before_its_handlers():
    # the handlers are installed by entry(), after `import oslr.cli`: that import must be light
    # (a signal in the first 0.1-0.35 s once met numpy's import, pulled in through oslr.checks)
    import subprocess
    import sys

    code = ("import json, sys, oslr.cli; print(json.dumps(sorted(m for m in ('numpy', 'jax', "
            "'pandas', 'scipy', 'oslr.checks') if m in sys.modules)))")
    loaded = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True,
                                       text=True, check=True).stdout)
    assert loaded == []


def test_info__a_missing_jax_platform_is_one_line(capsys, monkeypatch):
    import jax

    def no_gpu():
        raise RuntimeError("Unable to initialize backend 'cuda'\nmore lines")

    monkeypatch.setattr(jax, "devices", no_gpu)
    monkeypatch.setenv("JAX_PLATFORMS", "gpu")
    assert main(["info"]) == 2
    assert capsys.readouterr().err == (
        "oslr: error: JAX cannot start the backend that JAX_PLATFORMS='gpu' asks for (Unable to "
        "initialize backend 'cuda'); unset JAX_PLATFORMS (or set it to cpu), or install the "
        "jax build for that device.\n")


def test_main__a_warning_is_one_line_without_its_source(capsys, monkeypatch):
    import sys
    import warnings

    import oslr.cli as cli

    def warns(args):
        warnings.warn("checkpoint x is damaged; resuming from round 10 instead",
                      RuntimeWarning, stacklevel=2)
        return 0

    monkeypatch.setattr(warnings, "formatwarning", warnings.formatwarning)
    monkeypatch.setattr(cli.commands, "cmd_list", warns)
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        # shown as Python shows warnings outside pytest (which records them instead)
        warnings.showwarning = lambda msg, cat, fn, ln, file=None, line=None: sys.stderr.write(
            warnings.formatwarning(msg, cat, fn, ln, line))
        assert main(["list"]) == 0
    assert capsys.readouterr().err == ("oslr: warning: checkpoint x is damaged; resuming from "
                                       "round 10 instead\n")


def test_oslr__version_and_python_dash_m(capsys):
    import subprocess
    import sys

    import oslr

    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0 and capsys.readouterr().out == f"oslr {oslr.__version__}\n"
    done = subprocess.run([sys.executable, "-m", "oslr", "--version"], capture_output=True,
                          text=True, env=subprocess_env(), check=True)
    assert done.stdout == f"oslr {oslr.__version__}\n"


if __name__ == "__main__":  # regenerate the pinned help texts
    (Path(__file__).parent / "cli_help.txt").write_text(_all_help())
