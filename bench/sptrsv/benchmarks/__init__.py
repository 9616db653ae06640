"""`spbench bench` for SpTrSV: the kernels and barriers alone (serial, barrier, schedulers, slope), the
locality reordering (order) and the reference HDagg/SpMP schedules beside ours (sptrsv-elasticity §5–6)."""
