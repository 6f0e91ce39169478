#: The XLA flags of the suite's fast build (tests/conftest.py adds them unless
#: OSLR_TEST_BUILD=default; tests.helpers.default_build_env takes them out for a child process):
#: optimisation level 0, programs compiling about twice as fast. No imports here: conftest reads
#: this before JAX starts.
FAST_BUILD_FLAGS = (
    "--xla_backend_optimization_level=0",
    "--xla_llvm_disable_expensive_passes=true",
)
