"""What the benchmarks ran on, and the machine's limit: a large float32 matmul measured in the same
process (the peak the learners' GFLOP/s are compared with)."""

from __future__ import annotations

import datetime
import os
import platform
import statistics
import time

import jax
import jax.numpy as jnp
import jaxlib
import numpy as np


def machine() -> dict:
    """CPU model, cores, device, versions and the date (stamped on every result file)."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    dev = jax.devices()[0]
    return {
        "cpu": cpu, "cores": os.cpu_count(), "device": str(dev), "device_kind": dev.device_kind,
        "platform": dev.platform, "jax": jax.__version__, "jaxlib": jaxlib.__version__,
        "numpy": np.__version__, "python": platform.python_version(),
        "date": datetime.date.today().isoformat(),
    }


def cores() -> str:
    """The cores this process runs on (`OSLR_CPUS`, `oslr.cpus`), listed one by one."""
    if not hasattr(os, "sched_getaffinity"):
        return f"all {os.cpu_count()}"
    return ",".join(map(str, sorted(os.sched_getaffinity(0))))


def matmul_peak(n: int = 2048, repeats: int = 5) -> float:
    """GFLOP/s of an (n x n) @ (n x n) float32 matmul (2 n^3 flops), median of `repeats`."""
    a = jax.random.normal(jax.random.key(0), (n, n), jnp.float32)
    f = jax.jit(jnp.matmul).lower(a, a).compile()
    jax.block_until_ready(f(a, a))
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        jax.block_until_ready(f(a, a))
        times.append(time.perf_counter() - t0)
    return 2.0 * n**3 / statistics.median(times) / 1e9
