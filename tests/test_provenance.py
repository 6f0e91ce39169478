"""Where a result came from (`oslr.provenance`): the version and the git commit."""

import itertools
import re
import subprocess
from pathlib import Path

import pytest

import oslr
from oslr import provenance


def test_commit__the_checkouts_head_and_whether_its_source_has_changes():
    got = provenance.commit()
    head = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True,
                          cwd=provenance.__file__.rsplit("/", 1)[0]).stdout.strip()
    assert re.fullmatch(r"[0-9a-f]{40}", got["commit"]) and got["commit"] == head
    assert isinstance(got["dirty"], bool)


@pytest.mark.parametrize("error", [OSError(2, "no git"),
                                   subprocess.CalledProcessError(128, ["git"])])
def test_commit__outside_a_git_checkout_says_so_with_the_version(monkeypatch, error):
    def fail(*args, **kwargs):
        raise error

    monkeypatch.setattr(provenance.subprocess, "run", fail)
    assert provenance.commit() == {
        "commit": f"unknown (oslr {oslr.__version__}, not a git checkout)", "dirty": None}
    st = provenance.stamp()
    assert {k: st[k] for k in ("oslr", "commit", "dirty")} == {"oslr": oslr.__version__,
                                                              **provenance.commit()}


def test_commit__dirty_when_git_lists_a_change(monkeypatch):
    outputs = itertools.cycle(["abc\n", " M src/oslr/sim.py\n"])
    calls = []
    package = Path(provenance.__file__).resolve().parent

    def fake(args, **kwargs):
        calls.append(args)
        # run in the package's own folder: the checkout holding this oslr, not the caller's
        assert kwargs == {"cwd": package, "capture_output": True, "text": True, "check": True}
        return subprocess.CompletedProcess(args, 0, stdout=next(outputs))

    monkeypatch.setattr(provenance.subprocess, "run", fake)
    assert provenance.commit() == {"commit": "abc", "dirty": True}
    assert calls == [["git", "rev-parse", "HEAD"], ["git", "status", "--porcelain", "--", "."]]
    assert list(provenance.stamp())[0] == "oslr"
    outputs = itertools.cycle(["abc\n", "\n"])  # nothing listed: clean
    assert provenance.commit() == {"commit": "abc", "dirty": False}


def test_runtime__versions_backend_and_the_float64_mode():
    import jax
    import jaxlib

    from tests.helpers import x64

    rt = provenance.runtime()
    assert rt == {"jax": jax.__version__, "jaxlib": jaxlib.__version__,
                  "backend": jax.devices()[0].platform,
                  "device_kind": jax.devices()[0].device_kind,
                  "xla_flags": rt["xla_flags"], "x64": bool(jax.config.jax_enable_x64)}
    with x64():
        assert provenance.runtime()["x64"] is True


def test_stamp_and_info__what_a_result_folder_and_a_bug_report_record():
    import platform

    import numpy as np

    st = provenance.stamp()
    assert set(st) == {"oslr", "commit", "dirty", "python", "numpy", "runtime"}
    assert st["python"] == platform.python_version() and st["numpy"] == np.__version__
    data = provenance.info()
    assert {k: data[k] for k in st if k != "dirty"} == {k: st[k] for k in st if k != "dirty"}
    assert data["devices"][0]["platform"] == st["runtime"]["backend"]
    assert data["cpu_count"] >= 1 and data["host_memory_gb"] > 0
    assert data["packages"]["optax"] is not None  # a dependency: always installed
    assert set(data["packages"]) == set(provenance._INFO_PACKAGES)


def test_runtime__records_the_xla_flags_of_the_environment(monkeypatch):
    monkeypatch.setenv("XLA_FLAGS", "--xla_cpu_foo=1")
    assert provenance.runtime()["xla_flags"] == "--xla_cpu_foo=1"
    monkeypatch.delenv("XLA_FLAGS")
    assert provenance.runtime()["xla_flags"] == ""


def test_info__device_memory_in_gib_to_one_decimal_and_missing_packages_as_none(monkeypatch):
    import os
    from types import SimpleNamespace

    import jax

    dev = SimpleNamespace(id=0, platform="gpu", device_kind="H200",
                          memory_stats=lambda: {"bytes_limit": int(3.26 * 2**30)})
    cpu = SimpleNamespace(id=1, platform="cpu", device_kind="cpu", memory_stats=lambda: None)
    monkeypatch.setattr(jax, "devices", lambda: [dev, cpu])
    monkeypatch.setattr(provenance, "_INFO_PACKAGES", ("optax", "no-such-package-here"))
    data = provenance.info()
    assert data["devices"] == [{"id": 0, "platform": "gpu", "kind": "H200", "memory_gb": 3.3},
                               {"id": 1, "platform": "cpu", "kind": "cpu", "memory_gb": None}]
    assert data["packages"]["no-such-package-here"] is None and data["packages"]["optax"]
    host = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") / 2**30
    assert data["host_memory_gb"] == round(host, 1)
