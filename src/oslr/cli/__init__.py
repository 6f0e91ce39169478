"""The `oslr` command: `entry` installs the signal handlers, then `main` parses the command line
(`oslr.cli.parser`) and runs a command (`oslr.cli.run` for `oslr run`, `oslr.cli.commands` for
the others), turning bad input and OS errors into one line and exit status 2.

    oslr list | info | run | experiment | reproduce | plot | compare | merge  (oslr --help)

With no arguments `oslr run` runs a small default study (sparse linear regression, d = 16, k = 3,
the two OGD references, 2000 rounds x 100 runs). Every input is checked before anything is traced.
Importing this package loads nothing heavy (no numpy, no JAX): the handlers come first.
"""

from __future__ import annotations

import os
import shlex
import sys
import warnings

from oslr.cli import commands, run
from oslr.cli.parser import make_parser
from oslr.cli.run import _RESUME, _RESUME_NOTE
from oslr.study import UsageError


def main(argv: list[str] | None = None) -> int:
    parser = make_parser()
    args = parser.parse_args(argv)
    args.command_line = shlex.join(["oslr", *(sys.argv[1:] if argv is None else argv)])
    from oslr.problems.datasets import DataError

    warnings.formatwarning = _one_line_warning
    try:
        from oslr import cpus

        cpus.from_env()  # before anything starts JAX's backend (a plugin may)
        _import_plugins(getattr(args, "imports", None))
        # (not before jax.distributed.initialize, which must come before any backend use)
        if (args.func in (run.cmd_run, commands.cmd_experiment, commands.cmd_reproduce,
                          commands.cmd_info)
                and not getattr(args, "distributed", False)):
            _check_backend()
        if args.func in (run.cmd_run, commands.cmd_experiment, commands.cmd_reproduce):
            from oslr.compile_cache import use_compile_cache

            use_compile_cache()
        return args.func(args)
    except BrokenPipeError:  # the reader left: `_quiet_when_the_reader_leaves`
        raise
    except (ValueError, KeyError, DataError, OSError) as err:
        # bad input or a file that cannot be written or read: a clear message, no traceback
        print(f"oslr: error: {_one_line(err)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # one line, not JAX's stack
        print("\noslr: interrupted. " + _RESUME_NOTE, file=sys.stderr)
        return 130


def _one_line(err: BaseException) -> str:
    """The message of an input or OS error, on one line."""
    from oslr.atomic import AtomicWriteError, os_error_message

    if isinstance(err, AtomicWriteError):
        return err.strerror or str(err)
    if isinstance(err, OSError) and err.errno is None and err.filename is None:
        return str(err)  # oslr's own sentence (e.g. `oslr.spill.SpillError`)
    if isinstance(err, OSError):
        where = err.filename if err.filename is not None else "a file"
        return os_error_message(err, where, verb="use")
    return str(err.args[0] if err.args else err)


def _one_line_warning(message, category, filename, lineno, line=None) -> str:
    """`warnings`' format for the command: `oslr: warning: MESSAGE`, with no source line."""
    return f"oslr: warning: {message}\n"


def _check_backend() -> None:
    """One line, not JAX's traceback, when JAX_PLATFORMS names a backend this machine lacks."""
    import jax

    try:
        jax.devices()
    except (RuntimeError, AssertionError) as err:
        wanted = os.environ.get("JAX_PLATFORMS", "")
        why = str(err).split("\n")[0] or "no such device or plugin here"
        raise UsageError(f"JAX cannot start the backend that JAX_PLATFORMS={wanted!r} asks for "
                         f"({why}); unset JAX_PLATFORMS (or set it to cpu), or install the "
                         "jax build for that device.") from None


def _import_plugins(modules: list[str] | None) -> None:
    """Import the modules named by --import (they call oslr.register_learner)."""
    import importlib

    if modules and os.getcwd() not in sys.path:  # a module in the current folder
        sys.path.insert(0, os.getcwd())
    for name in modules or []:
        try:
            importlib.import_module(name)
        except ImportError as err:
            raise UsageError(f"--import {name}: cannot import it ({err}); is it on PYTHONPATH "
                             "or installed?") from None


#: exit status after each signal (128 + its number, as a shell reports it): a batch scheduler
#: requeues on it (e.g. SLURM's --requeue), and the same command then resumes
SIGNAL_EXIT = {"SIGINT": 130, "SIGHUP": 129, "SIGTERM": 143}


def _install_signal_handlers() -> None:
    """SIGINT, SIGTERM and SIGHUP end the process at once with one line and status 128 + the
    signal's number, whatever it is doing (importing, compiling, inside a JAX call or a
    callback): the C-level handler writes the signal to a pipe (`signal.set_wakeup_fd`) and a
    thread waiting on it prints the line and calls `os._exit`. Nothing is lost that a SIGKILL
    would not lose: every saved chunk and file is written crash-safely (`oslr.atomic`), and a
    half-written temporary is never read."""
    import signal
    import threading

    read_fd, write_fd = os.pipe()
    os.set_blocking(write_fd, False)
    signal.set_wakeup_fd(write_fd, warn_on_full_buffer=False)
    numbers = {getattr(signal, name): code for name, code in SIGNAL_EXIT.items()}
    for signum in numbers:
        signal.signal(signum, lambda *_: None)  # no KeyboardInterrupt: the thread below acts

    def wait() -> None:
        while True:
            data = os.read(read_fd, 1)
            if data and data[0] in numbers:
                name = signal.Signals(data[0]).name
                try:
                    sys.stderr.write(f"\noslr: stopped by {name} (exit status "
                                     f"{numbers[data[0]]}); {_RESUME['note'] or _RESUME_NOTE}\n")
                    sys.stderr.flush()
                finally:
                    os._exit(numbers[data[0]])

    threading.Thread(target=wait, name="oslr-signals", daemon=True).start()


def entry() -> None:
    """The `oslr` console command: signal handlers first, then `main`."""
    _install_signal_handlers()
    sys.exit(_quiet_when_the_reader_leaves(main))


def _quiet_when_the_reader_leaves(run) -> int:
    """`run()`'s exit status; when what reads our output has gone (`oslr list | head`), no
    traceback: stop as a tool killed by SIGPIPE does (status 141), with stdout sent to
    /dev/null so that the interpreter's last flush finds no closed pipe either."""
    try:
        code = run()
        sys.stdout.flush()
        return code
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
