"""The benchmark suite runs (tiny sizes): rows exist and ratios are finite. No speed asserted."""

import math

from benchmarks.throughput import CASES, main


def test_benchmarks__smoke_produces_a_finite_row_per_case(tmp_path):
    rows = main(["--smoke", "--out", str(tmp_path)])
    assert [r["learner"] for r in rows] == [c[0] for c in CASES]
    assert all(math.isfinite(r["ratio"]) and r["ratio"] > 0 for r in rows)
    assert (tmp_path / "RESULTS.md").read_text().count("|") > 10
