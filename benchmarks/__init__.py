"""Speed measurements of oslr against float64 NumPy loops, run in the same process."""

import os as _os

# compile seconds are among what the benchmarks measure: no persistent compilation cache, so a
# second invocation compiles as the first did (`oslr.compile_cache`)
_os.environ.setdefault("OSLR_COMPILE_CACHE", "off")
