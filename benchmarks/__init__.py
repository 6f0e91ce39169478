"""Speed measurements of oslr against float64 NumPy loops, run in the same process."""

import os as _os

# compile seconds are among what the benchmarks measure: no persistent compilation cache, so a
# second invocation compiles as the first did (`oslr.compile_cache`)
_os.environ.setdefault("OSLR_COMPILE_CACHE", "off")

# OSLR_CPUS (`oslr.cpus`) applies to every benchmark: the cores chosen before any of them starts
# JAX's backend, so XLA's pools are sized to them (`OSLR_CPUS=0 python -m benchmarks.X`)
from oslr import cpus as _cpus  # noqa: E402

_cpus.from_env()
