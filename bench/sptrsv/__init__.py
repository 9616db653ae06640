"""Parallel sparse triangular solve: DAG, schedules, schedulers, kernels driver (sptrsv-elasticity paper)."""

#: what a run executes (the runtime path and the schedulers), relative to this folder: the sources
#: `code_version` hashes; benchmarks (kernel_bench, order_bench) and calibrate are not among them
RUN_SOURCES = ("__init__.py", "experiment.py", "execute.py", "schedule_only.py", "model.py", "dag.py",
               "schedule.py", "schedulers/*.py")
