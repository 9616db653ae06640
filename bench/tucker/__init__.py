"""Distributed sparse Tucker (HOOI): tensors, distribution schemes, metrics (tucker-lite paper).

Layers, each importing only those before it: the data layer's SparseTensor (``spbench.datasets.sparse_tensor``) ·
``schemes`` (one function per scheme, each returning a
:class:`~spbench.tucker.schemes.Distribution`) · ``comm`` (row owners σ_n) · ``metrics`` (E_max,
R_sum, R_max, volumes, memory). Nothing here imports MPI.
"""

#: what a run executes (the sweep side, the MPI worker, HOOI, the simulate path and the schemes),
#: relative to this folder (the tensor container by module name): the sources `code_version` hashes; benchmarks (*_bench, mpi_microbench),
#: calibrate, model_validation and hooi_reference are not among them
RUN_SOURCES = ("__init__.py", "experiment.py", "mpi/launch.py", "mpi/job_process.py", "mpi/job_progress.py",
               "mpi/worker.py", "mpi/task_loop.py", "mpi/distribute.py", "hooi/loop.py", "hooi/factor_start.py",
               "hooi/lanczos.py", "hooi/counter_random.py", "mpi/mode_plan.py", "mpi/collectives.py",
               "spbench.datasets.sparse_tensor", "hooi/ttm.py", "hooi/csf.py", "mpi/comm.py", "metrics.py",
               "rank_usage.py", "model/cost_model.py", "model/mode_load.py", "schemes/*.py",
               "stream_metrics.py", "spbench.datasets.tensor_stats", "hooi/__init__.py",
               "mpi/__init__.py", "model/__init__.py")
