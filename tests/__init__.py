#: The XLA flags of the suite's fast build (tests/conftest.py adds them unless
#: OSLR_TEST_BUILD=default; tests.helpers.default_build_env takes them out for a child process):
#: optimisation level 0, programs compiling about twice as fast, and XLA:CPU's older fusion
#: emitters (the default run's times under each build: benchmarks/HISTORY.md). No imports
#: here: conftest reads this before JAX starts.
FAST_BUILD_FLAGS = (
    "--xla_backend_optimization_level=0",
    "--xla_llvm_disable_expensive_passes=true",
    "--xla_cpu_use_fusion_emitters=false",
)

#: XLA's own values of those three options (the build users get): `tests.helpers.users_build`
#: compiles one program with them in this process (tests/test_helpers.py checks that its bits
#: equal a child's compiled under the default build).
USERS_BUILD_OPTIONS = {
    "xla_backend_optimization_level": 3,
    "xla_llvm_disable_expensive_passes": False,
    "xla_cpu_use_fusion_emitters": True,
}
