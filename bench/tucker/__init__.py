"""Distributed sparse Tucker (HOOI): tensors, distribution schemes, metrics (tucker-lite paper).

Layers, each importing only those before it: the data layer's SparseTensor (``spbench.datasets.sparse_tensor``) ·
``schemes`` (one function per scheme, each returning a
:class:`~spbench.tucker.schemes.Distribution`) · ``comm`` (row owners σ_n) · ``metrics`` (E_max,
R_sum, R_max, volumes, memory). Nothing here imports MPI.
"""

#: what a run executes (the sweep side, the MPI worker, HOOI, the simulate path and the schemes),
#: relative to this folder (the tensor container by module name): the sources `code_version` hashes; benchmarks (*_bench, mpi_microbench),
#: calibrate, model_validation and hooi_reference are not among them
RUN_SOURCES = ("__init__.py", "runner.py", "launch.py", "job_process.py", "job_progress.py", "worker.py",
               "task_loop.py", "distribute.py", "hooi.py", "factor_start.py", "lanczos.py", "counter_random.py",
               "mode_plan.py", "mpi.py", "spbench.datasets.sparse_tensor", "ttm.py", "csf.py", "comm.py", "metrics.py",
               "rank_usage.py", "model.py", "mode_load.py", "lite_bound.py", "schemes/*.py",
               "stream_metrics.py", "spbench.datasets.tensor_stats")
