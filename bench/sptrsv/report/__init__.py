"""The SpTrSV report of `spbench profile`: Figures 6.1, 5.1, 1.1 and 6.2, Tables 6.1–6.3 and the
summary beside the paper's printed numbers (sptrsv-elasticity §1, §5–6)."""
