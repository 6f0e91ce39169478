"""Speed measurements of oslr against float64 NumPy loops, run in the same process."""
