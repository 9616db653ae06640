"""Distributed sparse Tucker (HOOI): tensors, distribution schemes, metrics (tucker-lite paper).

Layers (STYLE.md): ``tensor`` (SparseTensor, slices) · ``schemes`` (one function per scheme,
each returning a :class:`~spbench.tucker.schemes.Distribution`) · ``comm`` (row owners σ_n) ·
``metrics`` (E_max, R_sum, R_max, volumes, memory). Nothing here imports MPI.
"""
