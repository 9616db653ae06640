"""Distributed sparse Tucker (HOOI): tensors, distribution schemes, metrics (tucker-lite paper).

Layers, each importing only those before it: the data layer's SparseTensor (``spbench.datasets.sparse_tensor``) ·
``schemes`` (one function per scheme, each returning a
:class:`~spbench.tucker.schemes.Distribution`) · ``mpi.comm`` (row owners σ_n) · ``metrics`` (E_max,
R_sum, R_max, volumes, memory). Nothing here imports MPI.
"""
