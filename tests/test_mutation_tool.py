"""tools/mutation.py's pure helpers (the mutation runs themselves are a developer's command)."""

import importlib.util
from pathlib import Path

_spec = importlib.util.spec_from_file_location(
    "mutation_tool", Path(__file__).resolve().parents[1] / "tools" / "mutation.py")
mutation = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(mutation)


def test_function_of__functions_methods_and_private_names():
    assert mutation.function_of("oslr.stats.x_compare__mutmut_3") == "compare"
    assert mutation.function_of("oslr.sim.xǁStudyǁrun__mutmut_12") == "Study.run"
    assert mutation.function_of("oslr.experiments.doc_tables.x__signed__mutmut_2") == "_signed"
    assert mutation.function_of("oslr.a.x_f__mutmut_x__mutmut_7") == "f__mutmut_x"
