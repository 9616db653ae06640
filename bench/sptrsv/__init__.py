"""Parallel sparse triangular solve: DAG, schedules, schedulers, kernels driver (sptrsv-elasticity paper)."""
