"""The Tucker cost model's calibration on this machine (the TTM kernels' fits, the relative NNLS fit,
the MPI micro-benchmark) and its validation against measured runs; recorded in a sweep's meta.json,
so its code is no part of a run's code version."""
